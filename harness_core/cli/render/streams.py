"""Where `harness run` writes what: the answer on stdout, the live view on stderr when stdout is not a terminal
(as agent CLIs' own exec modes do), `-q` for the answer alone, `--output-last-message FILE` for it in a file.

Layer: CLI, imported at start-up by `_run` (for its option checks): click and the standard library only at the
top; the result model and formatting are imported when an answer is written. Knows streams, paths and the
result's answer; nothing of events, providers or the runner.

Which stream gets what (`choose_sinks`):

| stdout              | flags    | stdout                                 | stderr                                    |
|---------------------|----------|----------------------------------------|-------------------------------------------|
| a terminal          |          | the live view (as ever)                | questions, the CLI's own `harness:` lines |
| not a terminal      |          | the final answer only                  | the live view (colour if a terminal)      |
| stderr's file, 2>&1 |          | the live view (it ends with the answer) | (the same file)                          |
| either              | `-q`     | the final answer only                  | a failure in one line; questions          |
| either              | `--json` | every event, JSON lines                | the CLI's own lines                       |

The answer (stdout, `-q`, `--output-last-message`) is written only for a run that succeeded: after a failure or
Ctrl-C stdout stays empty and the file keeps what it had; the view still shows what was streamed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

from harness_core._private_files import write_private

if TYPE_CHECKING:
    from harness_core import HarnessResult

__all__ = ["Sinks", "answer_text", "check_answer_file", "check_output_flags", "choose_sinks", "deliver_answer",
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
    import shutil  # not at the top: start-up time

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
    its JSON value, indented (`_format.schema_answer`), else the final assistant message. None unless the run
    succeeded: a failed or interrupted run's partial text is no answer (the view showed it as it came)."""
    from harness_core import RunStatus

    if result is None or result.status is not RunStatus.SUCCESS:
        return None
    from harness_core.cli.render.format import schema_answer

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
        from harness_core.cli.render.terminal import UNSAFE

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
