"""The CLI's imports: of the core, public modules and the documented-internal ones (CLI_INTERNAL) only; a
command's body imports lazily once, the CLI module implementing it, so its start-up modules stay light (`harness
--help`); each check shown failing. Reads the source tree with `ast` (graph.py); imports no Harness module."""

from __future__ import annotations

import ast
import shutil
import sys
from pathlib import Path

import pytest

from tests.architecture.graph import CORE, _from_modules, _modules, import_graph

CLI_INTERNAL = {
    "harness_core._run.signals": "what SIGINT/SIGTERM/SIGHUP do to a live run (`interrupt_on_signals`)",
    "harness_core._logging": "the library's root logger (`ROOT_LOGGER`), which only the CLI configures",
}
"""The documented-internal modules the CLI may import besides the public ones (docs/import-rules.md): keep it short;
what a library user would want too goes on a public module instead."""


def cli_private_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import by the CLI of a core module that is private (a `_` part in its name) and not in CLI_INTERNAL."""
    def in_cli(name: str) -> bool:
        return name == "harness_core.cli" or name.startswith("harness_core.cli.")

    return [f"{module} imports {target}" for module, targets in sorted(graph.items()) if in_cli(module)
            for target in sorted(targets) if not in_cli(target) and target not in CLI_INTERNAL
            and any(part.startswith("_") for part in target.split(".")[1:])]


def test_the_cli_uses_public_or_documented_internal_modules() -> None:
    problems = cli_private_imports(import_graph(CORE))
    assert not problems, ("the CLI imports private core modules (use a public module, or add it to CLI_INTERNAL and "
                          "docs/import-rules.md if it is no use to a library user):\n" + "\n".join(problems))


@pytest.mark.parametrize("where", ["module", "function", "type_checking"])
def test_the_cli_check_fails_on_another_private_module(tmp_path: Path, where: str) -> None:
    """The rule can fail: a CLI module importing a private core module, however the import hides, is caught."""
    copy = tmp_path / "harness_core"
    shutil.copytree(CORE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    added = {
        "module": "from harness_core._run.probe import prepare\n",
        "function": "def _probe() -> None:\n    from harness_core._run import probe\n",
        "type_checking": "if TYPE_CHECKING:\n    from harness_core._run.probe import ProbedProvider\n",
    }[where]
    target = copy / "cli" / "stderr_log.py"
    target.write_text(target.read_text() + "\n" + added)
    assert "harness_core.cli.stderr_log imports harness_core._run.probe" in cli_private_imports(import_graph(copy))


CLI = CORE / "cli"
_LIGHT_TOP = {"__future__", "click", "harness_core.__version__", "harness_core.agentcli.cache_switch"}
"""What a start-up module of the CLI (loaded by `harness --help`) imports at its top besides the standard library
and the CLI's other start-up modules."""


