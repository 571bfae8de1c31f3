"""`harness undo`'s body: the files a run changed put back as they were before it (and chat's `/undo` lines, which
say the same of its last turn).

Layer: CLI, loaded when the command runs; knows the undo plan and the run store; nothing of providers.
"""

from __future__ import annotations

from pathlib import Path

import click

from harness_core import FileUndo, UndoPlan, UndoRefusedError, apply_undo, plan_undo
from harness_core.store import find_run, log_path, resolve_runs_dir

__all__ = ["done_lines", "undo"]

_SAID = {"restore": "restored", "remove": "removed (the run created it)", "recreate": "recreated (the run deleted it)",
         "move back": "moved back"}


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


def done_lines(plan: UndoPlan, done: tuple[FileUndo, ...] | list[FileUndo], *, would: bool = False) -> list[str]:
    """What an undo did (or, `would`, would do), a line per file, then those already as before."""
    if not done and not plan.already:
        return [f"run {plan.run_id}: nothing to put back"]
    head = f"run {plan.run_id}: " + ("would put back" if would else "put back") + f" in {plan.cwd}"
    lines = [head] if done else []
    lines += [f"  {undo.path}: {_SAID[undo.action]}" + (f" from {undo.also}" if undo.also else "") for undo in done]
    if plan.already:
        what = ", ".join(plan.already)
        lines.append(f"run {plan.run_id}: already as before it: {what}" if not done else f"  already as before: {what}")
    return lines
