"""`harness export`'s body: a recorded run (or a session's turns) as an ATIF trajectory or a chat-messages list, on
stdout or in a private file.

Layer: CLI, loaded when the command runs; knows the trajectory export and the run store; nothing of providers.
"""

from __future__ import annotations

from pathlib import Path

import click

from harness_core.files.private import write_private
from harness_core.trajectory import FORMATS, export as export_run, trajectory_text

__all__ = ["export"]


def export(run: str, format_: str, output: Path | None, whole_session: bool, reasoning: bool,
           runs_dir: Path | None, keep_reconstructed: bool = False) -> None:
    """Print (or with `output`, write 0600) the trajectory of `run` in `format_` (see the command's help)."""
    fmt = next(f for f in FORMATS if f == format_)
    document = export_run(run, fmt, runs_dir=runs_dir, session=whole_session, reasoning=reasoning,
                          drop_reconstructed=not keep_reconstructed)
    text = trajectory_text(document, fmt)
    if output is None:
        click.echo(text, nl=False)
        return
    write_private(output.expanduser(), text.encode())
    click.echo(f"harness: wrote {output} ({fmt}, {len(document.get('steps') or document.get('messages') or [])} "
               f"{'steps' if fmt == 'atif' else 'messages'})", err=True)
