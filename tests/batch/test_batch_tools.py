"""A batch's Python tools: every attempt imports them again where it plays (by reference, as a Ray node does) and
its agent calls them through the `harness` MCP server."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from harness_core import InvalidSpecError, load_tools, tool
from harness_core.batch import Batch, TaskResult, parse_tasks
from harness_core.events import ToolResult
from harness_core.plugins import PluginHost
from tests.batch.conftest import run_logs

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tools.py"
pytestmark = pytest.mark.usefixtures("host")


def test_each_task_calls_the_batchs_tools(tmp_path: Path, host: PluginHost) -> None:
    steps = [{"mcp": {"server": "harness", "tool": "add", "args": {"a": 20, "b": 22}}}, {"say": "sum {tool_result}"}]
    tasks = parse_tasks([json.dumps({"id": f"t{n}", "scenario": {"steps": steps}}) for n in range(3)], offline=True)
    batch = Batch(tasks, concurrency=3, offline=True, results=tmp_path / "results.jsonl", host=host,
                  tools=load_tools(str(EXAMPLE)))

    async def main() -> list[TaskResult]:
        with anyio.fail_after(120):
            return [result async for result in batch.results()]

    results = anyio.run(main)
    assert all(r.ok for r in results), results
    logs = run_logs(tmp_path / "runs")
    outputs = sorted(e.output for events in logs.values() for e in events if isinstance(e, ToolResult))
    assert outputs == ["42", "42", "42"]
    assert {events[-1].result.final_text for events in logs.values()} == {"sum 42"}  # type: ignore[attr-defined]


def test_a_tool_no_worker_can_import_is_refused_before_anything_starts(tmp_path: Path, host: PluginHost) -> None:
    @tool
    def local(a: int) -> int:
        return a

    tasks = parse_tasks([json.dumps({"id": "t0", "prompt": "x"})], offline=True)
    with pytest.raises(InvalidSpecError, match="cannot be imported by another process"):
        Batch(tasks, offline=True, results=tmp_path / "results.jsonl", host=host, tools=[local])
