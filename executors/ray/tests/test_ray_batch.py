"""`harness batch --engine ray` on a local Ray cluster with the real pinned CLIs, offline: the same results, logs
and patches as a local batch; a worker killed mid-task is retried; an interrupt ends every run cleanly; the CLI
end to end.

Layer: tests of the executor plugin (real CLIs, a scripted model on 127.0.0.1, a Ray cluster on 127.0.0.1).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from harness_core.batch import Batch, BatchUpdate, LocalExecutor, WorktreePlan, parse_tasks
from harness_core.events import RunStatus
from harness_core.store import log_path

from harness_ray import RayExecutor, RayOptions

from .helpers import descendants, event_story, event_types, last_event, play, wait_gone, writing_tasks

pytestmark = [pytest.mark.real_cli, pytest.mark.usefixtures("ray_cluster")]

COMPARED = ("status", "error_code", "files_changed", "final_text", "attempts")


def _ray() -> RayExecutor:
    return RayExecutor(RayOptions(num_cpus=0.25))


def test_twenty_tasks_give_the_results_and_logs_of_a_local_batch(tmp_path: Path) -> None:
    tasks = writing_tasks(20)
    executor = _ray()
    on_ray = anyio.run(play, tasks, executor, tmp_path / "ray")
    here = anyio.run(play, tasks, LocalExecutor(), tmp_path / "local")
    assert sorted(on_ray) == sorted(here) == [t.id for t in tasks]
    for task_id, result in on_ray.items():
        local = here[task_id]
        assert result.status == "success", (task_id, result.error)
        assert {f: getattr(result, f) for f in COMPARED} == {f: getattr(local, f) for f in COMPARED}, task_id
        assert event_story(tmp_path / "ray", result.run_id) == event_story(tmp_path / "local", local.run_id)
        assert executor.placements[result.run_id].node_ip == "127.0.0.1"
        assert executor.placements[result.run_id].pid != os.getpid()  # played in a Ray worker, not here


def _repo(path: Path) -> Path:
    path.mkdir()
    (path / "base.txt").write_text("base\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", str(path)]
    for args in (["init", "-q"], ["add", "base.txt"], ["commit", "-q", "-m", "base"]):
        subprocess.run([*git, *args], check=True, timeout=30, capture_output=True)
    return path


def test_worktree_patches_equal_a_local_batch(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo")
    tasks = writing_tasks(3, in_worktree=True)
    patches: dict[str, dict[str, str]] = {}
    for name, executor in (("ray", _ray()), ("local", LocalExecutor())):
        results = anyio.run(lambda ex=executor, n=name: play(
            tasks, ex, tmp_path / f"runs-{n}", worktrees=WorktreePlan(repo, "HEAD", tmp_path / f"wt-{n}"),
            patches=tmp_path / f"patches-{n}"))
        assert all(r.status == "success" for r in results.values()), results
        patches[name] = {t: Path(str(r.patch)).read_text() for t, r in results.items()}
    assert patches["ray"] == patches["local"]
    assert all("edited by" in text and "out-" in text for text in patches["ray"].values())


def _slow_then_quick(task_id: str) -> list[Any]:
    slow = {"steps": [{"write": "first.txt", "content": "1\n"}, {"take_long": 120}, {"say": "late"}]}
    quick = {"steps": [{"write": "first.txt", "content": "1\n"}, {"say": "done at once"}]}
    return parse_tasks([json.dumps({"id": task_id, "provider": "codex-exec", "scenario": [slow, quick]})],
                       offline=True)


async def _wait_for(check: Any, seconds: float) -> None:
    with anyio.fail_after(seconds):
        while not check():  # noqa: ASYNC110 - polling files and processes that others change
            await anyio.sleep(0.1)


def _has(runs_dir: Path, run_id: str, kind: str) -> bool:
    path = log_path(runs_dir, run_id)
    return path.exists() and f'"type":"{kind}"'.encode() in path.read_bytes()


def test_a_worker_killed_mid_task_is_retried_and_its_agent_goes_too(tmp_path: Path) -> None:
    executor = _ray()
    started: list[str] = []
    runs = tmp_path / "runs"
    batch = Batch(_slow_then_quick("killed"), executor=executor, offline=True, runs_dir=runs, retry=1,
                  retry_backoff=0.1, on_update=lambda u: started.append(u.run_id) if u.kind == "started" else None)
    seen: dict[str, Any] = {}

    async def main() -> list[Any]:
        results: list[Any] = []

        async def collect() -> None:
            results.extend([r async for r in batch.results()])

        with anyio.fail_after(240):
            async with anyio.create_task_group() as tg:
                tg.start_soon(collect)
                await _wait_for(lambda: started and _has(runs, started[0], "tool_result"), 120)
                worker = executor.placements[started[0]].pid
                seen["agents"] = descendants(worker)
                os.kill(worker, signal.SIGKILL)
        return results

    [result] = anyio.run(main)
    assert seen["agents"], "the worker had started no agent CLI"
    assert wait_gone(seen["agents"], 15) == set(), "an agent process outlived its killed Ray worker"
    assert result.status == "success" and result.attempts == 2 and result.final_text == "done at once"
    lost = last_event(runs, started[0])
    assert lost.type == "done" and lost.result.status is RunStatus.FAILED
    assert lost.result.error.code == "worker_lost" and lost.result.error.retryable
    types = event_types(runs, started[0])
    assert types[0] == "run_started" and types[-2:] == ["error", "done"]


def test_an_interrupt_ends_every_run_cleanly_with_complete_logs(tmp_path: Path) -> None:
    slow = {"steps": [{"write": "first.txt", "content": "1\n"}, {"take_long": 120}, {"say": "late"}]}
    lines = [json.dumps({"id": f"stop-{n}", "provider": p, "scenario": slow})
             for n, p in enumerate(("codex-appserver", "claude", "codex-exec"))]
    started: list[str] = []
    runs = tmp_path / "runs"

    def on_update(update: BatchUpdate) -> None:
        if update.kind == "started":
            started.append(update.run_id)

    batch = Batch(parse_tasks(lines, offline=True), executor=_ray(), offline=True, runs_dir=runs, concurrency=3,
                  on_update=on_update)

    async def main() -> list[Any]:
        results: list[Any] = []

        async def collect() -> None:
            results.extend([r async for r in batch.results()])

        with anyio.fail_after(240):
            async with anyio.create_task_group() as tg:
                tg.start_soon(collect)
                await _wait_for(lambda: len(started) == 3 and all(_has(runs, r, "tool_result") for r in started),
                                120)
                began = time.monotonic()
                batch.interrupt()
        assert time.monotonic() - began < 60
        return results

    results = anyio.run(main)
    assert sorted(r.status for r in results) == ["interrupted"] * 3
    for run_id in started:
        done = last_event(runs, run_id)
        assert done.type == "done" and done.result.status is RunStatus.INTERRUPTED
        assert event_types(runs, run_id)[0] == "run_started"


def test_the_cli_plays_a_batch_on_ray(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("\n".join(
        json.dumps({"id": f"cli-{n}", "provider": p, "scenario": {"steps": [
            {"write": f"f{n}.txt", "content": "x\n"}, {"say": f"ok {n}"}]}})
        for n, p in enumerate(("codex-exec", "claude"))) + "\n")
    results = tmp_path / "results.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "harness_core", "batch", str(tasks), "--offline", "--engine", "ray",
         "-E", "num_cpus=0.5", "-E", "local_cpus=2", "--results", str(results), "--runs-dir", str(tmp_path / "runs")],
        capture_output=True, text=True, timeout=180, env={**os.environ, "RAY_ADDRESS": ""})
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert sorted((r["id"], r["status"]) for r in lines) == [("cli-0", "success"), ("cli-1", "success")]
    assert "ray (local cluster" in proc.stderr
    for row in lines:
        assert log_path(tmp_path / "runs", row["run_id"]).exists()


def test_no_cluster_at_the_address_says_what_to_do(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"  # in a process of its own: Ray is initialised in this one (and then used)
    tasks.write_text(json.dumps({"id": "t", "provider": "codex-exec"}) + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "harness_core", "batch", str(tasks), "--offline", "--engine", "ray",
         "--address", "127.0.0.1:9", "-E", "connect_timeout=2", "--runs-dir", str(tmp_path / "runs")],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "no Ray cluster answers at 127.0.0.1:9" in proc.stderr and "ray start --head" in proc.stderr, proc.stderr
