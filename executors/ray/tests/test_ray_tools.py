"""A batch's Python tools on Ray: the node imports them again by reference (the file that defines them) and its
run serves them to the agent, which calls them through the `harness` MCP server — in the Ray worker, not here.

Layer: tests of the executor plugin (a Ray cluster on 127.0.0.1; the in-process scripted provider, found by its
entry point on the worker, plays the agent and makes a real MCP call).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest
from harness_core import load_tools
from harness_core.batch import Batch, TaskResult, parse_tasks
from harness_core.events import ToolResult, parse_event
from harness_core.plugins import get_host
from harness_core.store import log_path

from harness_ray import RayExecutor, RayOptions

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "tools.py"
pytestmark = [pytest.mark.real_cli, pytest.mark.usefixtures("ray_cluster"),
              pytest.mark.skipif("scripted" not in get_host().providers,
                                 reason="the scripted provider is not installed as a plugin (tox installs it)")]


def test_a_ray_node_imports_the_tools_again_and_the_agent_calls_them(tmp_path: Path) -> None:
    steps = [{"mcp": {"server": "harness", "tool": "add", "args": {"a": 40, "b": 2}}}, {"say": "sum {tool_result}"}]
    tasks = parse_tasks([json.dumps({"id": f"t{n}", "prompt": "add", "provider": "scripted",
                                     "provider_options": {"scenario": {"steps": steps}}}) for n in range(2)])
    executor = RayExecutor(RayOptions(num_cpus=0.25))
    batch = Batch(tasks, executor=executor, runs_dir=tmp_path / "runs", results=tmp_path / "results.jsonl",
                  tools=load_tools(str(EXAMPLE)))

    async def main() -> list[TaskResult]:
        with anyio.fail_after(240):
            return [r async for r in batch.results()]

    results = anyio.run(main)
    assert [r.status for r in results] == ["success", "success"], [r.error for r in results]
    for result in results:
        events = [parse_event(line) for line in log_path(tmp_path / "runs", result.run_id).read_bytes().splitlines()]
        assert [e.output for e in events if isinstance(e, ToolResult)] == ["42"]
        assert result.final_text == "sum 42"
        assert executor.placements[result.run_id].pid != os.getpid()  # played (and the tool called) on Ray