def _top_imports(tree: ast.Module, package: str) -> list[str]:
    """The module-level imports that run (not those under `if TYPE_CHECKING:`), `from m import n` as m.n (and
    `from . import n` as package.n)."""
    found: list[str] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and "TYPE_CHECKING" in ast.unparse(stmt.test):
            continue
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for node in ast.walk(stmt):
            if isinstance(node, ast.Import):
                found.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                module = _from_modules(package, node)[0]
                found.extend(f"{module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                found.extend(_from_modules(package, node))
    return found


def _function_imports(tree: ast.Module, package: str) -> dict[str, list[tuple[int, str]]]:
    """Each top-level function and method → the imports inside it (its nested functions' counted with it),
    relative ones resolved in `package`."""
    outer = [(f"{stmt.name}.{f.name}", f) for stmt in tree.body if isinstance(stmt, ast.ClassDef)
             for f in stmt.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)]
    outer += [(stmt.name, stmt) for stmt in tree.body if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)]
    found: dict[str, list[tuple[int, str]]] = {}
    for name, func in outer:
        for node in ast.walk(func):
            if isinstance(node, ast.Import):
                found.setdefault(name, []).extend((node.lineno, alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                found.setdefault(name, []).extend((node.lineno, module) for module in _from_modules(package, node))
    return found


def cli_import_problems(cli: Path) -> list[str]:
    """The CLI's rule, start-up speed without hidden dependencies: a command's click definition lives in a start-up
    module (its top imports only click, the standard library and other start-up modules), and its body makes ONE
    function-level import, of the CLI module implementing it; every other module imports at its top. Start-up
    modules are found, not listed: the largest set of CLI modules whose top imports stay light."""
    base = cli.parents[1]
    names = {".".join(p.relative_to(base).with_suffix("").parts).removesuffix(".__init__"): p for p in _modules(cli)}
    trees = {name: ast.parse(path.read_text(), str(path)) for name, path in names.items()}
    cli_name = ".".join(cli.relative_to(base).parts)

    def package_of(name: str) -> str:
        return name if names[name].name == "__init__.py" else name.rpartition(".")[0]

    def module_of(target: str) -> str | None:
        while target and target not in names:
            target = target.rpartition(".")[0]
        return target or None

    light = set(names)
    changed = True
    while changed:
        changed = False
        for name in sorted(light):
            for target in _top_imports(trees[name], package_of(name)):
                top = target.split(".")[0]
                inside = module_of(target)
                light_core = target in _LIGHT_TOP or target.rpartition(".")[0] in _LIGHT_TOP
                if light_core or top in _LIGHT_TOP or top in sys.stdlib_module_names or inside in light:
                    continue
                light.discard(name)
                changed = True
                break
    problems = []
    for name, tree in sorted(trees.items()):
        where = str(names[name].relative_to(base))
        for func, found in sorted(_function_imports(tree, package_of(name)).items()):
            modules = ", ".join(module for _, module in found)
            line = found[0][0]
            if name not in light:
                problems.append(f"{where}:{line}: {func} imports {modules} inside a function, in a module loaded "
                                "when a command runs (move it to the top)")
            elif len(found) > 1:
                problems.append(f"{where}:{line}: {func} imports {len(found)} modules inside it ({modules}): one "
                                "lazy import per command, of the module implementing it")
            elif not (found[0][1] + ".").startswith(cli_name + "."):
                problems.append(f"{where}:{line}: {func} imports {modules} lazily: import the CLI module "
                                "implementing it instead (it imports what it needs at its top)")
    return problems


def test_cli_commands_import_lazily_once() -> None:
    problems = cli_import_problems(CLI)
    assert not problems, "function-level imports in the CLI:\n" + "\n".join(problems)


def test_the_cli_import_check_fails_on_a_second_lazy_import(tmp_path: Path) -> None:
    """The rule can fail: a second lazy import in a command's body is caught."""
    copy = tmp_path / "harness_core" / "cli"
    shutil.copytree(CLI, copy, ignore=shutil.ignore_patterns("__pycache__"))
    commands = copy / "run" / "commands.py"
    source = commands.read_text()
    body = "    from harness_core.cli.run.invocation import run as implementation\n"
    assert body in source
    commands.write_text(source.replace(body, body + "    from harness_core.store import new_run_id\n", 1))
    assert cli_import_problems(CLI) == []
    assert any("run imports 2 modules inside it" in p and "harness_core.store" in p for p in cli_import_problems(copy))


def test_the_cli_import_check_counts_a_relative_lazy_import(tmp_path: Path) -> None:
    """A command body's second lazy import written `from . import x` is counted, as the module it loads."""
    copy = tmp_path / "harness_core" / "cli"
    shutil.copytree(CLI, copy, ignore=shutil.ignore_patterns("__pycache__"))
    commands = copy / "run" / "commands.py"
    source = commands.read_text()
    body = "    from harness_core.cli.run.invocation import run as implementation\n"
    assert body in source
    commands.write_text(source.replace(body, body + "    from .. import output\n", 1))
    assert any("run imports 2 modules inside it" in p and "harness_core.cli.output" in p
               for p in cli_import_problems(copy))
