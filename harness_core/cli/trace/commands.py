"""`harness trace`'s click definition; the body is `trace.tree`.

Layer: CLI start-up (click and the standard library at the top, one import when the command runs).
"""

from __future__ import annotations

from pathlib import Path

import click

from harness_core.cli.complete import complete_run_id
from harness_core.cli.exits import harness_command
from harness_core.cli.flags.output_flags import JSON_OPTION
from harness_core.cli.flags.runs_dir import RUNS_DIR_OPTION

__all__ = ["trace"]


@click.command(short_help="Print a run's span tree (OpenTelemetry GenAI spans), from its log.")
@click.argument("run_id", default="last", metavar="[RUN]", shell_complete=complete_run_id)
@RUNS_DIR_OPTION
@JSON_OPTION
@harness_command
def trace(run_id: str, runs_dir: Path | None, as_json: bool) -> None:
    """Print the spans of a run (RUN: a run id, a unique prefix of one, or `last`, the default) as a tree, from its
    log: the `invoke_agent` span of the run, an `execute_tool` span per tool action, a `harness.approval` span per
    approval wait, with their times, status and main attributes. These are the spans harness-otel exports
    (`harness run --otel`), with the same times (the events'), so no tracing backend is needed to look at one. A run
    still going is shown as far as its log goes. `--json` prints the tree as JSON (each span with all its
    attributes)."""
    from harness_core.cli.trace.tree import trace as implementation

    implementation(run_id=run_id, runs_dir=runs_dir, as_json=as_json)
