"""`harness providers`, `harness doctor` and `harness schema`: what is installed, whether it works here, and
the JSON Schemas of what Harness reads and writes.

Layer: CLI, imported at start-up: click at the top; the plugin host, the reports (`_providers`) and the models
are imported when a command runs. Knows no concrete provider.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from harness_core.cli._common import JSON_OPTION, RUNS_DIR_OPTION, dumps, harness_command, run_async
from harness_core.cli._complete import complete_provider

__all__ = ["doctor", "providers", "schema", "schema_for"]


@click.command()
@click.argument("name", required=False, shell_complete=complete_provider)
@JSON_OPTION
@harness_command
def providers(name: str | None, as_json: bool) -> None:
    """List installed providers: version, capabilities, whether their CLI is available (and why not). With NAME
    (a provider or an alias of one): that provider in full, with every option `-o KEY=VALUE` takes (its
    type, default and what it does).

    Exit status: 0; 2 for a NAME that is not installed (the closest names are suggested).
    """
    from harness_core.plugins import get_host

    if name is not None:
        from harness_core.cli._provider_detail import format_provider_detail, provider_detail

        detail = run_async(provider_detail, get_host(), name)
        click.echo(dumps(detail.as_json()) if as_json else format_provider_detail(detail))
        return
    from harness_core.cli._providers import format_providers, provider_report

    report = run_async(provider_report, get_host())
    click.echo(dumps(report.as_json()) if as_json else format_providers(report))


@click.command()
@RUNS_DIR_OPTION
@JSON_OPTION
@harness_command
def doctor(runs_dir: Path | None, as_json: bool) -> None:
    """Check each provider's CLI (path, version, minimum) and credentials, broken plugins, the runs dir.

    Credentials are checked without a model call, by providers that can (each asks its CLI's
    login status); others say "not checked". Exit 1 on any problem (a provider that is not logged in is one).
    """
    from harness_core.cli._providers import doctor_report, format_doctor
    from harness_core.plugins import get_host
    from harness_core.store import resolve_runs_dir

    report = run_async(doctor_report, get_host(), resolve_runs_dir(runs_dir))
    click.echo(dumps(report.as_json()) if as_json else format_doctor(report))
    sys.exit(0 if report.ok else 1)


def schema_for(what: str) -> str:
    """JSON Schema of `spec`, `events` (one run-log line) or `result`, as indented JSON text."""
    import json

    from harness_core import EVENT_ADAPTER, AgentRunSpec, HarnessResult

    if what == "spec":
        found = AgentRunSpec.model_json_schema()
    elif what == "events":
        found = EVENT_ADAPTER.json_schema()
    else:
        found = HarnessResult.model_json_schema()
    return json.dumps(found, indent=2)


@click.command()
@click.argument("what", type=click.Choice(["spec", "events", "result"]), default="events")
@harness_command
def schema(what: str) -> None:
    """Print the JSON Schema of a run spec, of one run-log line (events, the default) or of a result."""
    click.echo(schema_for(what))
