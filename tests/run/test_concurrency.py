"""Runs side by side stay apart: 32 runs at once in one process, 16 `harness run` processes at once. Each
gets its own complete log, its own events and its own workspace changes; none waits for another."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

import harness_core.testing.scripted as scripted
from harness_core import open_run
from harness_core.events import Done, HarnessEvent, RunStatus
from harness_core.plugins import PluginHost, reset_host
from harness_core.spec import AgentRunSpec
from harness_core.store import list_runs, read_events

_WRAPPER = """
import harness_core.testing.scripted as scripted
from harness_core.plugins import PluginHost, reset_host
reset_host(PluginHost.create(entry_points=False, plugins=[("scripted", scripted)]))
from harness_core.cli import main
main()
"""


@pytest.mark.anyio
async def test_thirty_two_runs_at_once_in_one_process(tmp_path: Path, runs_dir: Path) -> None:
    host = PluginHost.create(entry_points=False, plugins=[("scripted", scripted)])
    reset_host(host)
    seen: dict[int, list[HarnessEvent]] = {}

    async def one(index: int) -> None:
        workspace = tmp_path / f"ws{index}"
        workspace.mkdir()
        (workspace / "notes.txt").write_text("alpha\n")
        spec = AgentRunSpec(prompt=f"run {index}", cwd=workspace, provider_options={"scenario": "tools"})
        async with open_run(spec, "scripted", host=host, runs_dir=runs_dir) as live:
            seen[index] = [event async for event in live]

    try:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                for index in range(32):
                    tg.start_soon(one, index)
    finally:
        reset_host(None)
    assert sorted(seen) == list(range(32))
    run_ids = {events[0].run_id for events in seen.values()}
    assert len(run_ids) == 32, "every run has its own id"
    for index, events in seen.items():
        done = events[-1]
        assert isinstance(done, Done) and done.result.status is RunStatus.SUCCESS, done
        assert events[0].spec["prompt"] == f"run {index}"  # type: ignore[union-attr]
        assert list(read_events(runs_dir / f"{events[0].run_id}.jsonl")) == events, "each log is its own run"
        assert (tmp_path / f"ws{index}" / "notes.txt").read_text() == "beta\n"


def test_sixteen_harness_processes_at_once(tmp_path: Path, runs_dir: Path) -> None:
    script = tmp_path / "harness_scripted.py"
    script.write_text(_WRAPPER)
    env = {**os.environ, "HARNESS_PROVIDER": "scripted", "HARNESS_RUNS_DIR": str(runs_dir), "NO_COLOR": "1"}
    children = []
    for index in range(16):
        workspace = tmp_path / f"ws{index}"
        workspace.mkdir()
        (workspace / "notes.txt").write_text("alpha\n")
        children.append(subprocess.Popen(
            [sys.executable, str(script), "run", "--cwd", str(workspace), "-o", "scenario=tools", f"run {index}"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outcomes = [child.communicate(timeout=120) for child in children]
    for index, (child, (out, err)) in enumerate(zip(children, outcomes, strict=True)):
        assert child.returncode == 0, (index, out, err)
        assert "All four tools ran." in out
        assert (tmp_path / f"ws{index}" / "notes.txt").read_text() == "beta\n"
    runs = list_runs(runs_dir)
    assert len(runs) == 16 and {r.status for r in runs} == {"success"}
    assert sorted(r.as_json()["prompt"] for r in runs) == sorted(f"run {i}" for i in range(16))
