"""The core keeps its floors (CORE_FLOORS, drawn as docs/architecture.md's map), and so do the blocks with
floors inside: the CLI (CLI_FLOORS, whose command groups never import each other) and the runner (RUN_FLOORS);
every import counts, and each check is shown failing on an added edge. Reads the source tree with `ast` (graph.py);
imports no Harness module."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.architecture.graph import (
    CORE,
    CORE_FLOORS,
    ROOT,
    Floors,
    _documented_floors,
    import_cycles,
    import_graph,
    layer_violations,
    package_floors,
)

CLI_FLOORS: Floors = (
    ("harness_core.cli.__main__",),
    ("harness_core.cli",),
    ("harness_core.cli.run", "harness_core.cli.chat", "harness_core.cli.runs", "harness_core.cli.providers",
     "harness_core.cli.config", "harness_core.cli.batch", "harness_core.cli.trace", "harness_core.cli.view"),
    ("harness_core.cli.foreground",),
    ("harness_core.cli.flags",),
    ("harness_core.cli.complete",),
    ("harness_core.cli.records", "harness_core.cli.settings"),
    ("harness_core.cli.exits", "harness_core.cli.output", "harness_core.cli.event_loop"),
    ("harness_core.cli.stderr_log", "harness_core.cli.render", "harness_core.cli.flag_words"),
)
"""The CLI's floors inside its block of CORE_FLOORS, top first (docs/import-rules.md): the entry (`cli/__init__`,
which registers every command), the command groups (sibling blocks: no group imports another; what two groups
share is on a floor below them), then the CLI base. `harness_core.cli` itself is the package's `__init__` only."""
CLI_TABLE = "CLI_FLOORS and docs/import-rules.md"


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
