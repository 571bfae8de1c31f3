"""Where a foreground run writes what (`choose_sinks`): the answer on stdout, the live view on stderr when stdout is
not a terminal, `-q` for the answer alone, `--output-last-message FILE` for it in a file; only a run that succeeded
has an answer. The table of streams is in docs/sessions.md.

Layer: CLI rendering; knows streams, paths and the result's answer, nothing of events, providers or the runner.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import click

from harness_core import HarnessResult, RunStatus
from harness_core.cli.render.format import schema_answer
from harness_core.cli.render.terminal import UNSAFE
from harness_core.files.private import write_private

__all__ = ["Sinks", "answer_text", "choose_sinks", "deliver_answer",
           "quiet_failure", "same_file", "terminal_width"]


@dataclass(frozen=True)
class Sinks:
    """Where one foreground run goes: `view` gets the live view (None: no view: `-q`, `--json`), `answer` the
    final answer alone once the run is over (None: the view shows it)."""

    view: TextIO | None
    answer: TextIO | None


def _isatty(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


def same_file(one: TextIO, other: TextIO) -> bool:
    """True when both streams write to the same file (`2>&1`, `> f 2> f`); False for streams without a file
    descriptor (a test's buffer)."""
    try:
        return os.path.samestat(os.fstat(one.fileno()), os.fstat(other.fileno()))
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both of the last two
        return False


def terminal_width(stream: TextIO, fallback: int = 80) -> int:
    """The columns of the terminal `stream` writes to (its own window, not stdout's: the live view may be on
    stderr), else `shutil.get_terminal_size`'s answer ($COLUMNS, stdout's terminal, `fallback`)."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        columns = 0
    if columns:
        return columns

    return shutil.get_terminal_size((fallback, 24)).columns


def choose_sinks(out: TextIO, err: TextIO, *, json: bool = False, quiet: bool = False) -> Sinks:
    """The view and answer streams for stdout `out` and stderr `err` (see the module's table)."""
    if json:
        return Sinks(view=None, answer=None)
    if quiet:
        return Sinks(view=None, answer=out)
    if _isatty(out) or same_file(out, err):  # one file: the view alone, not the answer a second time
        return Sinks(view=out, answer=None)
    return Sinks(view=err, answer=out)


def answer_text(result: HarnessResult | None, *, schema: bool = False) -> str | None:
    """The run's final answer as `harness run` prints it, ending in one newline: with an output schema (`schema`)
    its JSON value, indented (`render.format.schema_answer`), else the final assistant message. None unless the run
    succeeded: a failed or interrupted run's partial text is no answer (the view showed it as it came)."""

    if result is None or result.status is not RunStatus.SUCCESS:
        return None

    text = schema_answer(result) if schema or result.structured_output is not None else result.final_text
    text = text.rstrip()
    return text + "\n" if text.strip() else None


def deliver_answer(answer: str | None, sink: TextIO | None, file: Path | None) -> None:
    """Write `answer` to `sink` (control characters dropped when it is a terminal) and to `file` (created 0600 or
    replaced whole, as written). Nothing without an answer (`answer_text`: only a success has one): a failed or
    interrupted run leaves stdout empty and `file` as it was.

    Raises: click.ClickException when `file` cannot be written (the run is over by then: says where the answer
    still is).
    """
    if answer is None:
        return
    if sink is not None:
        sink.write(answer.translate(UNSAFE) if _isatty(sink) else answer)
        sink.flush()
    if file is not None:
        try:
            write_private(file, answer.encode("utf-8", "surrogateescape"))  # 0600, replaced whole
        except OSError as exc:
            raise click.ClickException(f"could not write the answer to {file}: {exc.strerror or exc}; the run's "
                                       "log has it: `harness show last`") from None


def quiet_failure(result: HarnessResult | None) -> str | None:
    """With `-q`: the one stderr line a run that did not succeed gets (``run failed: auth_failed: …``), the first
    line of its error's message; None for a success."""
    if result is None:
        return "run interrupted"
    if result.ok:
        return None
    status = result.status.value
    if result.error is None or result.error.code == "interrupted":
        return f"run {status}"
    first = (result.error.message.splitlines() or [""])[0]
    return f"run {status}: {result.error.code}: {first}"
