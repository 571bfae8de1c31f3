"""`harness replay`'s body: a recorded wire log fed back through its provider and the run it reproduces shown (the
wire log names its provider; `--provider` only for a file recorded before wire logs had a header).

Layer: CLI, loaded when the command runs; knows the replay API and the live view; nothing of providers.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from harness_core import WireLog, load_wire, open_replay
from harness_core.cli.event_loop import run_async
from harness_core.cli.exits import EXIT_USAGE, fail
from harness_core.cli.flags.option_pairs import OptionSyntaxError, parse_option_pairs
from harness_core.cli.foreground.live import exit_status_for
from harness_core.cli.render import Renderer
from harness_core.store import find_run, resolve_runs_dir

__all__ = ["replay"]



def replay(run: str, provider: str | None, options: tuple[str, ...], live: bool, timeout: float,
           runs_dir: Path | None, as_json: bool, verbose: int) -> None:
    """Replay a run from its wire log, which `harness run --record-wire` writes beside the run log (RUN: a run id,
    a unique prefix of one, `last` (the default), or the path of a `<run id>.wire.jsonl`): the provider plays the
    recorded lines instead of running its CLI, and the events come out as the run logged them (timestamps aside).
    With --json, one event per line, as in the run log, with what it hid hidden (also a secret the recording holds
    in pieces). Nothing is run and nothing is written; where the replay differs from the recording, a warning goes
    to stderr.

    Exit status: the replayed run's, as for `harness run` (0, 1, 3, 130); 1 when it did not end within --timeout;
    2 for a missing or unreadable file, a recording with no agent process (without --live) or bad options.
    """

    try:
        extra = parse_option_pairs(options)
    except OptionSyntaxError as exc:
        raise click.BadParameter(str(exc), param_hint="-o/--option") from None
    recording = load_wire(_wire_file(run, runs_dir), provider)  # a bad file fails here: one line, exit 2
    status, warnings = run_async(_replay, recording, extra, live, timeout, as_json, verbose)
    for warning in warnings:
        click.echo(f"harness: replay: {warning}", err=True)
    sys.exit(status)


def _wire_file(run: str, runs_dir: Path | None) -> Path:
    """The wire log RUN names: a path as given (one that ends in `.jsonl`, names a directory or exists), else the
    wire log of the run it names in the runs dir."""

    given = Path(run)
    if run.endswith(".jsonl") or "/" in run or given.is_file():
        return given
    directory = resolve_runs_dir(runs_dir)
    found = find_run(directory, run)
    wire = directory / f"{found}.wire.jsonl"
    if not wire.is_file():
        fail(f"run {found} has no wire log to replay: only a run recorded with `harness run --record-wire` has "
             f"one (`harness show {found}` shows what its log holds)", EXIT_USAGE)
    return wire


async def _replay(recording: WireLog, extra: dict[str, Any], live: bool, timeout: float, as_json: bool,
                  verbose: int) -> tuple[int, list[str]]:
    renderer = None if as_json else Renderer.for_stream(sys.stdout, verbose=verbose > 0, environ=os.environ)
    async with open_replay(recording, options=extra, live=live, deadline=timeout) as run:
        async for event in run:
            if renderer is None:  # as the run log holds it: what it hid stays hidden
                sys.stdout.write(run.log_line(event).decode() + "\n")
            else:
                renderer.feed(event)
    sys.stdout.flush()
    if renderer is not None:
        renderer.close()
    return (1 if run.timed_out else exit_status_for(run.result)), run.warnings
