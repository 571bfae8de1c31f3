"""The shape the codebase holds (docs/architecture.md, "Import rules"): checked on the source tree.

- the core names no agent (only the default provider's name, and model names in canned responses);
- no module of the core or of a provider package is over 800 lines (over 500 is printed as a review flag), and
  each says what it is;
- nothing that runs outside tests imports `harness_core.testing`;
- provider packages and the example third-party provider import Harness only through the façades;
- the viewer (web/harness_view) uses the core's public modules only, and its module docstrings fit in 5 lines.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "harness_core"
PACKAGES = sorted(
    p for p in [*ROOT.glob("providers/*/harness_*"), *ROOT.glob("examples/*/src/*")] if p.is_dir()
)
VIEWER = ROOT / "web" / "harness_view"
VIEWER_API = {"harness_core", "harness_core.store", "harness_core.jobs", "harness_core.batch"}
"""What the viewer may import of the core: the run API's façade, the run store, background jobs, batches."""
MAX_LINES = 800
REVIEW_LINES = 500
FACADES = {
    "harness_core",
    "harness_core.provider",
    "harness_core.offline",
    "harness_core.scripted.scenarios",
    "harness_core.scripted.backends",
}
_AGENT = re.compile(r"codex|claude|qwen|gemini[-_ ]?cli", re.IGNORECASE)
_MODEL_NAMES = re.compile(r"claude-(?:sonnet|opus|haiku)-[\w.-]+", re.IGNORECASE)
_DEFAULT_LINE = re.compile(r'^DEFAULT_PROVIDER = "codex-appserver"$')


def _modules(*roots: Path) -> list[Path]:
    return sorted(p for root in roots for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def _is_test_code(path: Path) -> bool:
    return "testing" in path.parts or "tests" in path.parts


def _imports(path: Path) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
    return found


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_core_names_no_agent() -> None:
    offending = [
        f"{_rel(path)}:{n}: {line.strip()}"
        for path in _modules(CORE)
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if _AGENT.search(_MODEL_NAMES.sub("", line)) and not _DEFAULT_LINE.match(line)
    ]
    assert not offending, "agent-specific code or text in harness_core (move it to its provider):\n" + "\n".join(
        offending
    )


def test_core_tests_name_no_agent() -> None:
    """The core's own tests use the scripted provider and generic fakes; agent tests live with the agent."""
    offending = [
        f"{_rel(path)}:{n}: {line.strip()}"
        for path in _modules(ROOT / "tests")
        if path.name != "test_architecture.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if _AGENT.search(_MODEL_NAMES.sub("", line)) and "DEFAULT_PROVIDER" not in line
    ]
    assert not offending, "agent-specific core tests (move them to the provider's tests):\n" + "\n".join(offending)


@pytest.mark.parametrize("root", [CORE, *PACKAGES, VIEWER], ids=lambda p: _rel(p))
def test_modules_are_small_and_say_what_they_are(root: Path) -> None:
    sizes = {p: len(p.read_text().splitlines()) for p in _modules(root)}
    flagged = [f"{_rel(p)} ({n} lines)" for p, n in sizes.items() if REVIEW_LINES < n <= MAX_LINES]
    if flagged:  # a signal, not a rule: one concept may need the room
        print(f"modules over {REVIEW_LINES} lines (fine if they hold one concept): {', '.join(flagged)}")
    big = [f"{_rel(p)} ({n} lines)" for p, n in sizes.items() if n > MAX_LINES]
    assert not big, f"modules over {MAX_LINES} lines (a second concept moved in: split by concept): {', '.join(big)}"
    silent = [
        _rel(p) for p in _modules(root) if p.stat().st_size and ast.get_docstring(ast.parse(p.read_text())) is None
    ]
    assert not silent, f"modules without a docstring saying their layer: {', '.join(silent)}"


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


def test_the_viewer_uses_the_public_api_and_says_what_it_is_in_five_lines() -> None:
    past = [f"{_rel(path)}:{line}: {module}" for path in _modules(VIEWER) for line, module in _imports(path)
            if module.startswith("harness_core") and module not in VIEWER_API]
    assert not past, f"the viewer imports past the public API ({', '.join(sorted(VIEWER_API))}):\n" + "\n".join(past)
    long = [_rel(p) for p in _modules(VIEWER)
            if len((ast.get_docstring(ast.parse(p.read_text())) or "").splitlines()) > 5]
    assert not long, f"module docstrings over 5 lines: {', '.join(long)}"
