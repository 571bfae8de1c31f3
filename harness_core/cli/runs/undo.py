"""`harness undo`'s body: the files a run changed put back as they were before it (its lines: `records.undo_lines`).

Layer: CLI, loaded when the command runs; knows the undo plan and the run store; nothing of providers.
"""

from __future__ import annotations

from pathlib import Path

import click

from harness_core import UndoRefusedError, apply_undo, plan_undo
from harness_core.cli.records.undo_lines import done_lines
from harness_core.store import find_run, log_path, resolve_runs_dir

__all__ = ["undo"]


def undo(run_id: str, dry_run: bool, runs_dir: Path | None) -> None:
    """Put the files a run changed back as they were before it (RUN: a run id, a unique prefix of one, or `last`,
    the default): a file it edited gets its old content, a file it created is removed, a file it deleted comes
    back. Only while every one of them still holds what the run left: a file changed since is named and nothing
    is written. Only files an edit tool announced are followed (`harness show RUN` lists them under `changed`);
    what a shell command wrote is not. The agent is not told.

    Exit status: 0 put back (or already as before); 1 refused (each file in the way named); 2 no such run.
    """

    directory = resolve_runs_dir(runs_dir)
    found = find_run(directory, run_id)
    plan = plan_undo(log_path(directory, found))
    if plan.problems:
        raise UndoRefusedError(plan.refusal, run_id=found)
    if dry_run:
        for line in done_lines(plan, plan.files, would=True):
            click.echo(line)
        return
    for line in done_lines(plan, apply_undo(plan)):
        click.echo(line)


