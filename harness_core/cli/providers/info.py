"""The bodies of `harness providers`, `harness doctor` and `harness schema`: what is installed, whether it works
here, and the JSON Schemas of what Harness reads and writes.

Layer: CLI, loaded when a command runs; knows the plugin host, the reports and the models; no concrete provider.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
from pathlib import Path

import click

from harness_core import EVENT_ADAPTER, AgentRunSpec, HarnessResult
from harness_core.cli.event_loop import run_async
from harness_core.cli.output import dumps
from harness_core.cli.providers.detail import format_provider_detail, provider_detail
from harness_core.cli.providers.report import doctor_report, format_doctor, format_providers, provider_report
from harness_core.cli.render.layout import output_width
from harness_core.cli.settings.checks import check_config
from harness_core.cli.settings.loader import ConfigError, load_config
from harness_core.plugins import get_host
from harness_core.store import resolve_runs_dir

__all__ = ["doctor", "providers", "schema", "schema_for"]


def providers(name: str | None, as_json: bool) -> None:
    """List installed providers: version, capabilities, whether their CLI is available (and why not). With NAME
    (a provider or an alias of one): that provider in full, with every option `-o KEY=VALUE` takes (its
    type, default and what it does).

    The default is the provider `harness run` uses without --provider: $HARNESS_PROVIDER, else `provider` in the
    configuration files (`harness config`), else the built-in one.

    Exit status: 0; 2 for a NAME that is not installed (the closest names are suggested).
    """

    try:
        chosen = load_config().values.get("provider")
    except ConfigError as exc:
        click.echo(f"harness: warning: {exc.message} (the default shown ignores the configuration)", err=True)
        chosen = None
    default, source = (str(chosen.value), chosen.source) if chosen is not None else (None, None)
    if name is not None:
        detail = run_async(functools.partial(provider_detail, default=default), get_host(), name)
        click.echo(dumps(detail.as_json()) if as_json else format_provider_detail(detail, output_width(sys.stdout)))
        return

    report = run_async(functools.partial(provider_report, default=default, default_source=source), get_host())
    click.echo(dumps(report.as_json()) if as_json else format_providers(report, output_width(sys.stdout)))


def doctor(runs_dir: Path | None, as_json: bool) -> None:
    """Check the configuration files, each provider's CLI (path, version, minimum) and credentials, broken
    plugins, the runs dir.

    Credentials are checked without a model call, by providers that can (each asks its CLI's
    login status); others say "not checked". Exit 1 on any problem (a provider that is not logged in is one, a
    mistake in a configuration file another).
    """

    host = get_host()
    errors: list[str] = []
    warnings: list[str] = []
    default = source = None
    try:
        config = load_config(warn=warnings.append)
    except ConfigError as exc:
        errors.append(exc.message)
    else:
        checked = check_config(config, host)
        errors += checked.errors
        warnings += checked.warnings
        if (chosen := config.values.get("provider")) is not None:
            default, source = str(chosen.value), chosen.source
    report = run_async(functools.partial(doctor_report, default=default, default_source=source), host,
                       resolve_runs_dir(runs_dir))
    report = dataclasses.replace(report, config_problems=tuple(errors), config_warnings=tuple(warnings))
    click.echo(dumps(report.as_json()) if as_json else format_doctor(report))
    sys.exit(0 if report.ok else 1)


def schema_for(what: str) -> str:
    """JSON Schema of `spec`, `events` (one run-log line) or `result`, as indented JSON text."""

    if what == "spec":
        found = AgentRunSpec.model_json_schema()
    elif what == "events":
        found = EVENT_ADAPTER.json_schema()
    else:
        found = HarnessResult.model_json_schema()
    return json.dumps(found, indent=2)


def schema(what: str) -> None:
    """Print the JSON Schema of a run spec, of one run-log line (events, the default) or of a result."""
    click.echo(schema_for(what))
