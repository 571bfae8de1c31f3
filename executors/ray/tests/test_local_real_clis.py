"""`harness batch` on the local engine with the real pinned agent CLIs offline (harness-ray's tests, tox env `ray`,
installs them and the providers): a mixed batch succeeds with each task's own edit, and a batch killed with
SIGKILL leaves no agent process behind; its re-run finishes the rest and removes what the killed runs left; a
task whose cwd does not exist stops the batch before any agent starts.

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


def _harness_made(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith("harness-"))


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
    assert _harness_made(tmp_path / "tmp")  # the killed runs' workspaces and agent state stay, for now

    again = subprocess.run([sys.executable, "-m", "harness_core", "batch", "tasks.jsonl", "--offline", "-j", "3"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=_DEADLINE)
    assert again.returncode == 0, again.stderr
    final = _results(tmp_path)
    assert sorted(r["id"] for r in final if r["status"] == "success") == [f"t{n:02d}" for n in range(9)]
    assert {r["id"] for r in final[len(final) - (9 - len(finished)):]} == {f"t{n:02d}" for n in range(9)} - finished
    # what the killed runs left (their workspaces, each agent's state) went with the resume, and it said so
    assert "temporary directories a killed Harness left" in again.stderr, again.stderr
    assert _harness_made(tmp_path / "tmp") == []  # (the agent CLIs' own temporary files are theirs)


def test_a_task_cwd_that_does_not_exist_is_refused_before_any_cli_starts(tmp_path: Path) -> None:
    """Online (no --offline: nothing would reach a model anyway), the real providers' checks pass for the other
    tasks, and the batch stops before any agent starts, naming the line; the directory is not created."""
    missing = tmp_path / "nonexistent" / "dir"
    (tmp_path / "tasks.jsonl").write_text("".join(json.dumps(task) + "\n" for task in [
        {"id": "here", "prompt": "hi", "provider": "codex-appserver", "cwd": str(tmp_path)},
        {"id": "gone", "prompt": "hi", "provider": "claude", "cwd": str(missing)},
    ]))
    done = subprocess.run([sys.executable, "-m", "harness_core", "batch", "tasks.jsonl"], cwd=tmp_path,
                          env=_env(tmp_path), capture_output=True, text=True, timeout=_DEADLINE)
    assert done.returncode == 2, done.stderr
    assert f"line 2: gone: cwd {missing} does not exist: create it first, or correct the path" in done.stderr
    assert not (tmp_path / "nonexistent").exists() and not (tmp_path / "runs").exists()
    assert _results(tmp_path) == []
