"""The click definitions of the commands on recorded runs (`runs`, `runs prune`, `show`, `attach`, `cancel`,
`approve`, `undo`, `replay`, `export`): arguments, options and help; each body is in the module named after it.

Layer: CLI start-up (click and the standard library at the top; each command imports its body when it runs).
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from harness_core.cli.complete import (
    complete_option_key,
    complete_provider,
    complete_run_id,
    complete_session_id,
    complete_wire_file,
)
from harness_core.cli.exits import harness_command
from harness_core.cli.flags.numbers import Number
from harness_core.cli.flags.output_flags import JSON_OPTION
from harness_core.cli.flags.runs_dir import RUNS_DIR_OPTION

__all__ = ["approve", "attach", "cancel", "export", "parse_age", "replay", "runs", "show", "undo"]

_ENDED = ("success", "failed", "interrupted", "lost", "truncated", "unreadable")
_STATUSES = ("running", "waiting for approval", *_ENDED)
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_AGE = re.compile(r"(\d+)([smhdw])")
_DECISIONS = ("allow", "approve", "deny", "abort")  # = runs.approve.DECISIONS' keys
_FORMATS = ("atif", "openai-messages")  # = harness_core.trajectory.FORMATS (not imported: start-up time)
_DEFAULT_DEADLINE = 120.0  # = harness_core._run.replay.run.DEFAULT_DEADLINE (not imported: start-up time)


def parse_age(text: str) -> int:
    """`30d`, `12h`, `90m`, `2w`, `45s` in seconds.

    Raises:
        ValueError: anything else; the message names the accepted forms.
    """
    match = _AGE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not an age: use a whole number and one of s, m, h, d, w (seconds, minutes, "
                         "hours, days, weeks), as in 30d, 12h, 90m, 2w or 45s")
    return int(match[1]) * _UNITS[match[2]]


class _Age(click.ParamType):  # type: ignore[type-arg]
    name = "AGE"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_age(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


@click.group(invoke_without_command=True, subcommand_metavar="[prune ...]")
@click.option("--limit", "-n", type=Number(low=0, high=1_000_000), default=None, metavar="N",
              help="Show the newest N runs (0: all). Default: 20 in the table, all with --json.")
@click.option("--status", "statuses", multiple=True, type=click.Choice(_STATUSES),
              help="Only runs with this status (repeatable).")
@click.option("--provider", "providers", multiple=True, metavar="NAME", shell_complete=complete_provider,
              help="Only runs of this provider (repeatable).")
@click.option("--session", metavar="ID", shell_complete=complete_session_id,
              help="Only the turns of this session: its Harness session id, or the agent's "
              "session id (which also finds the runs that resumed it); either, or a prefix of it.")
@RUNS_DIR_OPTION
@JSON_OPTION
@click.pass_context
def runs(ctx: click.Context, limit: int | None, statuses: tuple[str, ...], providers: tuple[str, ...],
         session: str | None, runs_dir: Path | None, as_json: bool) -> None:
    """List past and running runs, newest first; the turns of a session (`harness chat`) are marked `[turn N]`.
    `harness runs prune --older-than 30d` removes old ones (runs are kept until pruned)."""
    from harness_core.cli.runs.listing import runs as implementation

    implementation(ctx=ctx, limit=limit, statuses=statuses, providers=providers, session=session, runs_dir=runs_dir,
                   as_json=as_json)



@runs.command(short_help="Remove runs that ended longer ago than --older-than (30d, 12h, ...).")
@click.option("--older-than", "older_than", type=_Age(), required=True,
              help="Remove runs that ended longer ago than this: 30d, 12h, 90m, 2w, 45s.")
@click.option("--status", "statuses", multiple=True, type=click.Choice(_ENDED),
              help="Only runs with this status (repeatable; default: any).")
@click.option("--dry-run", is_flag=True, help="List what would be removed; remove nothing.")
@RUNS_DIR_OPTION
@JSON_OPTION
@click.pass_context
@harness_command
def prune(ctx: click.Context, older_than: int, statuses: tuple[str, ...], dry_run: bool, runs_dir: Path | None,
          as_json: bool) -> None:
    """Remove old runs: the files of each run (its log, wire log, approval answers, background worker output;
    nothing else) that ended longer ago than --older-than (a run without an end: its log's last write). Each file
    is listed. A run still running or waiting for approval is never removed, however old; a `.jsonl` that is not
    a Harness run log is skipped (and named). Nothing is removed otherwise: runs are kept until pruned.

    Also removed, whatever their age: the temporary directories of Harness processes that were killed (an
    offline workspace, an agent's state or temporary directory, a batch's workspaces, a tool server's socket;
    never a kept one, never one still in use).

    Exit status: 0; 1 when some run could not be removed (each is named).
    """
    from harness_core.cli.runs.listing import prune as implementation

    implementation(ctx=ctx, older_than=older_than, statuses=statuses, dry_run=dry_run, runs_dir=runs_dir,
                   as_json=as_json)


@click.command()
@click.argument("run_id", default="last", shell_complete=complete_run_id)
@click.option("--diff", "show_diff", is_flag=True,
              help="Print the diff of the files the run changed (before the run against after it), from its log.")
@RUNS_DIR_OPTION
@JSON_OPTION
@harness_command
def show(run_id: str, runs_dir: Path | None, as_json: bool, show_diff: bool = False) -> None:
    """Show one run (RUN_ID: a run id, a unique prefix of one, or `last`, the default): provider, model, status,
    duration, usage, tool actions, files changed, final text, error. `--diff` prints the diff of the files it
    changed instead (coloured on a terminal), as its log recorded it: the workspace may be gone.

    A log with bad lines (corrupt, or written by a newer Harness) is shown as far as it is readable, each bad
    line named (`skipped   line N ...`); exit 1 only when no line at all is readable.
    """
    from harness_core.cli.runs.listing import show as implementation

    implementation(run_id=run_id, runs_dir=runs_dir, as_json=as_json, show_diff=show_diff)


@click.command()
@click.argument("run_id", default="last", shell_complete=complete_run_id)
@RUNS_DIR_OPTION
@JSON_OPTION
@click.option("-v", "--verbose", count=True, help="Show output summaries and usage, as `harness run -v`.")
@harness_command
def attach(run_id: str, runs_dir: Path | None, as_json: bool, verbose: int) -> None:
    """Show a run from its first event and follow it live until it ends (RUN_ID: a run id, a unique prefix of
    one, or `last`, the default); on a finished run, show it whole. Ctrl-C stops watching: the run goes on. On a
    terminal, a background run's approval requests are asked here (or answer them with `harness approve`).

    Exit status: the run's, as for `harness run` (0, 1, 3, 130); 1 for a run that was lost (its Harness ended
    before the run did); 130 when you stop watching.
    """
    from harness_core.cli.runs.attach import attach as implementation

    implementation(run_id=run_id, runs_dir=runs_dir, as_json=as_json, verbose=verbose)


@click.command()
@click.argument("run_id", shell_complete=complete_run_id)
@RUNS_DIR_OPTION
@click.option("--timeout", type=Number(real=True, low=0, high=86_400, unit="seconds"), default=30.0, show_default=True,
              metavar="SECONDS",
              help="How long to wait for the run to end (0: send the interrupt and do not wait).")
@harness_command
def cancel(run_id: str, runs_dir: Path | None, timeout: float) -> None:
    """Interrupt a running run (RUN_ID: a run id, a unique prefix of one, or `last`): the `harness` process that
    drives it stops the turn through its provider, as Ctrl-C in its terminal would, and completes its log. Cancel
    a run that is still stopping again to stop it at once. A run that already ended is left as it is.

    Exit status: 0 the run ended (or had ended; with --timeout 0, the interrupt was sent); 1 it did not end within
    --timeout, it is lost, or its Harness is stopped (Ctrl-Z: continue it with `fg` or `kill -CONT PID`); 2 it is
    not driven by a `harness` command (stop it in the program that runs it).
    """
    from harness_core.cli.runs.cancel import cancel as implementation

    implementation(run_id=run_id, runs_dir=runs_dir, timeout=timeout)


@click.command()
@click.argument("run_id", shell_complete=complete_run_id)
@click.argument("request_id", required=False)
@click.argument("decision", required=False, type=click.Choice(sorted(_DECISIONS)))
@RUNS_DIR_OPTION
@harness_command
def approve(run_id: str, request_id: str | None, decision: str | None, runs_dir: Path | None) -> None:
    """Answer an approval request of a background run: `harness approve RUN_ID REQUEST_ID allow|deny|abort`
    (abort denies and stops the turn). With RUN_ID alone, list the requests waiting for an answer.

    RUN_ID and REQUEST_ID may be unique prefixes (RUN_ID also `last`). Exit status: 0 the run took the answer;
    1 it has not taken it in 10 s, or the run is over; 2 no such run or request.
    """
    from harness_core.cli.runs.approve import approve as implementation

    implementation(run_id=run_id, request_id=request_id, decision=decision, runs_dir=runs_dir)


@click.command()
@click.argument("run_id", default="last", metavar="[RUN]", shell_complete=complete_run_id)
@click.option("-n", "--dry-run", is_flag=True, help="Say what would be put back; change nothing.")
@RUNS_DIR_OPTION
@harness_command
def undo(run_id: str, dry_run: bool, runs_dir: Path | None) -> None:
    """Put the files a run changed back as they were before it (RUN: a run id, a unique prefix of one, or `last`,
    the default): a file it edited gets its old content, a file it created is removed, a file it deleted comes
    back. Only while every one of them still holds what the run left: a file changed since is named and nothing
    is written. Only files an edit tool announced are followed (`harness show RUN` lists them under `changed`);
    what a shell command wrote is not. The agent is not told.

    Exit status: 0 put back (or already as before); 1 refused (each file in the way named); 2 no such run.
    """
    from harness_core.cli.runs.undo import undo as implementation

    implementation(run_id=run_id, dry_run=dry_run, runs_dir=runs_dir)


@click.command()
@click.argument("run", default="last", metavar="[RUN]", shell_complete=complete_wire_file)
@click.option("-p", "--provider", default=None, metavar="NAME", shell_complete=complete_provider,
              help="The provider that recorded it (only needed for a wire log recorded without a header).")
@click.option("-o", "--option", "options", multiple=True, metavar="KEY=VALUE", shell_complete=complete_option_key,
              help="A provider option to add (repeatable; dotted keys nest), e.g. one the recording hid as '***'.")
@click.option("--live", is_flag=True,
              help="Replay a recording with no agent process (a provider that talks HTTP itself) by letting the "
                   "provider reach its agent for real.")
@click.option("--timeout", type=Number(real=True, low=0, low_open=True, high=86_400, unit="seconds"),
              default=_DEFAULT_DEADLINE,
              show_default=True, metavar="SECONDS", help="Stop a replay still going after this long (exit 1).")
@RUNS_DIR_OPTION
@JSON_OPTION
@click.option("-v", "--verbose", count=True, help="Show output summaries and usage, as `harness run -v`.")
@harness_command
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
    from harness_core.cli.runs.replay import replay as implementation

    implementation(run=run, provider=provider, options=options, live=live, timeout=timeout, runs_dir=runs_dir,
                   as_json=as_json, verbose=verbose)


@click.command()
@click.argument("run", default="last", metavar="[RUN]", shell_complete=complete_run_id)
@click.option("--format", "-f", "format_", type=click.Choice(_FORMATS), default="atif", show_default=True,
              help="atif: Harbor's Agent Trajectory Interchange Format (v1.7); openai-messages: the "
                   '{"messages": [...]} chat list fine-tuning tools read, on one line.')
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="FILE",
              help="Write it to FILE (private: 0600) instead of stdout.")
@click.option("--session", "whole_session", is_flag=True,
              help="When RUN is a turn of a session, export every turn of that session as one trajectory.")
@click.option("--reasoning", is_flag=True,
              help="openai-messages: add the agent's reasoning to its messages (`reasoning_content`).")
@click.option("--keep-reconstructed", is_flag=True,
              help="openai-messages: keep the tool calls whose arguments Harness rebuilt and that change files "
                   "without their content (left out by default: a patch call without its patch).")
@RUNS_DIR_OPTION
@harness_command
def export(run: str, format_: str, output: Path | None, whole_session: bool, reasoning: bool,
           keep_reconstructed: bool, runs_dir: Path | None) -> None:
    """Export a run as a trajectory (RUN: a run id, a unique prefix of one, `last` (the default), the path of a
    run log, or a session id: all its turns): the prompt, the agent's messages, reasoning, tool calls and their
    results, errors, and token and cost figures per step and in total. Secrets stay hidden as in the run log.

    Exit status: 0 written; 2 no such run or an unreadable log.
    """
    from harness_core.cli.runs.export import export as implementation

    implementation(run=run, format_=format_, output=output, whole_session=whole_session, reasoning=reasoning,
                   keep_reconstructed=keep_reconstructed, runs_dir=runs_dir)
