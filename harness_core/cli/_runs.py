"""`harness runs` and `harness show`: past and running runs, read back from the run store.

Layer: CLI, imported at start-up: click at the top; the run store and the reports (`_history`) are imported
when a command runs. Knows nothing of providers or of the runner.
"""

from __future__ import annotations

from pathlib import Path

import click

from harness_core.cli._common import EXIT_FAILED, JSON_OPTION, RUNS_DIR_OPTION, dumps, fail, harness_command

__all__ = ["runs", "show"]


@click.command()
@RUNS_DIR_OPTION
@JSON_OPTION
@harness_command
def runs(runs_dir: Path | None, as_json: bool) -> None:
    """List past and running runs, newest first."""
    from harness_core.cli._history import format_runs
    from harness_core.store import list_runs, resolve_runs_dir

    directory = resolve_runs_dir(runs_dir)
    found = list_runs(directory)
    click.echo(dumps([summary.as_json() for summary in found]) if as_json else format_runs(found, directory))


@click.command()
@click.argument("run_id")
@RUNS_DIR_OPTION
@JSON_OPTION
@harness_command
def show(run_id: str, runs_dir: Path | None, as_json: bool) -> None:
    """Show one run: provider, model, status, duration, usage, tool actions, final text, error.

    A log with bad lines (corrupt, or written by a newer Harness) is shown as far as it is readable, each bad
    line named (`skipped   line N ...`); exit 1 only when no line at all is readable.
    """
    from harness_core.cli._history import format_show, run_details
    from harness_core.store import resolve_runs_dir

    details = run_details(resolve_runs_dir(runs_dir), run_id)
    if details.events == 0 and details.bad_lines:
        first = details.bad_lines[0]
        fail(f"nothing in {details.summary.path} is readable as a Harness run log ({len(details.bad_lines)} bad "
             f"line(s); {first.describe()}); check the file, or see `harness runs` for other runs", EXIT_FAILED)
    click.echo(dumps(details.as_json()) if as_json else format_show(details))
