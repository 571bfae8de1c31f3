"""`harness run --background`: checked first, started in a detached worker that owns the run, followed by
`attach`, answered by `approve` or an attached terminal, stopped by `cancel`; all agree on the final status.

Real `harness` processes; the worker finds the scripted provider by its entry point (the test env installs
`tests/plugins/scripted`), so these run in the core tox envs. With every real CLI (and its fake), and the worker
SIGKILLed: the contract's `BackgroundTests` (`harness_core/testing/contract/_background.py`).
"""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from harness_core import AgentRunSpec, ApprovalDecision, RunStatus, jobs
from harness_core.events import ApprovalRequested, FileChange, HarnessToolDetails, RunStarted, ToolKind, ToolUse
from harness_core.jobs.answers import answers_path
from harness_core.plugins import get_host
from harness_core.store import LogWriter, list_runs, log_path, read_events, summarize

_DEADLINE = 60.0

pytestmark = pytest.mark.skipif("scripted" not in get_host().providers,
                                reason="the scripted provider is not installed as a plugin (tox installs it)")


@pytest.fixture
def harness(runs_dir: Path) -> Iterator[tuple[list[str], dict[str, str]]]:
    env = {**os.environ, "HARNESS_PROVIDER": "scripted", "HARNESS_RUNS_DIR": str(runs_dir), "NO_COLOR": "1"}
    yield [sys.executable, "-m", "harness_core"], env
    for summary in list_runs(runs_dir):  # leave no worker behind, whatever the test did
        if summary.writer_alive:
            subprocess.run([sys.executable, "-m", "harness_core", "cancel", summary.run_id, "--timeout", "20"],
                           env=env, capture_output=True, timeout=_DEADLINE)


def _start(cmd: list[str], env: dict[str, str], *args: str) -> str:
    started = subprocess.run([*cmd, "run", "--background", *args], env=env, capture_output=True, text=True,
                             timeout=_DEADLINE)
    assert started.returncode == 0, started.stderr
    return started.stdout.strip()


def _wait_status(path: Path, *wanted: str) -> str:
    deadline = time.monotonic() + _DEADLINE
    while time.monotonic() < deadline:
        status = summarize(path).status
        if status in wanted:
            return status
        time.sleep(0.05)
    raise AssertionError(f"{path.name} never reached {wanted} (now {summarize(path).status})")


