"""`harness cancel`'s body: a run interrupted from another terminal, through the `harness` process that drives it
(which holds its log's writer lock): a first SIGINT interrupts the turn, a second stops it at once.

Layer: CLI, loaded when the command runs; knows the run store and process facts; nothing of providers.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import click

from harness_core.cli.exits import EXIT_FAILED, EXIT_USAGE, fail
from harness_core.jobs.driver_facts import is_harness_run, process_argv, process_state
from harness_core.store import find_run, log_path, resolve_runs_dir, summarize, writer_pid

__all__ = ["cancel"]

_POLL = 0.1


def cancel(run_id: str, runs_dir: Path | None, timeout: float) -> None:
    """Interrupt a running run (RUN_ID: a run id, a unique prefix of one, or `last`): the `harness` process that
    drives it stops the turn through its provider, as Ctrl-C in its terminal would, and completes its log. Cancel
    a run that is still stopping again to stop it at once. A run that already ended is left as it is.

    Exit status: 0 the run ended (or had ended; with --timeout 0, the interrupt was sent); 1 it did not end within
    --timeout, it is lost, or its Harness is stopped (Ctrl-Z: continue it with `fg` or `kill -CONT PID`); 2 it is
    not driven by a `harness` command (stop it in the program that runs it).
    """

    directory = resolve_runs_dir(runs_dir)
    found = find_run(directory, run_id)
    path = log_path(directory, found)
    before = summarize(path)
    if before.done is None and not before.writer_alive:
        before = summarize(path)  # the writer may have completed the log between reading it and checking its lock
    if before.done is not None:
        click.echo(f"run {found} already ended ({before.status}); nothing to cancel")
        return
    pid = writer_pid(path)
    if pid is None:
        now = summarize(path)
        if now.done is not None:
            click.echo(f"run {found} already ended ({now.status}); nothing to cancel")
            return
        if not now.writer_alive:
            fail(f"run {found} is lost: its Harness ended before the run did, so there is nothing to cancel "
                 f"(`harness show {found}` shows what it did)", EXIT_FAILED)
        fail(f"the process that drives run {found} is not visible here (another container or pid namespace, or no "
             "/proc/locks); stop it in its terminal", EXIT_FAILED)
    argv = process_argv(pid)
    if not is_harness_run(argv):
        fail(f"run {found} is driven by process {pid} ({' '.join(argv) or 'unknown'}), not a `harness run` "
             "command; stop it in the program that runs it (LiveRun.interrupt())", EXIT_USAGE)
    try:
        os.kill(pid, signal.SIGINT)
    except ProcessLookupError:  # it ended just now
        pass
    except PermissionError:
        fail(f"not allowed to signal process {pid}, which drives run {found} (another user's run?); stop it "
             "in its terminal", EXIT_FAILED)
    _fail_if_stopped(found, pid)
    if not timeout:
        click.echo(f"interrupt sent to run {found} (process {pid}); not waiting for it to end (`harness attach "
                   f"{found}` follows it to its end)")
        return
    click.echo(f"asked run {found} to stop (process {pid})", err=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = summarize(path)
        if now.done is None and not now.writer_alive:
            now = summarize(path)  # gone: the log is final now (it may have been completed in between)
        if now.done is not None:
            click.echo(f"run {found} ended: {now.status}")
            return
        if not now.writer_alive:
            fail(f"run {found}'s Harness ended without completing its log: it is {now.status}", EXIT_FAILED)
        _fail_if_stopped(found, pid)  # stopped while we wait (Ctrl-Z in its terminal): it will not end by itself
        time.sleep(_POLL)
    fail(f"run {found} has not ended after {timeout:g} s; `harness cancel {found}` again stops it at once",
         EXIT_FAILED)


def _fail_if_stopped(run_id: str, pid: int) -> None:
    """Exit 1 at once when the run's Harness is stopped: the interrupt it was sent waits until it continues."""

    state = process_state(pid)
    if state == "T":
        fail(f"run {run_id}'s Harness (process {pid}) is stopped (Ctrl-Z, or SIGSTOP), so the interrupt sent to it "
             f"takes effect only when it continues: `fg` in its terminal, or `kill -CONT {pid}`", EXIT_FAILED)
    if state == "t":
        fail(f"run {run_id}'s Harness (process {pid}) is stopped in a debugger, so the interrupt sent to it takes "
             "effect only when the debugger lets it continue", EXIT_FAILED)
