"""`harness runs` and `harness show`: past and running runs, read back from the run store.

Layer: CLI, imported at start-up: click at the top; the run store and the reports (`_history`) are imported
when a command runs. Knows nothing of providers or of the runner.
"""

from __future__ import annotations

from pathlib import Path

import click

from harness_core.cli._common import EXIT_FAILED, JSON_OPTION, RUNS_DIR_OPTION, dumps, fail, harness_command

__all__ = ["runs", "show"]


_TABLE_LIMIT = 20
_STATUSES = ("running", "success", "failed", "interrupted", "lost", "unreadable")


@click.command()
@click.option("--limit", "-n", type=click.IntRange(min=0), default=None, metavar="N",
              help="Show the newest N runs (0: all). Default: 20 in the table, all with --json.")
@click.option("--status", "statuses", multiple=True, type=click.Choice(_STATUSES),
              help="Only runs with this status (repeatable).")
@click.option("--provider", "providers", multiple=True, metavar="NAME", help="Only runs of this provider (repeatable).")
@RUNS_DIR_OPTION
@JSON_OPTION
@harness_command
def runs(limit: int | None, statuses: tuple[str, ...], providers: tuple[str, ...], runs_dir: Path | None,
         as_json: bool) -> None:
    """List past and running runs, newest first."""
    from harness_core.cli._history import format_runs
    from harness_core.store import list_runs, resolve_runs_dir

    directory = resolve_runs_dir(runs_dir)
    found = [s for s in list_runs(directory) if (not statuses or s.status in statuses)
             and (not providers or (s.started is not None and s.started.provider in providers))]
    if limit is None:
        limit = 0 if as_json else _TABLE_LIMIT
    shown = found[:limit] if limit else found
    if as_json:
        click.echo(dumps([summary.as_json() for summary in shown]))
        return
    text = format_runs(shown, directory) if shown or not found else ""
    if not found and (statuses or providers):
        text = f"no runs in {directory} match the filters"
    if len(shown) < len(found):
        text += f"\n({len(found) - len(shown)} older runs not shown; --limit 0 shows all)"
    click.echo(text)


@click.command()
@click.argument("run_id", default="last")
@RUNS_DIR_OPTION
@JSON_OPTION
@harness_command
def show(run_id: str, runs_dir: Path | None, as_json: bool) -> None:
    """Show one run (RUN_ID: a run id, a unique prefix of one, or `last`, the default): provider, model, status,
    duration, usage, tool actions, final text, error.

    A log with bad lines (corrupt, or written by a newer Harness) is shown as far as it is readable, each bad
    line named (`skipped   line N ...`); exit 1 only when no line at all is readable.
    """
    from harness_core.cli._history import format_show, run_details
    from harness_core.store import find_run, resolve_runs_dir

    directory = resolve_runs_dir(runs_dir)
    details = run_details(directory, find_run(directory, run_id))
    if details.events == 0 and details.bad_lines:
        first = details.bad_lines[0]
        fail(f"nothing in {details.summary.path} is readable as a Harness run log ({len(details.bad_lines)} bad "
             f"line(s); {first.describe()}); check the file, or see `harness runs` for other runs", EXIT_FAILED)
    click.echo(dumps(details.as_json()) if as_json else format_show(details))
