"""The source tree as the architecture checks read it: where the core and the provider, executor and viewer
packages are, each module's imports (`import_graph`), the cycles among them, the core's floors (CORE_FLOORS) and
the rule every floors check applies (`layer_violations`), and a made-up package the checks break on purpose.
Stdlib `ast` only: imports no Harness module."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "harness_core"
PACKAGES = sorted(
    p for p in [*ROOT.glob("providers/*/harness_*"), *ROOT.glob("examples/*/src/*")] if p.is_dir()
)
VIEWER = ROOT / "web" / "harness_view"
EXECUTORS = sorted(p for p in ROOT.glob("executors/*/harness_*") if p.is_dir())
OBSERVERS = sorted(p for p in ROOT.glob("observers/*/harness_*") if p.is_dir())


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


CORE_FLOORS: tuple[tuple[str, ...], ...] = (
    ("harness_core.__main__",),
    ("harness_core.cli",),
    ("harness_core.testing",),
    ("harness_core", "harness_core.provider"),
    ("harness_core.batch", "harness_core.jobs"),
    ("harness_core.offline", "harness_core.trajectory"),
    ("harness_core._run",),
    ("harness_core.plugins",),
    ("harness_core.local_executor",),
    ("harness_core.hookspecs",),
    ("harness_core.executor", "harness_core.agentcli"),
    ("harness_core._provider_interface", "harness_core.tools"),
    ("harness_core.transport", "harness_core.jsonrpc", "harness_core.store", "harness_core.scripted"),
    ("harness_core._jsonlines", "harness_core.files", "harness_core._logging"),
    ("harness_core.errors", "harness_core.tooldisplay", "harness_core.spec", "harness_core.spans"),
    ("harness_core.events", "harness_core.redaction"),
    ("harness_core.capabilities", "harness_core.mcp", "harness_core.attachment"),
    ("harness_core._version", "harness_core._facade", "harness_core._moved"),
)
"""harness_core's floors, top first (docs/architecture.md): a module imports its own block or a lower floor, never
a higher one nor a sibling block on its own floor; every import counts (module level, in a function, under
TYPE_CHECKING). A block is a module or package prefix; the longest prefix places a module."""


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


def package_floors(package: str, floors: Floors) -> Floors:
    """`floors` (a PACKAGE_FLOORS entry) with full module names."""
    return tuple(tuple(package if block == "__init__" else f"{package}.{block}" for block in blocks)
                 for blocks in floors)


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
