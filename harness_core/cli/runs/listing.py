"""The bodies of `harness runs` (the list, and `runs prune`: old runs removed) and `harness show`: past and running
runs read back from the run store.

Layer: CLI, loaded when a command runs; knows the run store and the reports (`records.history`); nothing of
providers or of the runner.
"""

from __future__ import annotations

import difflib
import sys
import time
from pathlib import Path

import click

from harness_core import InvalidSpecError
from harness_core.cli.exits import EXIT_FAILED, EXIT_USAGE, fail, harness_command
from harness_core.cli.output import dumps
from harness_core.cli.records.history import format_age, format_bytes, format_runs, format_show, run_details
from harness_core.cli.render.diffview import format_changes
from harness_core.cli.render.layout import fit_text, output_width, table
from harness_core.cli.render.terminal import use_plain
from harness_core.events import FileChange
from harness_core.files.scratch import Leftover, sweep_scratch
from harness_core.plugins import get_host
from harness_core.store import PruneReport, RunSummary, find_run, list_runs, prune_runs, resolve_runs_dir

__all__ = ["prune", "runs", "show"]


_TABLE_LIMIT = 20
def runs(ctx: click.Context, limit: int | None, statuses: tuple[str, ...], providers: tuple[str, ...],
         session: str | None, runs_dir: Path | None, as_json: bool) -> None:
    """List past and running runs, newest first; the turns of a session (`harness chat`) are marked `[turn N]`.
    `harness runs prune --older-than 30d` removes old ones (runs are kept until pruned)."""
    if ctx.invoked_subcommand is None:
        _list(limit, statuses, providers, session, runs_dir, as_json)
    elif limit is not None or statuses or providers or session:
        raise click.UsageError(f"--limit, --status, --provider and --session choose runs to list; give the options of "
                               f"`{ctx.invoked_subcommand}` after it (`harness runs {ctx.invoked_subcommand} --help`)")


@harness_command
def _list(limit: int | None, statuses: tuple[str, ...], providers: tuple[str, ...], session: str | None,
          runs_dir: Path | None, as_json: bool) -> None:
    directory = resolve_runs_dir(runs_dir)
    every = list_runs(directory)
    found = [s for s in every if (not statuses or s.status in statuses)
             and (not providers or (s.started is not None and s.started.provider in providers))
             and (session is None or _in_session(s, session))]
    if providers and not found:
        _check_provider_names(providers, every)
    if limit is None:
        limit = 0 if as_json else _TABLE_LIMIT
    shown = found[:limit] if limit else found
    if as_json:
        click.echo(dumps([summary.as_json() for summary in shown]))
        return
    text = format_runs(shown, directory, output_width(sys.stdout)) if shown or not found else ""
    if not found and (statuses or providers or session):
        text = f"no runs in {directory} match the filters"
        if session is not None:
            text += f" (no turns of a session {session!r}: a session's id is on the last line of `harness chat`)"
        text = "\n".join(fit_text(text, output_width(sys.stdout)))
    if len(shown) < len(found):
        text += f"\n({len(found) - len(shown)} older runs not shown; --limit 0 shows all)"
    click.echo(text)


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

    parent = ctx.parent.params if ctx.parent is not None else {}  # `harness runs --runs-dir D --json prune` works
    directory = resolve_runs_dir(runs_dir or parent.get("runs_dir"))
    report = prune_runs(directory, older_than=older_than, statuses=statuses or None, dry_run=dry_run)
    leftovers = sweep_scratch(dry_run=dry_run)
    if as_json or parent.get("as_json"):
        click.echo(dumps({**report.as_json(), "leftovers": [{"path": str(leftover.path), "size": leftover.size}
                                                             for leftover in leftovers]}))
    else:
        click.echo(_format_prune(report, directory, older_than=older_than, statuses=statuses))
        click.echo(_format_leftovers(leftovers, dry_run=dry_run), nl=False)
    for problem in report.errors:
        click.echo(f"harness: error: could not remove {problem}", err=True)
    if report.errors:
        ctx.exit(EXIT_FAILED)


