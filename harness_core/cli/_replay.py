"""`harness replay WIRE_FILE`: feed a recorded wire log back through its provider and show the run it reproduces.

Layer: CLI, imported at start-up: click at the top; the replay, the renderer and the exit statuses are imported when
the command runs. Knows the replay API (`harness_core._run.replay`) and the live view; knows nothing of providers:
the wire log names its own (`--provider` only for a file recorded before wire logs had a header).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from harness_core.cli._common import JSON_OPTION, harness_command, run_async

if TYPE_CHECKING:
    from harness_core._run.replay import WireLog

__all__ = ["replay"]


@click.command()
@click.argument("wire_file", type=click.Path(path_type=Path))
@click.option("-p", "--provider", default=None, metavar="NAME",
              help="The provider that recorded it (only needed for a wire log recorded without a header).")
@JSON_OPTION
@click.option("-v", "--verbose", count=True, help="Show output summaries and usage, as `harness run -v`.")
@harness_command
def replay(wire_file: Path, provider: str | None, as_json: bool, verbose: int) -> None:
    """Replay a run from its wire log (WIRE_FILE: the `<run id>.wire.jsonl` that `harness run --record-wire`
    writes beside the run log): the provider plays the recorded lines instead of running its CLI, and the events
    come out as the run logged them (timestamps aside). With --json, one event per line, as in the run log. Nothing
    is run and nothing is written; where the replay differs from the recording, a warning goes to stderr.

    Exit status: the replayed run's, as for `harness run` (0, 1, 3, 130); 2 for a missing or unreadable file.
    """
    from harness_core._run.replay import load_wire

    recording = load_wire(wire_file, provider)  # a bad file fails here: one line, exit 2
    status = run_async(_replay, recording, as_json, verbose)
    for warning in recording.warnings:
        click.echo(f"harness: replay: {warning}", err=True)
    sys.exit(status)


async def _replay(recording: WireLog, as_json: bool, verbose: int) -> int:
    from harness_core._run.replay import open_replay
    from harness_core.cli._live import exit_status_for
    from harness_core.cli.render import Renderer

    renderer = None if as_json else Renderer.for_stream(sys.stdout, verbose=verbose > 0, environ=os.environ)
    async with open_replay(recording) as live:
        async for event in live:
            if renderer is None:
                sys.stdout.write(event.model_dump_json() + "\n")
            else:
                renderer.feed(event)
    sys.stdout.flush()
    if renderer is not None:
        renderer.close()
    return exit_status_for(live.result)
