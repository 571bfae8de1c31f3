"""What a command writes besides its own report: a ``harness: `` notice on stderr fitted to the terminal
(`say`), and the `--json` text of the information commands (`dumps`).

Layer: CLI start-up: click, the standard library and the layout helpers; nothing of runs or providers.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from harness_core.cli.render.layout import fit_parts, output_width

__all__ = ["dumps", "say"]


def say(*parts: str) -> None:
    """One ``harness: `` notice on stderr, made of `parts`: on a terminal broken between them to fit its width
    (the lines after the first indented under the text), one line otherwise."""
    for line in fit_parts(["harness: " + parts[0], *parts[1:]], output_width(sys.stderr), indent=" " * 9):
        click.echo(line, err=True)


def dumps(data: Any) -> str:
    """The `--json` output of the information commands: indented, non-JSON values as their `str`."""
    return json.dumps(data, indent=2, default=str)
