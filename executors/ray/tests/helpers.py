"""Tasks, batches and process lookups shared by the harness-ray tests.

Layer: tests of the executor plugin. Knows the batch API and /proc; counts only processes the tests started.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
from harness_core.batch import Batch, BatchTask, TaskResult, parse_tasks
from harness_core.events import parse_event
from harness_core.store import log_path

PROVIDERS = ("codex-appserver", "claude", "codex-exec")


def writing_tasks(count: int, *, in_worktree: bool = False) -> list[BatchTask]:
    """`count` offline tasks, the providers in turn, each writing (or, in a worktree, editing) its own file."""
    lines = []
    for n in range(count):
        steps: list[dict[str, Any]] = [{"write": f"out-{n}.txt", "content": f"task {n}\n"},
                                       {"say": f"Wrote out-{n}.txt for task {n}."}]
        if in_worktree:
            steps.insert(0, {"edit": "base.txt", "old": "base", "new": f"edited by {n}"})
        scenario: dict[str, Any] = {"steps": steps}
        lines.append(json.dumps({"id": f"task-{n:02d}", "provider": PROVIDERS[n % len(PROVIDERS)],
                                 "scenario": scenario}))
    return parse_tasks(lines, offline=True)


async def play(tasks: list[BatchTask], executor: Any, runs_dir: Path, **options: Any) -> dict[str, TaskResult]:
    batch = Batch(tasks, executor=executor, offline=True, runs_dir=runs_dir, **options)
    with anyio.fail_after(240):
        return {r.id: r async for r in batch.results()}


def event_types(runs_dir: Path, run_id: str) -> list[str]:
    return [parse_event(line).type for line in log_path(runs_dir, run_id).read_bytes().splitlines()]


def event_story(runs_dir: Path, run_id: str) -> tuple[list[str], Counter[str]]:
    """A run's event types in order without usage reports, and how many of each type there were.

    Where a usage report falls among tool events is the agent's timing, not Harness's: Codex reports token counts
    when the model's response completes, while the tool the response asked for runs concurrently and may end first.
    """
    types = event_types(runs_dir, run_id)
    return [t for t in types if t != "context_usage"], Counter(types)


def last_event(runs_dir: Path, run_id: str) -> Any:
    return parse_event(log_path(runs_dir, run_id).read_bytes().splitlines()[-1])


def descendants(pid: int) -> set[int]:
    """Every living process under `pid` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_gone(pids: set[int], seconds: float) -> set[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = {p for p in pids if alive(p)}
        if not left:
            return left
        time.sleep(0.1)
    return {p for p in pids if alive(p)}
