"""`harness demo`'s body: the README's first command, a short task through every installed provider's real CLI,
offline, compared side by side (played by `providers.play`).

Layer: CLI, loaded when the command runs; knows no concrete provider.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import click

from harness_core.cli.event_loop import run_async
from harness_core.cli.output import dumps
from harness_core.cli.providers.play import format_summary, play_all
from harness_core.cli.render.layout import output_width
from harness_core.plugins import get_host

__all__ = ["demo"]



def demo(providers: tuple[str, ...], scenario: str, keep_workspace: bool, runs_dir: Path | None,
         as_json: bool) -> None:
    """Play a short task through every installed provider's real CLI, offline, and compare them side by side.

    Each provider runs against the embedded scripted model backend on 127.0.0.1 (no credentials, no network)
    in its own temporary workspace, removed after its run unless --keep-workspace; the runs are logged as usual
    (`harness show RUN_ID`).
    """

    rows = run_async(functools.partial(play_all, keep=keep_workspace), get_host(), list(providers), scenario,
                     runs_dir, sys.stdout, as_json)
    click.echo(dumps([row.as_json() for row in rows]) if as_json else format_summary(rows, _width()))
    sys.exit(0 if rows and all(row.status == "success" for row in rows) else 1)


def _width() -> int | None:
    """The width the summary must fit: the terminal's ($COLUMNS), None off a terminal (the table as it is)."""

    return output_width(sys.stdout)
