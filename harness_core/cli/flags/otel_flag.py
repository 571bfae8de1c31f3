"""`--otel`: trace the run with the installed OpenTelemetry observer (the `otel` plugin, harness-otel), which reads
`HARNESS_OTEL`; the flag sets it, so a background worker (which inherits the environment) traces its run too; config
`otel = true` does the same (`otel_from_config`, called before the plugin host loads).

Layer: CLI base (flags; start-up: click and the standard library). Knows the variable and the entry point's name only.
"""

from __future__ import annotations

import os
from importlib import metadata
from typing import Any

import click

__all__ = ["ENV_OTEL", "OTEL_OPTION", "otel_from_config"]

ENV_OTEL = "HARNESS_OTEL"
_PLUGIN = "otel"


def _installed() -> bool:
    return any(ep.name == _PLUGIN for ep in metadata.entry_points(group="harness"))


def otel_from_config(value: object, source: str) -> None:
    """Config `otel = true` (`value`, from `source`: ``user /u/config.toml:3``): `HARNESS_OTEL` set as `--otel`
    sets it, unless the environment already says (`HARNESS_OTEL`, or `--otel`, which set it, win over the files).
    Without harness-otel installed, a warning (not an error: the file is read by every run). Call it before the
    plugin host loads the plugins."""
    if value is not True or os.environ.get(ENV_OTEL, "").strip():
        return
    if not _installed():
        click.echo(f"harness: warning: {source.partition(' ')[2] or source}: otel = true, but the harness-otel "
                   "plugin is not installed: this run is not traced (`pip install harness-otel`)", err=True)
        return
    os.environ[ENV_OTEL] = "1"


def _turn_on(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    if not _installed():
        raise click.UsageError("--otel needs the harness-otel plugin, which is not installed: `pip install "
                               "harness-otel` (from a checkout: `.venv/bin/pip install -e observers/otel`)")
    os.environ[ENV_OTEL] = "1"  # before the plugin host loads the plugins: the observer reads it when it loads


OTEL_OPTION: Any = click.option(
    "--otel", is_flag=True, expose_value=False, is_eager=True, callback=_turn_on,
    help="Export the run as OpenTelemetry GenAI spans and metrics over OTLP (needs harness-otel; configured by the "
         "OTEL_* variables, e.g. OTEL_EXPORTER_OTLP_ENDPOINT). Same as HARNESS_OTEL=1 or config `otel = true`. "
         "`harness trace` shows the spans from the log without it.")
