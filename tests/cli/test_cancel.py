"""`harness cancel` at its edges: `--timeout 0` sends the interrupt and does not wait; a stopped (Ctrl-Z, SIGSTOP)
`harness run` is named, with how to continue it, at once rather than after the timeout. Real `harness`
subprocesses, the scripted provider playing the runs (the main cancel tests are in `test_cli_attach.py`)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_core.store import list_runs
from tests.cli.test_attach import harness

_DEADLINE = 60.0


__all__ = ["harness"]  # the fixture, shared with tests.cli.test_attach


@pytest.fixture
def slow_run(harness: tuple[list[str], dict[str, str]], runs_dir: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A `harness run` that goes on (a slow answer) until interrupted, and its run id once it has started."""
    cmd, env = harness
    run = subprocess.Popen([*cmd, "run", "x", "-o", "scenario=slow_text"], env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, text=True)
    try:
        deadline = time.monotonic() + _DEADLINE
        while not [r for r in list_runs(runs_dir) if r.started is not None]:
            assert time.monotonic() < deadline and run.poll() is None, "the run never started"
            time.sleep(0.05)
        yield run, list_runs(runs_dir)[0].run_id
    finally:
        if run.poll() is None:
            os.kill(run.pid, signal.SIGCONT)
            run.kill()
        run.wait(timeout=_DEADLINE)


def test_timeout_0_sends_the_interrupt_and_does_not_wait(harness: tuple[list[str], dict[str, str]],
                                                           slow_run: tuple[subprocess.Popen[str], str]) -> None:
    cmd, env = harness
    run, run_id = slow_run
    sent = subprocess.run([*cmd, "cancel", run_id, "--timeout", "0"], env=env, capture_output=True, text=True,
                          timeout=_DEADLINE)
    assert sent.returncode == 0, sent.stderr
    assert sent.stdout.startswith(f"interrupt sent to run {run_id} (process {run.pid}); not waiting")
    assert run.wait(timeout=_DEADLINE) == 130  # it was interrupted all the same
    assert [r.status for r in list_runs(Path(env["HARNESS_RUNS_DIR"]))] == ["interrupted"]


def test_a_stopped_harness_is_named_with_how_to_continue_it(harness: tuple[list[str], dict[str, str]],
                                                            slow_run: tuple[subprocess.Popen[str], str]) -> None:
    cmd, env = harness
    run, run_id = slow_run
    os.kill(run.pid, signal.SIGSTOP)  # as Ctrl-Z in its terminal
    deadline = time.monotonic() + _DEADLINE
    while Path(f"/proc/{run.pid}/stat").read_text().rpartition(")")[2].split()[0] != "T":
        assert time.monotonic() < deadline, "the run never stopped"
        time.sleep(0.01)
    began = time.monotonic()
    stuck = subprocess.run([*cmd, "cancel", run_id, "--timeout", "20"], env=env, capture_output=True, text=True,
                           timeout=_DEADLINE)
    assert time.monotonic() - began < 15, "cancel waited for a run that cannot end"
    assert stuck.returncode == 1
    assert f"(process {run.pid}) is stopped (Ctrl-Z, or SIGSTOP)" in stuck.stderr
    assert f"`fg` in its terminal, or `kill -CONT {run.pid}`" in stuck.stderr
    os.kill(run.pid, signal.SIGCONT)  # the interrupt it was sent takes effect now
    assert run.wait(timeout=_DEADLINE) == 130


def test_a_command_cut_short_by_cancel_shows_cut_short(harness: tuple[list[str], dict[str, str]],
                                                       runs_dir: Path) -> None:
    """`harness cancel` while the agent runs a command: its line reads `⊘ … (cut short)`, in the run's own view
    and in `harness show`, not `✗ (failed)` (nor `✓`, as some agents report a cancelled command)."""
    cmd, env = harness
    run = subprocess.Popen([*cmd, "run", "x", "-o", "scenario=slow_command"], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + _DEADLINE
        while not any('"type":"tool_use"' in path.read_text() for path in runs_dir.glob("*.jsonl")):
            assert time.monotonic() < deadline and run.poll() is None, "the command never started"
            time.sleep(0.05)
        cancelled = subprocess.run([*cmd, "cancel", "last"], env=env, capture_output=True, text=True,
                                   timeout=_DEADLINE)
        assert cancelled.returncode == 0, cancelled.stderr
        _, view = run.communicate(timeout=_DEADLINE)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate(timeout=_DEADLINE)
    line = "[tool] ⊘ Running command echo waiting; sleep 30 (cut short)"
    assert line in view.splitlines(), view
    assert "failed" not in view
    shown = subprocess.run([*cmd, "show", "last"], env=env, capture_output=True, text=True, timeout=_DEADLINE)
    assert "⊘ Running command echo waiting; sleep 30 (cut short)" in shown.stdout, shown.stdout
