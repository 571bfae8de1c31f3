"""`harness batch` on the local engine with the real pinned agent CLIs offline (harness-ray's tests, tox env `ray`,
installs them and the providers): a mixed batch succeeds with each task's own edit, and a batch killed with
SIGKILL leaves no agent process behind; its re-run finishes the rest.

Skipped where the providers are not installed (the core envs)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("harness_codex_appserver", reason="needs the providers (tox -e ray installs them)")
pytest.importorskip("harness_claude", reason="needs the providers (tox -e ray installs them)")

pytestmark = pytest.mark.real_cli
_DEADLINE = 300
_PROVIDERS = ("codex-appserver", "claude", "codex-exec")


def _env(tmp_path: Path) -> dict[str, str]:
    tools = os.environ.get("HARNESS_TOOLS_DIR", str(Path(__file__).resolve().parents[3] / ".tools"))
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return {**os.environ, "PATH": f"{tools}/bin:{os.environ.get('PATH', '')}",
            "HARNESS_RUNS_DIR": str(tmp_path / "runs"), "TMPDIR": str(tmp_path / "tmp")}


def _tasks(tmp_path: Path, count: int, wait: float) -> Path:
    path = tmp_path / "tasks.jsonl"
    with path.open("w") as out:
        for n in range(count):
            steps = [{"take_long": wait}] if wait else []
            steps += [{"write": f"out/f{n}.txt", "content": f"task {n}\n"}, {"say": f"wrote f{n}"}]
            task = {"id": f"t{n:02d}", "provider": _PROVIDERS[n % 3], "scenario": {"steps": steps}}
            out.write(json.dumps(task) + "\n")
    return path


def _results(tmp_path: Path) -> list[dict[str, object]]:
    path = tmp_path / "tasks.results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _ours(root: Path) -> list[int]:
    """Processes whose working directory is under `root` (this test's workspaces), this process excepted."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if cwd.startswith(str(root)):
            found.append(int(entry.name))
    return found


def test_a_mixed_batch_of_real_clis(tmp_path: Path) -> None:
    _tasks(tmp_path, 6, 0)
    done = subprocess.run([sys.executable, "-m", "harness_core", "batch", "tasks.jsonl", "--offline", "-j", "3"],
                          cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=_DEADLINE)
    assert done.returncode == 0, done.stderr
    results = {r["id"]: r for r in _results(tmp_path)}
    assert len(results) == 6
    for n in range(6):
        result = results[f"t{n:02d}"]
        assert result["status"] == "success" and result["provider"] == _PROVIDERS[n % 3], result
        assert result["files_changed"] == [f"out/f{n}.txt"]


def test_killed_batch_leaves_no_agent_behind_and_resumes(tmp_path: Path) -> None:
    _tasks(tmp_path, 9, 3.0)
    env = _env(tmp_path)
    batch = subprocess.Popen([sys.executable, "-m", "harness_core", "batch", "tasks.jsonl", "--offline", "-j", "3"],
                             cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + _DEADLINE
    while not _ours(tmp_path / "tmp") and time.monotonic() < deadline:  # agents live in their workspaces
        assert batch.poll() is None
        time.sleep(0.1)
    time.sleep(1.0)
    assert _ours(tmp_path / "tmp")
    os.kill(batch.pid, signal.SIGKILL)
    batch.wait(timeout=_DEADLINE)
    gone_by = time.monotonic() + 15
    while _ours(tmp_path / "tmp") and time.monotonic() < gone_by:
        time.sleep(0.1)
    assert _ours(tmp_path / "tmp") == []  # every agent CLI (and its children) went with the batch
    finished = {r["id"] for r in _results(tmp_path) if r["status"] == "success"}
    assert len(finished) < 9

    again = subprocess.run([sys.executable, "-m", "harness_core", "batch", "tasks.jsonl", "--offline", "-j", "3"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=_DEADLINE)
    assert again.returncode == 0, again.stderr
    final = _results(tmp_path)
    assert sorted(r["id"] for r in final if r["status"] == "success") == [f"t{n:02d}" for n in range(9)]
    assert {r["id"] for r in final[len(final) - (9 - len(finished)):]} == {f"t{n:02d}" for n in range(9)} - finished
