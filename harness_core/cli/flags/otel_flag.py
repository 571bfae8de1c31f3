"""`--otel`: trace the run with the installed observer (the `otel` plugin, harness-otel), which reads `HARNESS_OTEL`;
the flag sets it (a background worker inherits it); config `otel = true` does too (`otel_from_config`, before the
plugin host loads). Refused, or warned, when the host's or the SDK's variables keep the observer off.

Layer: CLI base (flags; start-up: click and the standard library). Knows those variables and the entry point's name.
"""

from __future__ import annotations

import os

import click

__all__ = ["ENV_OTEL", "OTEL_OPTION", "otel_from_config", "sdk_off"]

ENV_OTEL = "HARNESS_OTEL"
_PLUGIN = "otel"
_ENV_LOAD = "HARNESS_LOAD_PLUGINS"  # the plugin host's (harness_core.plugins), read by name here
_ENV_DISABLE = "HARNESS_DISABLE_PLUGINS"
_ENV_SDK_DISABLED = "OTEL_SDK_DISABLED"
_TRUE = frozenset({"1", "true", "yes", "on"})


def _installed() -> bool:
    from harness_core.cli.flags import otel_plugin

    return otel_plugin.installed(_PLUGIN)


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


def sdk_off() -> str | None:
    """What keeps every OpenTelemetry SDK off, the observer with it (``OTEL_SDK_DISABLED=true``), or None."""
    value = os.environ.get(_ENV_SDK_DISABLED, "").strip()
    return f"{_ENV_SDK_DISABLED}={value}" if value.lower() in _TRUE else None


def _names(variable: str) -> set[str] | None:
    """The plugin names a `HARNESS_*_PLUGINS` variable lists (as the plugin host splits them), None when unset."""
    value = os.environ.get(variable)
    return None if value is None else {part.strip() for part in value.split(",") if part.strip()}


def _turn_on(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    if not _installed():
        raise click.UsageError("--otel needs the harness-otel plugin, which is not installed: `pip install "
                               "harness-otel` (from a checkout: `.venv/bin/pip install -e observers/otel`)")
    if _PLUGIN in (_names(_ENV_DISABLE) or set()):
        raise click.UsageError(f"--otel needs the harness-otel plugin, which {_ENV_DISABLE} turns off (it names "
                               f"`{_PLUGIN}`): take `{_PLUGIN}` out of {_ENV_DISABLE}, or drop --otel")
    allowed = _names(_ENV_LOAD)
    if allowed is not None and _PLUGIN not in allowed:
        raise click.UsageError(f"--otel needs the harness-otel plugin, which {_ENV_LOAD} leaves out (it loads only "
                               f"the plugins it lists): add `{_PLUGIN}` to {_ENV_LOAD}, or drop --otel")
    off = sdk_off()
    if off is not None:
        click.echo(f"harness: warning: --otel: {off} turns OpenTelemetry off, so this run is not traced (unset "
                   f"{_ENV_SDK_DISABLED} to trace it)", err=True)
    os.environ[ENV_OTEL] = "1"  # before the plugin host loads the plugins: the observer reads it when it loads


OTEL_OPTION = click.option(
    "--otel", is_flag=True, expose_value=False, is_eager=True, callback=_turn_on,
    help="Export the run as OpenTelemetry GenAI spans and metrics over OTLP (needs harness-otel; configured by the "
         "OTEL_* variables, e.g. OTEL_EXPORTER_OTLP_ENDPOINT). Same as HARNESS_OTEL=1 or config `otel = true`. "
         "`harness trace` shows the spans from the log without it.")
