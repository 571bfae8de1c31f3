"""Fixtures of the batch tests: a plugin host with the offline-capable scripted provider (`scripted-offline`,
from the test plugin distribution tests/plugins/scripted), task files written from inline scenarios, the run logs
of a runs directory, and `harness batch` in a subprocess (for kills and signals)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness_core.events import EVENT_ADAPTER
from harness_core.plugins import PluginHost, reset_host

offline_plugin = pytest.importorskip("harness_test_scripted.offline",
                                     reason="install tests/plugins/scripted (tox does)")
PROVIDER = "scripted-offline"


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginHost]:
    monkeypatch.chdir(tmp_path)
    found = PluginHost.create(entry_points=False, plugins=[(PROVIDER, offline_plugin)])
    reset_host(found)
    monkeypatch.setenv("HARNESS_PROVIDER", PROVIDER)
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(tmp_path / "runs"))
    yield found
    reset_host(None)


def writes(name: str, content: str, *, wait: float = 0.0, say: str | None = None) -> dict[str, Any]:
    """An inline scenario that (after `wait` seconds) writes one file and says so."""
    steps: list[dict[str, Any]] = [{"take_long": wait}] if wait else []
    steps += [{"write": name, "content": content}, {"say": say or f"wrote {name}"}]
    return {"steps": steps}


def task_lines(path: Path, tasks: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return path


def read_results(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_logs(runs: Path) -> dict[str, list[Any]]:
    """run id → the events of its log (worker logs and wire logs left out)."""
    logs = {}
    for log in sorted(runs.glob("*.jsonl")):
        if log.name.count(".") == 1:
            logs[log.stem] = [EVENT_ADAPTER.validate_json(line) for line in log.read_text().splitlines() if line]
    return logs


def max_overlap(logs: dict[str, list[Any]]) -> int:
    """The most runs live at one instant, from each log's first and last (`done`) timestamps."""
    edges = []
    for events in logs.values():
        if not events:  # a run of a batch killed before its first line was flushed
            continue
        edges += [(events[0].ts, 1), (events[-1].ts, -1)]
    live = peak = 0
    for _, step in sorted(edges, key=lambda e: (e[0], e[1])):  # an end before a start at the same instant
        live += step
        peak = max(peak, live)
    return peak


def batch_process(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    """`harness batch ARGS` in a subprocess with only the scripted-offline plugin loaded; its stdout and stderr go
    to files beside (a pipe nobody reads while the test waits could fill up and stall it): `finish` reads them."""
    env = {**os.environ, "HARNESS_LOAD_PLUGINS": PROVIDER, "HARNESS_PROVIDER": PROVIDER,
           "HARNESS_RUNS_DIR": str(tmp_path / "runs"), "PYTHONDONTWRITEBYTECODE": "1"}
    count = len(list(tmp_path.glob("batch-*.out")))
    with (tmp_path / f"batch-{count}.out").open("w") as out, (tmp_path / f"batch-{count}.err").open("w") as err:
        process = subprocess.Popen([sys.executable, "-m", "harness_core", "batch", *args], cwd=tmp_path, env=env,
                                   stdout=out, stderr=err, text=True)
    process.outputs = (tmp_path / f"batch-{count}.out", tmp_path / f"batch-{count}.err")  # type: ignore[attr-defined]
    return process


def finish(process: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str, str]:
    """Wait for `batch_process`'s process; its exit status, stdout and stderr."""
    process.wait(timeout=timeout)
    out, err = process.outputs  # type: ignore[attr-defined]
    return process.returncode, out.read_text(), err.read_text()
