"""`harness attach`'s body: a run shown from its first event and followed live, from any terminal, until it ends
(it reads the run's log, so it works for any run, started anywhere).

Layer: CLI, loaded when the command runs; knows the run store's log and the live view; nothing of providers or
the runner.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from harness_core import Done, HarnessResult
from harness_core.cli.exits import EXIT_FAILED, fail
from harness_core.cli.foreground.live import exit_status_for
from harness_core.cli.render import Renderer
from harness_core.cli.runs.approve import AnswerHints, TerminalAnswers
from harness_core.jobs.answers import AnswersFile, answers_path
from harness_core.store import TRUNCATED, BadLine, find_run, follow_events, log_path, resolve_runs_dir, summarize

__all__ = ["attach"]


def attach(run_id: str, runs_dir: Path | None, as_json: bool, verbose: int) -> None:
    """Show a run from its first event and follow it live until it ends (RUN_ID: a run id, a unique prefix of
    one, or `last`, the default); on a finished run, show it whole. Ctrl-C stops watching: the run goes on. On a
    terminal, a background run's approval requests are asked here (or answer them with `harness approve`).

    Exit status: the run's, as for `harness run` (0, 1, 3, 130); 1 for a run that was lost (its Harness ended
    before the run did); 130 when you stop watching.
    """

    directory = resolve_runs_dir(runs_dir)
    found = find_run(directory, run_id)
    renderer = None if as_json else Renderer.for_stream(sys.stdout, verbose=verbose > 0, environ=os.environ)
    asker = _asker(directory, found, renderer)
    result: HarnessResult | None = None
    bad: list[BadLine] = []
    tick = renderer.tick if renderer is not None else None
    on_wait = asker.and_then(tick) if asker is not None else tick
    try:
        for event in follow_events(log_path(directory, found), on_bad_line=bad.append, on_wait=on_wait):
            if renderer is None:
                click.echo(event.model_dump_json())
            else:
                renderer.feed(event)
            if asker is not None:
                asker.feed(event)
            if isinstance(event, Done):
                result = event.result
    except KeyboardInterrupt:
        if renderer is not None:
            renderer.close()
        click.echo(f"harness: stopped watching {found}; the run goes on (`harness attach {found}` to watch it "
                   f"again, `harness cancel {found}` to stop it)", err=True)
        sys.exit(130)
    for line in bad:
        click.echo(f"harness: skipped {line.describe()}", err=True)
    if renderer is not None:
        if result is None:  # what the log holds, to its end: the tools it left running too
            renderer.log_ended()
        renderer.close()
    if result is None and summarize(log_path(directory, found)).status == TRUNCATED:
        fail(f"run {found}'s log is truncated: writing it failed (a full disk or an I/O error), so the run was "
             f"stopped (log_write_failed) and its log ends without its result; `harness show {found}` shows what "
             "it did", EXIT_FAILED)
    if result is None:
        fail(f"run {found} is lost: its Harness ended before the run did (killed, or the machine went down), so its "
             f"log has no result; `harness show {found}` shows what it did", EXIT_FAILED)
    sys.exit(exit_status_for(result))


def _asker(directory: Path, run_id: str, renderer: Renderer | None) -> TerminalAnswers | AnswerHints | None:
    """A background run's approval requests: asked when this attach has a terminal to ask on, else named once
    each with the command that answers them. None for a run that asks its own terminal (a foreground run)."""

    path = answers_path(directory, run_id)
    if not path.exists():
        return None
    if renderer is None or not (sys.stdin.isatty() and sys.stderr.isatty()):
        return AnswerHints(run_id)
    return TerminalAnswers(AnswersFile(path), renderer, run_id)
