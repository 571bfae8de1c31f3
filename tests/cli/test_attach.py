"""`harness attach`: a run followed live from another process, until it ends, with its exit status; a finished
run shown whole; a lost run named; Ctrl-C stops watching and the run goes on. Real `harness` subprocesses,
the scripted provider playing the runs."""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_core.events import (
    HarnessToolDetails,
    RunStarted,
    TextDelta,
    ToolKind,
    ToolResult,
    ToolStatus,
    ToolUse,
)
from harness_core.store import LogWriter, list_runs
from tests.cli.test_cli import WRAPPER

_DEADLINE = 60.0


@pytest.fixture
def harness(tmp_path: Path, runs_dir: Path) -> Iterator[tuple[list[str], dict[str, str]]]:
    script = tmp_path / "harness"  # named as the console script: `harness cancel` signals only `harness run`
    script.write_text(WRAPPER)
    env = {**os.environ, "HARNESS_PROVIDER": "scripted", "HARNESS_RUNS_DIR": str(runs_dir), "NO_COLOR": "1"}
    yield [sys.executable, str(script)], env


def _running_run(runs_dir: Path) -> str:
    """The id of the run that appears in `runs_dir`, once its log has its first event."""
    deadline = time.monotonic() + _DEADLINE
    while time.monotonic() < deadline:
        found = [r for r in list_runs(runs_dir) if r.started is not None]
        if found:
            return found[0].run_id
        time.sleep(0.05)
    raise AssertionError("the run never started")


