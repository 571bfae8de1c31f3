"""Each provider, executor and viewer package keeps its floors (PACKAGE_FLOORS, the table of docs/import-rules.md),
by the core's rule: every import counted, its fakes' too, every module on a floor; shown failing on a made-up
package. Reads the source tree with `ast` (graph.py); imports no Harness module."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.architecture.graph import (
    _TOY,
    _TOY_FLOORS,
    EXECUTORS,
    OBSERVERS,
    PACKAGES,
    ROOT,
    VIEWER,
    Floors,
    _documented_floors,
    _rel,
    import_graph,
    layer_violations,
    package_floors,
)

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
        ("display", "_json", "auth", "options", "permissions", "toolconfig", "stdin", "mcpfile"),
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
        ("cli", "dialect", "errors", "argv", "auth", "rollout", "toolconfig", "tmpdir"),
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
    "harness_otel": (
        ("__init__",),
        ("observer",),
        ("metrics", "sdk"),
        ("settings",),
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
FLOORED_PACKAGES = [*PACKAGES, *EXECUTORS, *OBSERVERS, VIEWER]


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


def test_the_package_floors_are_documented() -> None:
    documented = _documented_floors((ROOT / "docs" / "import-rules.md").read_text())
    assert documented == PACKAGE_FLOORS, "docs/import-rules.md's package floors differ from PACKAGE_FLOORS: " + \
        ", ".join(sorted(p for p in {*documented, *PACKAGE_FLOORS} if documented.get(p) != PACKAGE_FLOORS.get(p)))


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
