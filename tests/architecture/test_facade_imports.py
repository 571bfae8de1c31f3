"""What each distribution imports of another: providers and the example provider import Harness only through
the façades, executors through theirs, the viewer through the core's public modules; nothing that runs outside
tests imports `harness_core.testing`; nothing but the `harness view` command (lazily) imports the viewer.
Reads the source tree with `ast`; imports no Harness module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.architecture.graph import (
    CORE,
    EXECUTORS,
    OBSERVERS,
    PACKAGES,
    VIEWER,
    _imports,
    _is_test_code,
    _modules,
    _rel,
)

VIEWER_API = {"harness_core", "harness_core.store", "harness_core.jobs", "harness_core.batch"}
"""What the viewer may import of the core: the run API's façade, the run store, background jobs, batches."""


FACADES = {
    "harness_core",
    "harness_core.provider",
    "harness_core.offline",
    "harness_core.scripted.scenarios",
    "harness_core.scripted.backends",
    "harness_core.scripted.command",  # fake CLIs: a scripted command's sleep as a real process
}
EXECUTOR_FACADES = {"harness_core", "harness_core.batch", "harness_core.store"}
"""What an executor package imports of Harness: the run API's façade, the batch API (its `Executor` contract and
`play_attempt`) and the run store (where an attempt's log goes)."""
OBSERVER_FACADES = {"harness_core", "harness_core.provider", "harness_core.spans", "harness_core.redaction"}
"""What an observer package imports of Harness: the façades (the hooks' types, `hookimpl`), a run's span records
(`spans`, which `harness trace` prints too) and the redaction policy (a run's secrets, to scrub what it exports)."""


def test_nothing_but_the_view_command_imports_the_viewer() -> None:
    """The viewer is its own distribution on top of the core: the core, the providers and the executors never
    import it, except the body of the `harness view` command (`cli/view/serving.py`), which only that command
    imports, when it runs (it says how to install the viewer if missing)."""
    serving = CORE / "cli" / "view" / "serving.py"
    offending = [
        f"{_rel(path)}:{line}: {module}"
        for path in _modules(CORE, *PACKAGES, *EXECUTORS, *OBSERVERS)
        for line, module in _imports(path)
        if (module.split(".")[0] == "harness_view" and path != serving)
        or (module == "harness_core.cli.view.serving" and path != CORE / "cli" / "view" / "commands.py")
    ]
    assert not offending, "modules importing the viewer (harness_view):\n" + "\n".join(offending)
    commands = ast.parse((CORE / "cli" / "view" / "commands.py").read_text())
    top = [n.module or "" for n in commands.body if isinstance(n, ast.ImportFrom)]
    assert "harness_core.cli.view.serving" not in top, "cli/view/commands.py imports the viewer at the top: import " \
        "it in the command (start-up speed)"


def test_nothing_outside_tests_imports_the_testing_package() -> None:
    offending = [
        f"{_rel(path)}:{line}: {module}"
        for path in _modules(CORE, *PACKAGES)
        if not _is_test_code(path) and not path.is_relative_to(CORE / "testing")
        for line, module in _imports(path)
        if module == "harness_core.testing" or module.startswith("harness_core.testing.")
    ]
    assert not offending, "runtime code importing harness_core.testing:\n" + "\n".join(offending)


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: _rel(p))
def test_providers_import_harness_only_through_the_facades(package: Path) -> None:
    offending = []
    for path in _modules(package):
        allowed = FACADES | ({"harness_core.testing"} if _is_test_code(path) else set())
        for line, module in _imports(path):
            if module.startswith("harness_core") and module not in allowed and not (
                _is_test_code(path) and module.startswith("harness_core.testing.")
            ):
                offending.append(f"{_rel(path)}:{line}: {module}")
    assert not offending, (
        f"imports past the façades ({', '.join(sorted(FACADES))}); export what is needed from "
        "harness_core.provider instead:\n" + "\n".join(offending)
    )


@pytest.mark.parametrize("package", EXECUTORS, ids=lambda p: _rel(p))
def test_executors_import_harness_only_through_their_facades(package: Path) -> None:
    offending = [f"{_rel(path)}:{line}: {module}" for path in _modules(package) for line, module in _imports(path)
                 if module.startswith("harness_core") and module not in EXECUTOR_FACADES
                 and not (_is_test_code(path) and module.startswith("harness_core.testing"))]
    assert not offending, (f"imports past the executor façades ({', '.join(sorted(EXECUTOR_FACADES))}):\n"
                           + "\n".join(offending))


@pytest.mark.parametrize("package", OBSERVERS, ids=lambda p: _rel(p))
def test_observers_import_harness_only_through_their_facades(package: Path) -> None:
    offending = [f"{_rel(path)}:{line}: {module}" for path in _modules(package) for line, module in _imports(path)
                 if module.startswith("harness_core") and module not in OBSERVER_FACADES]
    assert not offending, (f"imports past the observer façades ({', '.join(sorted(OBSERVER_FACADES))}):\n"
                           + "\n".join(offending))


def test_nothing_imports_an_observer() -> None:
    """An observer is found through its entry point only: the core, the providers, the executors and the viewer never
    import it (the CLI's `--otel` sets the variable it reads)."""
    names = {p.name for p in OBSERVERS}
    offending = [f"{_rel(path)}:{line}: {module}" for path in _modules(CORE, *PACKAGES, *EXECUTORS, VIEWER)
                 for line, module in _imports(path) if module.split(".")[0] in names]
    assert not offending, "modules importing an observer package:\n" + "\n".join(offending)


def test_the_viewer_uses_the_public_api_and_says_what_it_is_in_five_lines() -> None:
    past = [f"{_rel(path)}:{line}: {module}" for path in _modules(VIEWER) for line, module in _imports(path)
            if module.startswith("harness_core") and module not in VIEWER_API]
    assert not past, f"the viewer imports past the public API ({', '.join(sorted(VIEWER_API))}):\n" + "\n".join(past)
    long = [_rel(p) for p in _modules(VIEWER)
            if len((ast.get_docstring(ast.parse(p.read_text())) or "").splitlines()) > 5]
    assert not long, f"module docstrings over 5 lines: {', '.join(long)}"
