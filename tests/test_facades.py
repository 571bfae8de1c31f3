"""A façade asked for a name it does not export says where the name is (the façade that exports it, a close name,
the internal module that defines it) in an ImportError, instead of a bare "cannot import name"; submodule imports,
private and dunder probes behave as on any module. Fresh interpreters: what a provider author's first import sees."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import harness_core
import harness_core.provider
from harness_core._facade import FACADES, FacadeNameError
from harness_core._moved import MOVED


def _import_error(statement: str) -> str:
    """The last line of what a fresh interpreter prints for `statement`, which must fail with an ImportError."""
    code = textwrap.dedent(f"""
        try:
            {statement}
        except ImportError as exc:
            print(type(exc).__name__, exc)
        else:
            print("imported")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


def test_a_name_of_another_facade_says_which_one() -> None:
    said = _import_error("from harness_core.provider import SCENARIOS")
    assert said.startswith("FacadeNameError harness_core.provider does not export 'SCENARIOS': import it from "
                           "harness_core.offline (`from harness_core.offline import SCENARIOS`)"), said
    said = _import_error("from harness_core import ProviderOptions")
    assert "import it from harness_core.provider" in said, said


def test_a_misspelt_name_gets_a_did_you_mean() -> None:
    assert _import_error("from harness_core.provider import RunContex") == (
        "FacadeNameError harness_core.provider has no name 'RunContex'; did you mean 'RunContext'?")
    assert _import_error("from harness_core.scripted.backends import Turns") == (
        "FacadeNameError harness_core.scripted.backends has no name 'Turns'; did you mean 'Turn'?")


def test_an_internal_name_is_named_with_its_module_and_called_unsupported() -> None:
    said = _import_error("from harness_core.provider import ProviderContext")
    assert "it is defined in harness_core._run.context, an internal module, which is not a supported import path" \
        in said, said


def test_an_unknown_name_lists_the_facades() -> None:
    said = _import_error("from harness_core import no_such_thing")
    assert said.startswith("FacadeNameError harness_core has no name 'no_such_thing'. The façades (") and all(
        facade in said for facade in FACADES), said


def test_submodules_private_and_dunder_names_behave_as_on_any_module() -> None:
    assert _import_error("from harness_core.testing import contract; from harness_core import offline") == "imported"
    assert not hasattr(harness_core.provider, "__wrapped__")
    assert not hasattr(harness_core.provider, "_repr_html_")
    with pytest.raises(FacadeNameError) as caught:
        getattr(harness_core.provider, "SCENARIOS")  # noqa: B009 - the attribute access itself is the test
    assert isinstance(caught.value, ImportError) and caught.value.name == "SCENARIOS"


@pytest.mark.parametrize("old", sorted(MOVED))
def test_a_moved_module_imports_from_its_old_path_with_a_warning_naming_the_new(old: str) -> None:
    code = textwrap.dedent(f"""
        import importlib, warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = importlib.import_module({old!r})
        print(module is importlib.import_module({MOVED[old]!r}), module.__spec__.name)
        print([str(w.message) for w in caught if w.category is DeprecationWarning])
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    same, warned = done.stdout.splitlines()
    assert same == f"True {MOVED[old]}", done.stdout
    assert f"{old} moved to {MOVED[old]}" in warned, warned


OLD_NAMES: dict[str, tuple[str, ...]] = {
    "harness_core.batch.executor": ("Executor", "ExecutorOptions", "TaskAttempt", "WorkerLostError", "executor_named",
                                    "executor_names"),
    "harness_core.batch.local": ("LocalExecutor", "harness_register_executors", "play_attempt"),
    "harness_core.offline.scenarios": ("SCENARIOS", "Scenario", "Say", "RunCommand", "LEAK_ENV", "apply_file_step"),
    "harness_core.offline.inline": ("ScenarioSyntaxError", "scenario_from_json", "scenario_to_json"),
    "harness_core.offline.backends": ("ChatCompletionsBackend", "GeminiBackend", "MessagesBackend", "ResponsesBackend",
                                      "ScriptedBackend", "TOOL_STEPS", "split_chunks"),
    "harness_core.jobs.process": ("is_harness_run", "process_argv", "process_state"),
    "harness_core.toolbridge": ("main",),
}
"""Public modules that moved → names of their old `__all__` (from git history) a user may import from them."""


def test_every_name_of_a_moved_public_module_still_imports_from_its_old_path() -> None:
    code = "import warnings\nwarnings.simplefilter('ignore')\n" + "".join(
        f"from {old} import {', '.join(names)}\n" for old, names in OLD_NAMES.items())
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert set(OLD_NAMES) <= set(MOVED)


def test_the_migration_table_in_the_docs_names_every_moved_module() -> None:
    table = (Path(__file__).resolve().parents[1] / "docs" / "providers.md").read_text().split(
        "### Moved import paths", 1)[1].split("\n#", 1)[0]
    missing = [old for old in MOVED
               if f"`{old}`" not in table and f"`{old.rpartition('.')[2]}`" not in table]
    assert not missing, f"moved modules missing from docs/providers.md, 'Moved import paths': {missing}"


def test_the_lazy_facade_has_one_name_list() -> None:
    """`harness_core`'s `_EXPORTS` (what it imports lazily) and its TYPE_CHECKING imports (what type checkers see)
    name the same things from the same modules; `dir()` shows every exported name before its first use."""
    tree = ast.parse(Path(harness_core.__file__).read_text())
    checked = {alias.asname or alias.name: node.module
               for block in tree.body if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
               for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert checked == harness_core._EXPORTS
    fresh = subprocess.run([sys.executable, "-c", "import harness_core; print(' '.join(dir(harness_core)))"],
                           capture_output=True, text=True, timeout=60, check=True).stdout.split()
    assert set(harness_core._EXPORTS) <= set(fresh)
