"""The shape the codebase holds (docs/architecture.md and docs/import-rules.md): checked on the source tree.

- the core names no agent (only the default provider's name, and model names in canned responses);
- no module of the core, of a provider or of an executor package is over 800 lines (over 500 is printed as a
  review flag), and each says what it is;
- nothing that runs outside tests imports `harness_core.testing`;
- provider packages and the example third-party provider import Harness only through the façades;
- each provider, executor and viewer package keeps its floors (PACKAGE_FLOORS), as the core keeps CORE_FLOORS;
- the viewer (web/harness_view) uses the core's public modules only, and its module docstrings fit in 5 lines;
  nothing but the `harness view` command (lazily) imports it;
- the CLI imports lazily only once per command, the module implementing it (its start-up modules stay light), and
  of the core only public modules and the documented-internal ones (CLI_INTERNAL).
"""

from __future__ import annotations

import ast
import re
import shutil
import sys
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
    "harness_core.scripted.command",  # fake CLIs: a scripted command's sleep as a real process
}
EXECUTOR_FACADES = {"harness_core", "harness_core.batch", "harness_core.store"}
"""What an executor package imports of Harness: the run API's façade, the batch API (its `Executor` contract and
`play_attempt`) and the run store (where an attempt's log goes)."""
EXECUTORS = sorted(p for p in ROOT.glob("executors/*/harness_*") if p.is_dir())
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


@pytest.mark.parametrize("root", [CORE, *PACKAGES, *EXECUTORS, VIEWER], ids=lambda p: _rel(p))
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


def test_nothing_but_the_view_command_imports_the_viewer() -> None:
    """The viewer is its own distribution on top of the core: the core, the providers and the executors never
    import it, except the body of the `harness view` command (`cli/view/serving.py`), which only that command
    imports, when it runs (it says how to install the viewer if missing)."""
    serving = CORE / "cli" / "view" / "serving.py"
    offending = [
        f"{_rel(path)}:{line}: {module}"
        for path in _modules(CORE, *PACKAGES, *EXECUTORS)
        for line, module in _imports(path)
        if (module.split(".")[0] == "harness_view" and path != serving)
        or (module == "harness_core.cli.view.serving" and path != CORE / "cli" / "view" / "commands.py")
    ]
    assert not offending, "modules importing the viewer (harness_view):\n" + "\n".join(offending)
    commands = ast.parse((CORE / "cli" / "view" / "commands.py").read_text())
    top = [n.module or "" for n in commands.body if isinstance(n, ast.ImportFrom)]
    assert "harness_core.cli.view.serving" not in top, "cli/view/commands.py imports the viewer at the top: import " \
        "it in the command (start-up speed)"


def test_module_docstrings_fit_in_five_lines() -> None:
    """The job and the "knows nothing of" line in at most 5 lines; the rest belongs in docs/."""
    long = sorted(_rel(p) for root in [CORE, *PACKAGES, *EXECUTORS] for p in _modules(root)
                  if len((ast.get_docstring(ast.parse(p.read_text())) or "").splitlines()) > 5)
    assert not long, f"module docstrings over 5 lines (move the rest to docs/): {long}"


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


def test_the_viewer_uses_the_public_api_and_says_what_it_is_in_five_lines() -> None:
    past = [f"{_rel(path)}:{line}: {module}" for path in _modules(VIEWER) for line, module in _imports(path)
            if module.startswith("harness_core") and module not in VIEWER_API]
    assert not past, f"the viewer imports past the public API ({', '.join(sorted(VIEWER_API))}):\n" + "\n".join(past)
    long = [_rel(p) for p in _modules(VIEWER)
            if len((ast.get_docstring(ast.parse(p.read_text())) or "").splitlines()) > 5]
    assert not long, f"module docstrings over 5 lines: {', '.join(long)}"


# --- floors: the layers contract ---------------------------------------------------------------------------------

