"""A finished run whose first line is large (a 10 MB prompt, a 50 MB schema) or whose last line is (a long
answer) is listed as it ended by `runs`, `show` and `summarize`, never as `lost`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness_core.plugins import get_host
from harness_core.store import list_runs, summarize

pytestmark = pytest.mark.skipif("scripted" not in get_host().providers,
                                reason="the scripted provider is not installed as a plugin (tox installs it)")


def _harness(runs_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HARNESS_PROVIDER": "scripted", "HARNESS_RUNS_DIR": str(runs_dir), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "harness_core", *args], env=env, text=True, capture_output=True,
                          timeout=120)


def _enlarged(runs_dir: Path, *, prompt: int = 0, schema: int = 0, answer: int = 0) -> Path:
    """A finished run's log, its `run_started` and `done` then grown as a run with that prompt, schema and answer
    would have written them."""
    assert _harness(runs_dir, "run", "x", "-o", "scenario=say").returncode == 0
    [log] = runs_dir.glob("*.jsonl")
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    if prompt:
        lines[0]["spec"]["prompt"] = "p" * prompt
    if schema:
        lines[0]["spec"]["output_schema"] = {"type": "object", "description": "d" * schema}
    if answer:
        lines[-1]["result"]["final_text"] = "a" * answer
    os.chmod(log, 0o600)
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return log


@pytest.mark.parametrize("size", [{"prompt": 10 << 20}, {"schema": 50 << 20}, {"answer": 5 << 20},
                                  {"prompt": 70_000, "answer": 2 << 20}])
def test_a_finished_run_with_a_large_first_or_last_line_reads_as_it_ended(tmp_path: Path,
                                                                         size: dict[str, int]) -> None:
    runs = tmp_path / "runs"
    log = _enlarged(runs, **size)
    summary = summarize(log)
    assert summary.status == "success" and summary.started is not None and summary.done is not None
    assert summary.started.provider == "scripted"
    assert [r.status for r in list_runs(runs)] == ["success"]
    listed = _harness(runs, "runs", "--json")
    assert json.loads(listed.stdout)[0]["status"] == "success"
    shown = _harness(runs, "show", "last")
    assert shown.returncode == 0 and "status    success" in shown.stdout
