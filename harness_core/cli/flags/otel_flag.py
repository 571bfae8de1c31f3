"""`--otel`: trace the run with the installed OpenTelemetry observer (the `otel` plugin, harness-otel), which reads
`HARNESS_OTEL`; the flag sets it, so a background worker (which inherits the environment) traces its run too.

Layer: CLI base (flags; start-up: click and the standard library). Knows the variable and the entry point's name only.
"""

from __future__ import annotations

import os
from importlib import metadata
from typing import Any

import click

__all__ = ["ENV_OTEL", "OTEL_OPTION"]

ENV_OTEL = "HARNESS_OTEL"
_PLUGIN = "otel"


def _turn_on(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    if not any(ep.name == _PLUGIN for ep in metadata.entry_points(group="harness")):
        raise click.UsageError("--otel needs the harness-otel plugin, which is not installed: `pip install "
                               "harness-otel` (from a checkout: `.venv/bin/pip install -e observers/otel`)")
    os.environ[ENV_OTEL] = "1"  # before the plugin host loads the plugins: the observer reads it when it loads


OTEL_OPTION: Any = click.option(
    "--otel", is_flag=True, expose_value=False, is_eager=True, callback=_turn_on,
    help="Export the run as OpenTelemetry GenAI spans and metrics over OTLP (needs harness-otel; configured by the "
         "OTEL_* variables, e.g. OTEL_EXPORTER_OTLP_ENDPOINT). Same as HARNESS_OTEL=1. `harness trace` shows the "
         "spans from the log without it.")