def _format_prune(report: PruneReport, runs_dir: Path, *, older_than: float, statuses: tuple[str, ...] = (),
                  now: float | None = None) -> str:
    """What `harness runs prune` removed (or, with --dry-run, would remove): each run and under it each of its
    files, then the totals; the files skipped as no run logs; the runs kept because they are still running."""

    now = time.time() if now is None else now
    which = f" ({', '.join(statuses)})" if statuses else ""
    lines: list[str] = []
    if not report.runs:
        lines.append(f"no runs{which} in {_shown(runs_dir)} ended more than {format_age(older_than)} ago; nothing "
                     "to remove")
    else:
        verb = "would remove" if report.dry_run else "removed"
        rows = table([[run.run_id, run.status, f"ended {format_age(now - run.ended)} ago", format_bytes(run.size)]
                      for run in report.runs])
        for run, row in zip(report.runs, rows, strict=True):
            lines.append(f"{verb}  {row}")
            lines.extend(f"    {_shown(path)}  {format_bytes(size)}" for path, size in zip(run.files, run.sizes,
                                                                                             strict=True))
        count = _plural(len(report.runs), "run")
        files = _plural(sum(len(run.files) for run in report.runs), "file")
        if report.dry_run:
            lines.append(f"{count} ({files}, {format_bytes(report.size)}) would be removed; run it again without "
                         "--dry-run to remove them")
        else:
            lines.append(f"removed {count}, {files}, {format_bytes(report.size)}")
    for log in report.skipped:
        lines.append(f"skipped: not a Harness run log  {_shown(log.path)}  ({log.reason})")
    if report.skipped:
        lines.append(f"skipped {_plural(len(report.skipped), 'file')}: not a Harness run log (nothing of it or "
                     "beside it removed)")
    if report.held:
        lines.append(f"kept {len(report.held)} still running (their Harness holds the log): {', '.join(report.held)}")
    return "\n".join(lines)


def _format_leftovers(leftovers: list[Leftover], *, dry_run: bool) -> str:
    """The temporary directories killed Harness processes left (an offline workspace, an agent's state, a batch's
    workspaces), each removed (or, with --dry-run, to be), then their total; empty when there were none."""

    if not leftovers:
        return ""
    verb = "would remove" if dry_run else "removed"
    lines = [f"{verb}  {_shown(leftover.path)}  {format_bytes(leftover.size)}" for leftover in leftovers]
    total = format_bytes(sum(leftover.size for leftover in leftovers))
    many = "y" if len(leftovers) == 1 else "ies"
    lines.append(f"{verb} {len(leftovers)} temporary director{many} that killed Harness processes left ({total})")
    return "\n".join(lines) + "\n"


_UNPRINTABLE = {code: "?" for code in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0))}


def _shown(path: Path) -> str:
    """A path on one line, none of its control characters (a foreign file's name is untrusted) sent raw."""
    return str(path).translate(_UNPRINTABLE)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def show(run_id: str, runs_dir: Path | None, as_json: bool, show_diff: bool = False) -> None:
    """Show one run (RUN_ID: a run id, a unique prefix of one, or `last`, the default): provider, model, status,
    duration, usage, tool actions, files changed, final text, error. `--diff` prints the diff of the files it
    changed instead (coloured on a terminal), as its log recorded it: the workspace may be gone.

    A log with bad lines (corrupt, or written by a newer Harness) is shown as far as it is readable, each bad
    line named (`skipped   line N ...`); exit 1 only when no line at all is readable.
    """

    directory = resolve_runs_dir(runs_dir)
    try:
        found = find_run(directory, run_id)
    except InvalidSpecError:
        every = list_runs(directory)
        if not any(r.run_id.startswith(run_id) for r in every) and any(
                r.session is not None and r.session.startswith(run_id) for r in every):
            fail(f"{run_id} is a session, not a run: `harness runs --session {run_id}` lists its turns (then "
                 "`harness show RUN_ID` shows one)", EXIT_USAGE)
        raise
    details = run_details(directory, found)
    if details.events == 0 and details.bad_lines:
        first = details.bad_lines[0]
        fail(f"nothing in {details.summary.path} is readable as a Harness run log ({len(details.bad_lines)} bad "
             f"line(s); {first.describe()}); check the file, or see `harness runs` for other runs", EXIT_FAILED)
    if show_diff and not as_json:
        _echo_diff(details.changes, found)
        return
    click.echo(dumps(details.as_json()) if as_json else format_show(details))


def _echo_diff(changes: tuple[FileChange, ...] | None, run_id: str) -> None:
    """`harness show --diff`: the run's recorded diff on stdout, or why there is none."""

    if not changes:
        why = ("its tools announced no file change, or an older Harness ran it" if changes is None
               else "the files its tools touched are as they were before it")
        click.echo(f"harness: run {run_id} changed no file ({why})", err=True)
        return
    click.echo(format_changes(changes, colour=not use_plain(sys.stdout)))


def _in_session(run: RunSummary, session: str) -> bool:
    """Whether `run` belongs to `session`: a turn of the Harness session it names, or a run of the agent session
    it names (`--resume`d or `--continue`d runs of that conversation too); either id, or a prefix of it."""
    return any(found is not None and found.startswith(session) for found in (run.session, run.provider_session))


def _check_provider_names(names: tuple[str, ...], runs: list[RunSummary]) -> None:
    """A `--provider` that is neither installed nor in any run is a typo: say so, and what it may have meant."""

    known = set(get_host().providers) | {r.started.provider for r in runs if r.started is not None}
    for name in names:
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise click.BadParameter(f"no provider named {name!r} is installed or has runs here; {hint}"
                                     f"known: {', '.join(sorted(known)) or 'none'}", param_hint="--provider")
