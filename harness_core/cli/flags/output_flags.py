"""The checks of `harness run`'s output flags (`-q`, `--json`, `--background`, `--output-last-message FILE`),
made before anything starts.

Layer: CLI start-up (click and the standard library only); knows paths and flags, nothing of runs.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

__all__ = ["check_answer_file", "check_output_flags"]


def check_answer_file(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """Click callback of `--output-last-message FILE`: its directory must exist and be writable, before the run
    starts (a usage error saying what to do otherwise)."""
    if value is None:
        return None
    parent = value.parent if str(value.parent) else Path(".")
    if not parent.is_dir():
        raise click.BadParameter(f"{value}: the directory {parent} does not exist; create it first (mkdir -p "
                                 f"{parent}) or name a file in an existing directory", ctx, param)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise click.BadParameter(f"{value}: the directory {parent} is not writable; name a file in a directory "
                                 "you can write to", ctx, param)
    if value.is_dir():
        raise click.BadParameter(f"{value} is a directory; name a file (it is created or replaced)", ctx, param)
    return value


def check_output_flags(*, quiet: bool, as_json: bool, background: bool, output_last_message: Path | None) -> None:
    """Usage errors among `-q`, `--json`, `--background` and `--output-last-message`, before anything starts."""
    if quiet and as_json:
        raise click.UsageError("-q prints only the final answer and --json every event: pass one of them")
    if background and (quiet or output_last_message is not None):
        raise click.UsageError("-q and --output-last-message are for a foreground run; a background run's answer "
                               "is in its log: `harness attach RUN_ID`, or `harness show RUN_ID --json` "
                               "(its final_text)")


JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