def test_a_background_run_returns_at_once_and_attach_cancel_runs_agree(
        harness: tuple[list[str], dict[str, str]], runs_dir: Path) -> None:
    cmd, env = harness
    began = time.monotonic()
    run_id = _start(cmd, env, "x", "-o", "scenario=slow_text")
    assert time.monotonic() - began < 30  # the run takes 40 s: it was not waited for
    path = log_path(runs_dir, run_id)
    assert summarize(path).status == "running"  # the log is open and held before the id is printed
    watchers = [subprocess.Popen([*cmd, "attach", run_id[:17]], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for _ in range(2)]  # two attaches at once
    jsonl = subprocess.Popen([*cmd, "attach", run_id, "--json"], env=env, stdout=subprocess.PIPE, text=True)
    cancelled = subprocess.run([*cmd, "cancel", run_id], env=env, capture_output=True, text=True,
                               timeout=_DEADLINE)
    assert cancelled.returncode == 0 and "ended: interrupted" in cancelled.stdout, cancelled.stderr
    for watcher in watchers:
        out, err = watcher.communicate(timeout=_DEADLINE)
        assert watcher.returncode == 130, err
        assert "interrupted" in out.splitlines()[-1]
    lines = jsonl.communicate(timeout=_DEADLINE)[0].splitlines()
    assert jsonl.returncode == 130
    assert [json.loads(line)["seq"] for line in lines] == [e.seq for e in read_events(path)]
    listed = json.loads(subprocess.run([*cmd, "runs", "--json"], env=env, capture_output=True, text=True,
                                       timeout=_DEADLINE).stdout)
    assert [r["status"] for r in listed if r["run_id"] == run_id] == ["interrupted"]
    shown = subprocess.run([*cmd, "show", "last"], env=env, capture_output=True, text=True, timeout=_DEADLINE)
    assert run_id in shown.stdout and "interrupted" in shown.stdout


def test_json_prints_the_id_and_log_and_the_run_finishes_on_its_own(
        harness: tuple[list[str], dict[str, str]], runs_dir: Path) -> None:
    cmd, env = harness
    out = subprocess.run([*cmd, "run", "--background", "--json", "x", "-o", "scenario=tools"], env=env,
                         capture_output=True, text=True, timeout=_DEADLINE)
    assert out.returncode == 0, out.stderr
    started = json.loads(out.stdout)
    assert Path(started["log"]) == log_path(runs_dir, started["run_id"])
    attached = subprocess.run([*cmd, "attach", started["run_id"]], env=env, capture_output=True, text=True,
                              timeout=_DEADLINE)
    assert attached.returncode == 0 and "All four tools ran." in attached.stdout


@pytest.mark.parametrize(("args", "status", "says"), [
    (["x", "--provider", "nope"], 2, "no provider named 'nope'"),
    (["x", "-o", "scenario=say", "-o", "bogus=1"], 2, "bogus"),
    (["x", "-v"], 2, "harness attach -v"),
    (["x", "--require", "approvals", "--provider", "scripted"], 0, ""),
])
def test_everything_is_checked_before_anything_starts(harness: tuple[list[str], dict[str, str]], runs_dir: Path,
                                                      args: list[str], status: int, says: str) -> None:
    cmd, env = harness
    out = subprocess.run([*cmd, "run", "--background", *args], env=env, capture_output=True, text=True,
                         timeout=_DEADLINE)
    assert out.returncode == status, out.stderr
    assert says in out.stderr
    if status:
        assert out.stdout == "" and not list(runs_dir.glob("*.jsonl"))


def test_approvals_wait_and_are_answered_by_harness_approve(harness: tuple[list[str], dict[str, str]],
                                                            runs_dir: Path) -> None:
    cmd, env = harness
    run_id = _start(cmd, env, "x", "-o", "scenario=tools", "--approval", "untrusted")
    path = log_path(runs_dir, run_id)
    answered = 0
    while _wait_status(path, "waiting for approval", "success", "failed") == "waiting for approval":
        listed = subprocess.run([*cmd, "approve", run_id], env=env, capture_output=True, text=True,
                                timeout=_DEADLINE)
        assert listed.returncode == 0, listed.stderr
        request_id = listed.stdout.split()[0]
        decision = "deny" if answered == 0 else "allow"
        out = subprocess.run([*cmd, "approve", run_id[:17], request_id, decision], env=env, capture_output=True,
                             text=True, timeout=_DEADLINE)
        assert out.returncode == 0 and f"{request_id} {'denied' if decision == 'deny' else 'allowed'}" in out.stdout, \
            out.stderr
        answered += 1
    assert answered == 4 and summarize(path).status == "success"
    decisions = [e.decision for e in read_events(path) if e.type == "approval_resolved"]  # type: ignore[attr-defined]
    assert decisions == [ApprovalDecision.DENY] + [ApprovalDecision.APPROVE] * 3
    again = subprocess.run([*cmd, "approve", run_id, "approval_0", "allow"], env=env, capture_output=True,
                           text=True, timeout=_DEADLINE)
    assert again.returncode == 1 and "is over (success)" in again.stderr


def test_approve_lists_paths_relative_to_the_run(harness: tuple[list[str], dict[str, str]], runs_dir: Path) -> None:
    """An agent that names files by absolute path is listed as the live view shows it: the path relative to the
    run's directory, in the line and in the diff's headers (as an agent that names them relative is listed).
    The run's log is written here, held open as a live run's writer holds it."""
    cmd, env = harness
    run_id, work = "20261201T130000-eeee5555", "/srv/work"
    change = FileChange(path=f"{work}/f.txt", kind="add", diff=f"--- /dev/null\n+++ b{work}/f.txt\n@@ @@\n+x\n")
    display = HarnessToolDetails(kind=ToolKind.WRITE, title="Writing file", path=f"{work}/f.txt", changes=(change,))
    events = [RunStarted(provider="scripted", provider_version="1", spec={"prompt": "p", "cwd": work}),
              ToolUse(tool_id="t", name="write", display=display),
              ApprovalRequested(request_id="0", tool_id="t", display=display)]
    writer = LogWriter(log_path(runs_dir, run_id))
    try:
        for seq, event in enumerate(events):
            writer.write_line(event.model_copy(update={"run_id": run_id, "seq": seq}).model_dump_json().encode())
        writer.flush()
        answers_path(runs_dir, run_id).write_text("")  # a background run's
        listed = subprocess.run([*cmd, "approve", run_id], env=env, capture_output=True, text=True,
                                timeout=_DEADLINE)
    finally:
        writer.close()
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines()[0] == "0  Writing file f.txt", listed.stdout
    assert "+++ b/f.txt" in listed.stdout and work not in listed.stdout


def test_an_attached_terminal_answers_approvals(harness: tuple[list[str], dict[str, str]], runs_dir: Path) -> None:
    cmd, env = harness
    run_id = _start(cmd, env, "x", "-o", "scenario=tools", "--approval", "untrusted")
    controller, terminal = pty.openpty()
    attach = subprocess.Popen([*cmd, "attach", run_id], env=env, stdin=terminal, stdout=terminal, stderr=terminal)
    os.close(terminal)
    seen = b""
    try:
        deadline = time.monotonic() + _DEADLINE
        asked = 0
        while attach.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([controller], [], [], 0.5)
            if not ready:
                continue
            try:
                seen += os.read(controller, 4096)
            except OSError:
                break
            if seen.count(b"allow? [y]es") > asked:
                asked += 1
                os.write(controller, b"y\n")
        attach.wait(timeout=_DEADLINE)
    finally:
        os.close(controller)
        if attach.poll() is None:
            attach.kill()
    assert attach.returncode == 0, seen.decode(errors="replace")
    assert asked == 4 and b"All four tools ran." in seen
    resolved = [e for e in read_events(log_path(runs_dir, run_id)) if e.type == "approval_resolved"]
    assert [e.decision for e in resolved] == [ApprovalDecision.APPROVE] * 4  # type: ignore[attr-defined]
    assert {e.reason for e in resolved} == {"answered with harness attach"}  # type: ignore[attr-defined]
    assert seen.count(b"approved by you (with harness attach)") == 4  # where it was answered, each time


def test_the_run_survives_the_terminal_that_started_it(harness: tuple[list[str], dict[str, str]], runs_dir: Path,
                                                       tmp_path: Path) -> None:
    """A shell on a real pty (its controlling terminal) starts a background run that waits for approvals, then
    the terminal closes: the kernel hangs the shell up, the worker (a session of its own) goes on, and the run
    finishes once answered."""
    cmd, env = harness
    id_file, sid_file = tmp_path / "id", tmp_path / "sid"
    controller, terminal = pty.openpty()
    starter = " ".join(cmd)
    script = (f"ps -o sid= -p $$ > {sid_file}; "
              f"{starter} run --background x -o scenario=tools --approval untrusted > {id_file} 2>/dev/null; sleep 60")
    shell = subprocess.Popen(["setsid", "--ctty", "bash", "-c", script], env=env, stdin=terminal, stdout=terminal,
                             stderr=terminal)
    os.close(terminal)
    try:
        deadline = time.monotonic() + _DEADLINE
        while not (id_file.exists() and id_file.read_text().strip()):
            assert time.monotonic() < deadline, "the background run was never started"
            time.sleep(0.05)
        run_id = id_file.read_text().strip()
        path = log_path(runs_dir, run_id)
        assert _wait_status(path, "waiting for approval") == "waiting for approval"
        from harness_core.store import writer_pid

        worker = writer_pid(path)
        assert worker is not None  # in a session of its own: no terminal to hang it up
        assert os.getsid(worker) not in (int(sid_file.read_text()), os.getsid(0))
    finally:
        os.close(controller)  # the terminal closes: the shell is hung up (SIGHUP), and its sleep with it
    shell.wait(timeout=_DEADLINE)
    assert summarize(path).status == "waiting for approval"
    for _ in range(4):
        listed = subprocess.run([*cmd, "approve", run_id], env=env, capture_output=True, text=True,
                                timeout=_DEADLINE).stdout.split()
        assert listed, summarize(path).status
        subprocess.run([*cmd, "approve", run_id, listed[0], "allow"], env=env, capture_output=True, timeout=_DEADLINE)
        _wait_status(path, "waiting for approval", "success")
    assert _wait_status(path, "success") == "success"


def test_a_killed_worker_reads_as_lost_with_its_log_intact(harness: tuple[list[str], dict[str, str]],
                                                           runs_dir: Path) -> None:
    cmd, env = harness
    run_id = _start(cmd, env, "x", "-o", "scenario=slow_text")
    path = log_path(runs_dir, run_id)
    deadline = time.monotonic() + _DEADLINE
    while not any(e.type == "text_delta" for e in read_events(path)):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    from harness_core.store import writer_pid

    worker = writer_pid(path)
    assert worker is not None
    written = [e.seq for e in read_events(path)]
    os.kill(worker, signal.SIGKILL)
    assert _wait_status(path, "lost") == "lost"
    assert [e.seq for e in read_events(path)][:len(written)] == written  # what was written before is all there
    shown = subprocess.run([*cmd, "show", run_id], env=env, capture_output=True, text=True, timeout=_DEADLINE)
    assert "lost" in shown.stdout


@pytest.mark.filterwarnings("error::ResourceWarning")  # no Popen left unreaped by jobs.start
@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_jobs_api_starts_follows_answers_and_cancels(runs_dir: Path) -> None:
    async def main() -> None:
        job = await jobs.start(AgentRunSpec(prompt="x", approval="untrusted", provider_options={"scenario": "tools"}),
                               "scripted", runs_dir=runs_dir)
        assert job.status in ("running", "waiting for approval")
        types, reasons = [], []
        async for event in job.events():
            types.append(event.type)
            if event.type == "approval_requested":
                job.approve(event.request_id, "approve", by="a review bot")  # type: ignore[attr-defined]
            if event.type == "approval_resolved":
                reasons.append(event.reason)  # type: ignore[attr-defined]
        assert types[0] == "run_started" and types[-1] == "done" and types.count("approval_resolved") == 4
        assert reasons == ["answered with a review bot"] * 4  # who answered is in the run log
        result = await job.wait()
        assert result is not None and result.status is RunStatus.SUCCESS
        assert jobs.get("last", runs_dir=runs_dir).run_id == job.run_id
        assert jobs.list_jobs(runs_dir=runs_dir)[0].status == "success"

        slow = await jobs.start(AgentRunSpec(prompt="x", provider_options={"scenario": "slow_text"}), "scripted",
                                runs_dir=runs_dir)
        async for event in slow.events():
            if event.type == "text_delta":
                break  # leaving the iterator early stops following; the run goes on
        summary = await slow.cancel(timeout=_DEADLINE)
        assert summary.status == "interrupted"
        with pytest.raises(jobs.JobNotRunningError):
            slow.approve("approval_0", "approve")

    anyio.run(main)


def test_a_worker_keeps_its_stderr_in_a_private_worker_log(harness: tuple[list[str], dict[str, str]],
                                                           runs_dir: Path) -> None:
    """After `ready` the worker has no terminal: what it would print (here the runner's error log of a crashing
    provider) goes to `<run_id>.worker.log`, 0600; a run with nothing to say leaves none."""
    cmd, env = harness
    crashed = _start(cmd, env, "x", "-o", "scenario=tools", "-o", "crash=true")
    quiet = _start(cmd, env, "x", "-o", "scenario=say")
    for run_id in (crashed, quiet):
        _wait_status(log_path(runs_dir, run_id), "success", "failed")
    worker_log = runs_dir / f"{crashed}.worker.log"
    deadline = time.monotonic() + _DEADLINE
    while not (worker_log.exists() and "provider crashed" in worker_log.read_text()):
        assert time.monotonic() < deadline, "the worker's error log never reached its worker log"
        time.sleep(0.05)
    assert worker_log.stat().st_mode & 0o777 == 0o600
    deadline = time.monotonic() + _DEADLINE
    while (runs_dir / f"{quiet}.worker.log").exists():  # removed once the worker ends with nothing written
        assert time.monotonic() < deadline
        time.sleep(0.05)