def test_attach_follows_a_live_run_to_its_end_and_exits_with_its_status(
        harness: tuple[list[str], dict[str, str]], runs_dir: Path) -> None:
    cmd, env = harness
    run = subprocess.Popen([*cmd, "run", "x", "-o", "scenario=slow_text"], env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        run_id = _running_run(runs_dir)
        watcher = subprocess.Popen([*cmd, "attach", run_id[:17]], env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)  # let both stream for a while: an observation window, not a synchronisation
        assert watcher.poll() is None, "attach returned while the run was still going"
        run.send_signal(signal.SIGINT)  # the run ends (interrupted); the watcher sees its `done` and ends too
        out, err = watcher.communicate(timeout=_DEADLINE)
    finally:
        if run.poll() is None:
            run.kill()
        run.wait(timeout=_DEADLINE)
    assert watcher.returncode == 130, err
    assert out.startswith("a slow") and "interrupted" in out.splitlines()[-1]  # the streamed text, then the end


def test_attach_to_a_finished_run_shows_it_whole(harness: tuple[list[str], dict[str, str]]) -> None:
    cmd, env = harness
    assert subprocess.run([*cmd, "run", "x", "-o", "scenario=tools"], env=env, capture_output=True,
                          timeout=_DEADLINE).returncode == 0
    shown = subprocess.run([*cmd, "attach"], env=env, capture_output=True, text=True, timeout=_DEADLINE)
    assert shown.returncode == 0 and "All four tools ran." in shown.stdout and "✓ Editing file" in shown.stdout
    lines = subprocess.run([*cmd, "attach", "last", "--json"], env=env, capture_output=True, text=True,
                           timeout=_DEADLINE).stdout.splitlines()
    assert json.loads(lines[0])["type"] == "run_started" and json.loads(lines[-1])["type"] == "done"


def test_a_lost_run_shows_what_its_log_holds_and_exits_1(harness: tuple[list[str], dict[str, str]],
                                                          runs_dir: Path) -> None:
    """Its text, its tools, the command it was running when its Harness died (which never got a result), then
    why the log ends there."""
    cmd, env = harness
    rid = "20261201T130000-dddd4444"
    shell = HarnessToolDetails(kind=ToolKind.SHELL, title="Running command", command="pytest -q")
    events = [RunStarted(provider="scripted", provider_version="1", spec={"prompt": "p"}),
              TextDelta(text="working on it\n"), ToolUse(tool_id="a", name="shell", display=shell),
              ToolResult(tool_id="a", name="shell", display=shell.model_copy(update={
                  "status": ToolStatus.COMPLETED, "exit_code": 0})),
              ToolUse(tool_id="b", name="shell", display=shell.model_copy(update={"command": "sleep 30"}))]
    writer = LogWriter(runs_dir / f"{rid}.jsonl")
    for seq, event in enumerate(events):
        writer.write_line(event.model_copy(update={"run_id": rid, "seq": seq, "ts": 1.0 + seq}).model_dump_json()
                          .encode())
    writer.close()
    lost = subprocess.run([*cmd, "attach", "20261201T130000"], env=env, capture_output=True, text=True,
                          timeout=_DEADLINE)
    assert lost.returncode == 1
    assert lost.stdout.splitlines() == [
        "working on it",
        "[tool] ✓ Running command pytest -q (exit 0)",
        "[tool] Running command sleep 30 … (no result: the log ends here)",
    ], lost.stdout
    assert f"run {rid} is lost: its Harness ended before the run did" in lost.stderr
    as_json = subprocess.run([*cmd, "attach", "last", "--json"], env=env, capture_output=True, text=True,
                             timeout=_DEADLINE)
    assert as_json.returncode == 1 and len(as_json.stdout.splitlines()) == 5 and "is lost" in as_json.stderr


def test_ctrl_c_stops_watching_and_the_run_goes_on(harness: tuple[list[str], dict[str, str]],
                                                   runs_dir: Path) -> None:
    cmd, env = harness
    run = subprocess.Popen([*cmd, "run", "x", "-o", "scenario=slow_text"], env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    try:
        run_id = _running_run(runs_dir)
        watcher = subprocess.Popen([*cmd, "attach", run_id], env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        assert watcher.stdout is not None
        ready, _, _ = select.select([watcher.stdout], [], [], _DEADLINE)  # it follows: the run's text arrives
        assert ready, "attach showed nothing of the running run"
        watcher.send_signal(signal.SIGINT)
        _, err = watcher.communicate(timeout=_DEADLINE)
        assert watcher.returncode == 130 and "the run goes on" in err
        assert run.poll() is None and [r.status for r in list_runs(runs_dir)] == ["running"]
    finally:
        run.send_signal(signal.SIGINT)
        run.wait(timeout=_DEADLINE)


# --- harness cancel ---------------------------------------------------------------------------------------

def test_cancel_interrupts_a_run_through_the_process_that_drives_it(
        harness: tuple[list[str], dict[str, str]], runs_dir: Path) -> None:
    cmd, env = harness
    run = subprocess.Popen([*cmd, "run", "x", "-o", "scenario=slow_text"], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        run_id = _running_run(runs_dir)
        cancelled = subprocess.run([*cmd, "cancel", run_id[:20]], env=env, capture_output=True, text=True,
                                   timeout=_DEADLINE)
        assert cancelled.returncode == 0, cancelled.stderr
        assert cancelled.stdout.strip() == f"run {run_id} ended: interrupted"
        assert run.wait(timeout=_DEADLINE) == 130  # the run's own terminal saw an interrupt
        again = subprocess.run([*cmd, "cancel", "last"], env=env, capture_output=True, text=True, timeout=_DEADLINE)
        assert again.returncode == 0 and "already ended (interrupted); nothing to cancel" in again.stdout
    finally:
        if run.poll() is None:
            run.kill()
        run.communicate(timeout=_DEADLINE)
    logged = next(r for r in list_runs(runs_dir) if r.run_id == run_id)
    assert logged.done is not None and logged.done.result.error.details["stopped_by"] == "provider"


def test_cancel_of_a_lost_run_or_one_not_driven_by_harness(harness: tuple[list[str], dict[str, str]],
                                                            runs_dir: Path) -> None:
    cmd, env = harness
    writer = LogWriter(runs_dir / "20261201T130000-dddd4444.jsonl")  # held by this test process: not `harness`
    writer.write_line(RunStarted(run_id="20261201T130000-dddd4444", seq=0, ts=1.0, provider="scripted",
                                 provider_version="1", spec={"prompt": "p"}).model_dump_json().encode())
    writer.flush()
    try:
        foreign = subprocess.run([*cmd, "cancel", "20261201T130000"], env=env, capture_output=True, text=True,
                                 timeout=_DEADLINE)
        assert foreign.returncode == 2 and f"process {os.getpid()}" in foreign.stderr, foreign.stderr
    finally:
        writer.close()
    lost = subprocess.run([*cmd, "cancel", "20261201T130000"], env=env, capture_output=True, text=True,
                          timeout=_DEADLINE)
    assert lost.returncode == 1 and "is lost" in lost.stderr


@pytest.mark.parametrize(("argv", "is_harness"), [
    (["/venv/bin/harness", "run", "x"], True),
    (["/venv/bin/python", "/venv/bin/harness", "run", "x"], True),
    (["/venv/bin/python3.11", "-m", "harness_core", "run", "x"], True),
    (["/venv/bin/python", "-m", "harness_core.cli", "run", "x"], True),
    (["/venv/bin/harness", "demo"], False),  # no interrupt handling: SIGINT would abort it
    (["/venv/bin/python", "-m", "pytest", "/home/u/harness/tests"], False),  # a test runner is never signalled
    (["/venv/bin/pytest", "/home/u/src/harness"], False),
    (["python", "app.py", "/data/harness"], False),
    (["vim", "harness"], False),
    (["python", "harness_nightly.py", "run"], False),
    ([], False),
])
def test_only_harness_run_is_signalled(argv: list[str], is_harness: bool) -> None:
    from harness_core.jobs.driver_facts import is_harness_run

    assert is_harness_run(argv) is is_harness


def test_writer_pid_is_the_writer_never_a_reader(tmp_path: Path) -> None:
    from harness_core.store import writer_pid

    log = tmp_path / "r.jsonl"
    log.write_text("")
    reader = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1]); "
                               "fcntl.flock(f, fcntl.LOCK_SH); print('locked', flush=True); time.sleep(30)", str(log)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert reader.stdout is not None and reader.stdout.readline() == "locked\n"
        assert writer_pid(log) is None  # a reader's shared lock (`harness runs` checking liveness) is no writer
    finally:
        reader.kill()
        reader.wait(timeout=_DEADLINE)
    with log.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert writer_pid(log) == os.getpid()