CORE_FLOORS: tuple[tuple[str, ...], ...] = (
    ("harness_core.__main__",),
    ("harness_core.cli",),
    ("harness_core.testing",),
    ("harness_core", "harness_core.provider"),
    ("harness_core.batch", "harness_core.jobs"),
    ("harness_core.offline",),
    ("harness_core._run",),
    ("harness_core.plugins",),
    ("harness_core.local_executor",),
    ("harness_core.hookspecs",),
    ("harness_core.executor", "harness_core.agentcli"),
    ("harness_core._provider_interface", "harness_core.tools"),
    ("harness_core.transport", "harness_core.jsonrpc", "harness_core.store", "harness_core.scripted"),
    ("harness_core._jsonlines", "harness_core.files", "harness_core._logging"),
    ("harness_core.errors", "harness_core.tooldisplay", "harness_core.spec"),
    ("harness_core.events", "harness_core.redaction"),
    ("harness_core.capabilities", "harness_core.mcp", "harness_core.attachment"),
    ("harness_core._version", "harness_core._facade", "harness_core._moved"),
)
"""harness_core's floors, top first (docs/architecture.md): a module imports its own block or a lower floor, never
a higher one nor a sibling block on its own floor; every import counts (module level, in a function, under
TYPE_CHECKING). A block is a module or package prefix; the longest prefix places a module."""
SHIPPED = [CORE, *PACKAGES, *EXECUTORS, VIEWER]
LAZY_ALLOWED = {
    "jsonschema": "only a spec with an output schema pays for it",
    "ctypes": "only where the platform needs it",
    "_ctypes": "only where the platform needs it",
    "harness_core._logging": "agentcli.cache is on the CLI's start-up path: structlog only when the cache fails",
    "ray": "an optional extra of harness-ray: imported where a cluster is used, so the package loads without it",
    "harness_ray.worker": "imports ray",
    "harness_core.tools.server": "the mcp SDK and uvicorn: only a run given Python tools pays for them",
    "harness_core.scripted.backends": "uvicorn, starlette, httpx2 (60-260 ms after the plugin host is up, measured "
                                      "with 8 providers): only an offline run pays for them, not every host",
    "harness_claude.offline": "imports the scripted backends",
    "harness_codex_common.dialect": "imports the scripted backends",
    "harness_mini_agent.offline": "imports the scripted backends",
    "harness_mini_agent.agent": "imports httpx (140-230 ms, measured), which only a mini-agent run needs",
    "harness_mini_agent.client": "imports httpx",
}
"""What may be imported in a function outside the CLI (whose commands import their own modules lazily)."""
TOP_IMPORTS = [CORE, *PACKAGES, *EXECUTORS, VIEWER]
"""Where imports are at the top: everywhere but the CLI's commands, LAZY_ALLOWED, and a package `__init__`'s register
hook (`harness_register_*`), which imports its own provider modules so that finding the plugin stays cheap."""


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def import_graph(*roots: Path, fakes: bool = False) -> dict[str, set[str]]:
    """Module → the modules of `roots` it imports, every import counted (in functions and under TYPE_CHECKING too);
    `from pkg import name` is pkg.name when that is a module. A package's `__init__` importing its own modules at
    module level is a re-export, not an edge; in a function (a register hook) it is an edge, as any other. A
    package's `testing/` (its fakes) counts only with `fakes`."""
    paths: dict[str, Path] = {}
    for root in roots:
        for path in _modules(root):
            if _is_test_code(path) and not path.is_relative_to(CORE / "testing") and not fakes:
                continue
            parts = list(path.relative_to(root.parent).with_suffix("").parts)
            paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        tree = ast.parse(path.read_text(), str(path))
        in_functions = {id(inner) for node in ast.walk(tree) if isinstance(node, _FUNCTIONS)
                        for inner in ast.walk(node)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                wanted = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                module = ".".join([*base, *([node.module] if node.module else [])])
                wanted = [f"{module}.{a.name}" if f"{module}.{a.name}" in paths else module for a in node.names]
            else:
                continue
            for target in wanted:
                while target and target not in paths:
                    target = target.rpartition(".")[0]
                re_export = (path.name == "__init__.py" and target.startswith(name + ".")
                             and id(node) not in in_functions)
                if target and target != name and not re_export:
                    targets.add(target)
        targets |= {module for module in _modules_by_name(tree) if module in paths and module != name}
        graph[name] = targets
    return graph


def _modules_by_name(tree: ast.Module) -> set[str]:
    """The modules a module imports by name at run time (`importlib.import_module` of a string it holds): the values
    of a module-level `DEFAULT_PLUGINS = {...}` (the plugin host's own plugins), which the floors count as imports."""
    found: set[str] = set()
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else (
            node.target if isinstance(node, ast.AnnAssign) else None)
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(target, ast.Name) and target.id == "DEFAULT_PLUGINS" and isinstance(value, ast.Dict):
            found |= {v.value for v in value.values if isinstance(v, ast.Constant) and isinstance(v.value, str)}
    return found


def import_cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


Floors = tuple[tuple[str, ...], ...]
"""Blocks of modules, top floor first (CORE_FLOORS, CLI_FLOORS, PACKAGE_FLOORS)."""


CLI_FLOORS: Floors = (
    ("harness_core.cli.__main__",),
    ("harness_core.cli",),
    ("harness_core.cli.run", "harness_core.cli.chat", "harness_core.cli.runs", "harness_core.cli.providers",
     "harness_core.cli.config", "harness_core.cli.batch", "harness_core.cli.view"),
    ("harness_core.cli.foreground",),
    ("harness_core.cli.flags",),
    ("harness_core.cli.complete",),
    ("harness_core.cli.records", "harness_core.cli.settings"),
    ("harness_core.cli.exits", "harness_core.cli.output", "harness_core.cli.event_loop"),
    ("harness_core.cli.stderr_log", "harness_core.cli.render"),
)
"""The CLI's floors inside its block of CORE_FLOORS, top first (docs/import-rules.md): the entry (`cli/__init__`,
which registers every command), the command groups (sibling blocks: no group imports another; what two groups
share is on a floor below them), then the CLI base. `harness_core.cli` itself is the package's `__init__` only."""
CLI_TABLE = "CLI_FLOORS and docs/import-rules.md"


def _floor_of(module: str, floors: Floors = CORE_FLOORS, top: str = "harness_core") -> tuple[int, str] | None:
    best: tuple[int, str] | None = None
    for floor, blocks in enumerate(floors):
        for block in blocks:
            inside = module == block or (module.startswith(block + ".") and block != top)
            if inside and (best is None or len(block) > len(best[1])):
                best = (floor, block)
    return best


def layer_violations(graph: dict[str, set[str]], floors: Floors = CORE_FLOORS, top: str = "harness_core",
                     table: str = "CORE_FLOORS and docs/architecture.md") -> list[str]:
    """Every import of package `top` (harness_core, the CLI with CLI_FLOORS, a provider package) pointing up a floor
    or across to a sibling block, and every module of it on no floor (add it to `table`)."""
    problems = []
    for module, targets in sorted(graph.items()):
        if not (module == top or module.startswith(top + ".")):
            continue
        placed = _floor_of(module, floors, top)
        if placed is None:
            problems.append(f"{module} is on no floor (add it to {table})")
            continue
        for target in sorted(targets):
            there = _floor_of(target, floors, top)
            if there is None or there[1] == placed[1]:
                continue
            if there[0] < placed[0]:
                problems.append(f"{module} imports {target}, a floor above it ({there[1]} over {placed[1]})")
            elif there[0] == placed[0]:
                problems.append(f"{module} imports {target}, a sibling on its own floor ({there[1]})")
    return problems


def test_the_core_keeps_its_floors() -> None:
    problems = layer_violations(import_graph(CORE))
    assert not problems, "imports against the floors (docs/architecture.md):\n" + "\n".join(problems)


def test_the_cli_keeps_its_floors() -> None:
    """No command group imports another (lazy and TYPE_CHECKING imports counted): what two groups share is on
    the CLI base, below them."""
    problems = layer_violations(import_graph(CORE), CLI_FLOORS, "harness_core.cli", CLI_TABLE)
    assert not problems, "imports against the CLI's floors (docs/import-rules.md):\n" + "\n".join(problems)


@pytest.mark.parametrize("edge", ["across", "up"])
def test_the_cli_floors_check_fails_on_an_edge_between_groups(edge: str) -> None:
    """The CLI's contract can fail: on a graph with one added edge, a command group importing another (its body
    lazily), or a base module importing a command group, is named."""
    graph = import_graph(CORE)
    source, target = {"across": ("harness_core.cli.chat.invocation", "harness_core.cli.run.invocation"),
                      "up": ("harness_core.cli.flags.spec_flags", "harness_core.cli.runs.listing")}[edge]
    assert source in graph and target in graph and target not in graph[source]
    graph[source] = graph[source] | {target}
    found = layer_violations(graph, CLI_FLOORS, "harness_core.cli", CLI_TABLE)
    expected = {"across": f"{source} imports {target}, a sibling on its own floor (harness_core.cli.run)",
                "up": f"{source} imports {target}, a floor above it (harness_core.cli.runs over "
                      "harness_core.cli.flags)"}[edge]
    assert found == [expected]


def test_the_cli_floors_check_counts_a_lazy_import_between_groups(tmp_path: Path) -> None:
    """Written in the source, a command body importing another group's module inside a function is caught too."""
    copy = tmp_path / "harness_core"
    shutil.copytree(CORE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    body = copy / "cli" / "batch" / "invocation.py"
    body.write_text(body.read_text() + "\n\ndef _chat() -> None:\n    from harness_core.cli.chat import invocation\n")
    assert layer_violations(import_graph(copy), CLI_FLOORS, "harness_core.cli", CLI_TABLE) == [
        "harness_core.cli.batch.invocation imports harness_core.cli.chat.invocation, a sibling on its own floor "
        "(harness_core.cli.chat)"]


RUN_FLOORS: Floors = (
    ("__init__",),
    ("session",),
    ("api", "replay", "signals"),
    ("live",),
    ("context",),
    ("approvals",),
    ("pipe", "started"),
    ("changes", "run_files", "state", "probe", "tool_serving"),
    ("wirelog", "budget", "channel", "held_deltas", "structured", "tool_policy"),
)
"""The runner's floors inside its block of CORE_FLOORS, top first (docs/import-rules.md), by module name inside
`harness_core._run`: the owners of a `LiveRun` (a session over `api`, a replay) above the run object, its parts
below, and the wire log's writer and reader at the bottom."""
RUN_TABLE = "RUN_FLOORS and docs/import-rules.md"


def run_floor_problems(graph: dict[str, set[str]]) -> list[str]:
    """What `layer_violations` finds inside `harness_core._run` against RUN_FLOORS."""
    return layer_violations(graph, package_floors("harness_core._run", RUN_FLOORS), "harness_core._run", RUN_TABLE)


def test_the_runner_keeps_its_floors() -> None:
    """Inside `_run`, the sub-folders are floors too: nothing below imports `replay/` or `session/`, and the wire
    log (written by every live run) imports no part of the runner."""
    problems = run_floor_problems(import_graph(CORE))
    assert not problems, "imports against the runner's floors (docs/import-rules.md):\n" + "\n".join(problems)


@pytest.mark.parametrize("edge", ["into replay", "up from wirelog"])
def test_the_runner_floors_check_fails_on_an_added_back_edge(edge: str) -> None:
    """The runner's contract can fail: on a graph with one added edge, the run files importing the replay (as
    they once did for the wire writer), or the wire log importing the run object, is named."""
    graph = import_graph(CORE)
    source, target = {"into replay": ("harness_core._run.run_files", "harness_core._run.replay.run"),
                      "up from wirelog": ("harness_core._run.wirelog", "harness_core._run.live")}[edge]
    assert source in graph and target in graph and target not in graph[source]
    graph[source] = graph[source] | {target}
    expected = {"into replay": f"{source} imports {target}, a floor above it (harness_core._run.replay over "
                               "harness_core._run.run_files)",
                "up from wirelog": f"{source} imports {target}, a floor above it (harness_core._run.live over "
                                   "harness_core._run.wirelog)"}[edge]
    assert run_floor_problems(graph) == [expected]


def test_the_runner_floors_are_documented() -> None:
    documented = _documented_floors((ROOT / "docs" / "import-rules.md").read_text(), "## The runner's floors")
    assert documented == {"harness_core._run": RUN_FLOORS}, \
        "docs/import-rules.md's runner floors differ from RUN_FLOORS"


def _map_blocks(text: str) -> list[str]:
    """The blocks the map's table (docs/architecture.md) names in its `harness_core/…` column, top first:
    `cli/` is harness_core.cli, `errors` harness_core.errors, `__init__.py` harness_core."""
    blocks = []
    for line in text.splitlines():
        cells = line.split("|")
        if len(cells) < 4 or not cells[2].strip().startswith("`") or "floor" in cells[1]:
            continue  # not a row of the table, or its header
        for name in re.findall(r"`([^`]+)`", cells[2]):
            name = name.removesuffix("/").removesuffix(".py")
            blocks.append("harness_core" if name == "__init__" else f"harness_core.{name}")
    return blocks


def test_the_map_shows_every_floor_in_order() -> None:
    """docs/architecture.md's table names each CORE_FLOORS block, in the floors' order, and nothing else."""
    mapped = _map_blocks((ROOT / "docs" / "architecture.md").read_text())
    floors = [block for blocks in CORE_FLOORS for block in blocks]
    assert mapped == floors, ("docs/architecture.md's map is out of step with CORE_FLOORS:\n"
                              f"  only in the map: {[b for b in mapped if b not in floors]}\n"
                              f"  only in CORE_FLOORS: {[b for b in floors if b not in mapped]}\n"
                              f"  the map's order: {mapped}")


def test_no_import_cycle_in_shipped_code() -> None:
    cycles = import_cycles(import_graph(*SHIPPED))
    assert not cycles, "import cycles (every import counts, in functions and under TYPE_CHECKING too):\n" + "\n".join(
        ", ".join(sorted(c)) for c in cycles)


@pytest.mark.parametrize("where", ["module", "function", "type_checking"])
def test_the_floors_check_fails_on_an_added_back_edge(tmp_path: Path, where: str) -> None:
    """The contract can fail: a model importing the run API, however the import hides, is caught as an upward
    import and as a cycle (the run API imports the spec)."""
    copy = tmp_path / "harness_core"
    shutil.copytree(CORE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    back_edge = {
        "module": "from harness_core._run.api import run\n",
        "function": "def _run() -> None:\n    from harness_core._run import api\n",
        "type_checking": "if TYPE_CHECKING:\n    from harness_core._run.api import LiveRun\n",
    }[where]
    spec = copy / "spec.py"
    spec.write_text(spec.read_text() + "\n" + back_edge)
    graph = import_graph(copy)
    assert "harness_core.spec imports harness_core._run.api, a floor above it (harness_core._run over " \
        "harness_core.spec)" in layer_violations(graph)
    assert any({"harness_core.spec", "harness_core._run.api"} <= cycle for cycle in import_cycles(graph))


def test_the_cycle_check_counts_an_import_in_a_register_hook(tmp_path: Path) -> None:
    """A package `__init__` importing its provider in the register hook is an edge, not a re-export: an inner
    module importing the package back (for `__version__`, say) is a cycle."""
    copy = tmp_path / "harness_codex_exec"
    shutil.copytree(ROOT / "providers" / "codex_exec" / "harness_codex_exec", copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    provider = copy / "provider.py"
    old = provider.read_text()
    provider.write_text(old.replace("from harness_codex_exec._version import", "from harness_codex_exec import"))
    assert provider.read_text() != old
    assert frozenset({"harness_codex_exec", "harness_codex_exec.provider"}) in import_cycles(import_graph(copy))


# --- floors of the provider, executor and viewer packages --------------------------------------------------------

Floors = tuple[tuple[str, ...], ...]
"""Blocks of modules, top floor first (as CORE_FLOORS)."""

PACKAGE_FLOORS: dict[str, Floors] = {
    "harness_acp": (
        ("testing",),
        ("__init__",),
        ("generic",),
        ("provider",),
        ("session",),
        ("connection",),
        ("turn",),
        ("mapping", "profiles"),
        ("display", "trust", "policy", "errors", "mcp_servers", "options",
         "offline_adapters", "offline_gemini", "offline_qwen"),
        ("_version",),
    ),
    "harness_claude": (
        ("testing",),
        ("__init__",),
        ("provider",),
        ("session", "offline"),
        ("turn",),
        ("mapping", "argv"),
        ("results",),
        ("changes", "outcome"),
        ("display", "_json", "auth", "options", "permissions", "toolconfig", "stdin"),
    ),
    "harness_codex_appserver": (
        ("testing",),
        ("__init__",),
        ("provider",),
        ("session", "replay"),
        ("thread",),
        ("turn",),
        ("mapping", "argv"),
        ("items", "coalesce", "payloads", "params", "notices", "options"),
        ("_version",),
    ),
    "harness_codex_common": (
        ("__init__",),
        ("offline", "retries"),
        ("cli", "dialect", "errors", "argv", "auth", "rollout", "toolconfig"),
    ),
    "harness_codex_exec": (
        ("testing",),
        ("__init__",),
        ("provider",),
        ("argv",),
        ("sessions",),
        ("mapping", "options"),
        ("_version",),
    ),
    "harness_mini_agent": (
        ("__init__",),
        ("provider",),
        ("agent", "offline"),
        ("client", "mapping", "tools"),
        ("wire", "patch", "options"),
    ),
    "harness_ray": (
        ("__init__",),
        ("executor",),
        ("cluster", "options", "worker"),
    ),
    "harness_view": (
        ("__init__",),
        ("server",),
        ("app",),
        ("bundle", "live"),
        ("pages", "actions", "flash", "guard"),
        ("charts",),
        ("batch_report",),
        ("batches", "catalog", "files", "render", "settings", "stopping", "timeline"),
    ),
}
"""Each provider, executor and viewer package's floors, top first (docs/import-rules.md), by module name inside the
package (`__init__` the package itself, `testing` its fakes): the rule of CORE_FLOORS, checked by the same
`layer_violations`. A package imports other distributions (the core's façades, harness_codex_common) from below
every floor."""
FLOORED_PACKAGES = [*PACKAGES, *EXECUTORS, VIEWER]


def package_floors(package: str, floors: Floors) -> Floors:
    """`floors` (a PACKAGE_FLOORS entry) with full module names."""
    return tuple(tuple(package if block == "__init__" else f"{package}.{block}" for block in blocks)
                 for blocks in floors)


def package_floor_problems(root: Path, floors: Floors) -> list[str]:
    """What `layer_violations` finds in package `root` (its fakes included) against `floors` (short names), and
    each block naming no module of it."""
    package = root.name
    full = package_floors(package, floors)
    graph = import_graph(root, fakes=True)
    stale = [f"{block} names no module (remove it from PACKAGE_FLOORS[{package!r}])" for blocks in full
             for block in blocks if not any(m == block or m.startswith(block + ".") for m in graph)]
    where = f"PACKAGE_FLOORS[{package!r}] and docs/import-rules.md"
    return layer_violations(graph, full, package, table=where) + stale


@pytest.mark.parametrize("root", FLOORED_PACKAGES, ids=lambda p: _rel(p))
def test_each_package_keeps_its_floors(root: Path) -> None:
    assert root.name in PACKAGE_FLOORS, f"{_rel(root)} has no floors: add PACKAGE_FLOORS[{root.name!r}], top first"
    problems = package_floor_problems(root, PACKAGE_FLOORS[root.name])
    assert not problems, "imports against the package's floors (docs/import-rules.md):\n" + "\n".join(problems)


def _documented_floors(text: str, heading: str = "## The floors of each package") -> dict[str, Floors]:
    """The floors table under `heading` in docs/import-rules.md: package → its floors, top first, each a tuple of
    blocks. The table ends at the next heading."""
    found: dict[str, Floors] = {}
    for line in text.partition(heading)[2].partition("\n## ")[0].splitlines():
        cells = [cell.strip() for cell in line.split("|")]
        if len(cells) == 4 and cells[1].startswith("`harness_"):
            found[cells[1].strip("`")] = tuple(tuple(block.strip().strip("`") for block in floor.split("/"))
                                               for floor in cells[2].split("›"))
    return found


def test_the_package_floors_are_documented() -> None:
    documented = _documented_floors((ROOT / "docs" / "import-rules.md").read_text())
    assert documented == PACKAGE_FLOORS, "docs/import-rules.md's package floors differ from PACKAGE_FLOORS: " + \
        ", ".join(sorted(p for p in {*documented, *PACKAGE_FLOORS} if documented.get(p) != PACKAGE_FLOORS.get(p)))


_TOY_FLOORS: Floors = (("testing",), ("__init__",), ("provider",), ("turn",), ("mapping", "params"))
_TOY = {
    "__init__.py": '"""Toy."""\n\n\ndef harness_register_providers() -> None:\n'
                   '    from harness_toy.provider import ToyProvider\n',
    "provider.py": '"""Toy."""\n\nfrom harness_toy.turn import Turn\n',
    "turn.py": '"""Toy."""\n\nfrom harness_toy import mapping, params\n',
    "mapping.py": '"""Toy."""\n',
    "params.py": '"""Toy."""\n',
    "testing/__init__.py": '"""Toy."""\n\nfrom harness_toy.provider import ToyProvider\n',
}


@pytest.mark.parametrize("where", ["module", "function", "type_checking", "relative", "sibling", "unplaced"])
def test_the_package_floors_check_fails_on_an_added_back_edge(tmp_path: Path, where: str) -> None:
    """The contract can fail: in a made-up provider package whose floors hold, an upward import however it hides, an
    import of a sibling on its floor, or a module on no floor, is caught."""
    root = tmp_path / "harness_toy"
    for name, text in _TOY.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    assert package_floor_problems(root, _TOY_FLOORS) == []
    target, added, expected = {
        "module": ("mapping.py", "from harness_toy.turn import Turn\n",
                   "harness_toy.mapping imports harness_toy.turn, a floor above it"),
        "function": ("mapping.py", "def _turn() -> None:\n    from harness_toy import provider\n",
                     "harness_toy.mapping imports harness_toy.provider, a floor above it"),
        "type_checking": ("mapping.py", "if TYPE_CHECKING:\n    from harness_toy.testing import Fake\n",
                          "harness_toy.mapping imports harness_toy.testing, a floor above it"),
        "relative": ("turn.py", "def _provider() -> None:\n    from . import provider\n",
                     "harness_toy.turn imports harness_toy.provider, a floor above it"),
        "sibling": ("params.py", "from harness_toy.mapping import Mapper\n",
                    "harness_toy.params imports harness_toy.mapping, a sibling on its own floor"),
        "unplaced": ("thread.py", '"""Toy."""\n', "harness_toy.thread is on no floor"),
    }[where]
    path = root / target
    path.write_text((path.read_text() if path.exists() else "") + "\n" + added)
    problems = package_floor_problems(root, _TOY_FLOORS)
    assert any(p.startswith(expected) for p in problems), problems


def _package_of(path: Path) -> str:
    """The dotted package a module file is in (its folders up to the first without an `__init__.py`)."""
    parts: list[str] = []
    folder = path.parent
    while (folder / "__init__.py").exists():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts)


def _from_modules(package: str, node: ast.ImportFrom) -> list[str]:
    """What `from … import …` in `package` imports, relative ones resolved: `from m import n` is m, `from .m import
    n` package.m, and `from . import n` (no module) package.n."""
    if node.level == 0:
        return [node.module] if node.module else []
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    if node.module:
        return [".".join([*base, node.module])]
    return [".".join([*base, alias.name]) for alias in node.names]


def _register_hook_imports(path: Path) -> set[tuple[int, str]]:
    """The imports of its own package's modules inside a package `__init__`'s `harness_register_*` hooks."""
    if path.name != "__init__.py":
        return set()
    own = path.parent.name + "."
    return {(node.lineno, module) for hook in ast.parse(path.read_text(), str(path)).body
            if isinstance(hook, ast.FunctionDef) and hook.name.startswith("harness_register_")
            for node in ast.walk(hook) if isinstance(node, ast.ImportFrom)
            for module in _from_modules(_package_of(path), node) if module.startswith(own)}


def _lazy_imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    top = {id(node) for stmt in tree.body if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
           for node in ast.walk(stmt)}
    found = []
    for node in ast.walk(tree):
        if id(node) in top:
            continue
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.extend((node.lineno, module) for module in _from_modules(_package_of(path), node))
    return found


@pytest.mark.parametrize("root", TOP_IMPORTS, ids=lambda p: _rel(p))
def test_imports_are_at_the_top(root: Path) -> None:
    """MCP's rule: inline imports hide dependencies and obscure circular-import bugs. Only the CLI's commands import
    lazily (so `harness --help` stays fast), a package's register hook its own provider, and what LAZY_ALLOWED
    names."""
    hidden = hidden_imports(root)
    assert not hidden, "imports inside functions (move them to the top of the module):\n" + "\n".join(hidden)


def hidden_imports(root: Path) -> list[str]:
    """The imports in functions under `root` that no rule allows (`path:line: module`)."""
    return [f"{_rel(path) if path.is_relative_to(ROOT) else path.relative_to(root.parent)}:{line}: {module}"
            for path in _modules(root)
            if not path.is_relative_to(CORE / "cli") and not _is_test_code(path)
            for line, module in _lazy_imports(path)
            if not any(module == m or module.startswith(m + ".") for m in LAZY_ALLOWED)
            and (line, module) not in _register_hook_imports(path)]


def test_the_top_imports_check_fails_on_a_lazy_import_in_a_package(tmp_path: Path) -> None:
    """The rule can fail: in a made-up provider package, the register hook may import its provider, no other function
    may import (nor the hook another package)."""
    root = tmp_path / "harness_toy"
    for name, text in _TOY.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    assert hidden_imports(root) == []
    (root / "turn.py").write_text(_TOY["turn.py"] + "\n\ndef _late() -> None:\n    from harness_toy import params\n")
    init = root / "__init__.py"
    init.write_text(init.read_text() + "    from harness_other.provider import Other\n")
    assert hidden_imports(root) == ["harness_toy/__init__.py:6: harness_other.provider",
                                    "harness_toy/turn.py:7: harness_toy"]


def test_the_top_imports_check_counts_a_relative_lazy_import(tmp_path: Path) -> None:
    """`from . import x` and `from .x import y` inside a function are lazy imports too, named as the module they
    load (`pkg.x`)."""
    root = tmp_path / "harness_toy"
    for name, text in _TOY.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    turn = root / "turn.py"
    lines = len(_TOY["turn.py"].splitlines())
    turn.write_text(_TOY["turn.py"] + "\n\ndef _late() -> None:\n    from . import params\n"
                    "    from .mapping import x\n")
    assert hidden_imports(root) == [f"harness_toy/turn.py:{lines + 4}: harness_toy.params",
                                    f"harness_toy/turn.py:{lines + 5}: harness_toy.mapping"]


# --- the CLI: one lazy import per command -------------------------------------------------------------------------

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
_LIGHT_TOP = {"__future__", "click", "harness_core.__version__", "harness_core.agentcli.cache"}
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
