"""`harness config` (the effective settings and where each came from; `harness config path`: the user file), and
laying the configuration under what `harness run` / `harness chat` were given on the command line.

Layer: CLI, imported at start-up: click and the standard library at the top; the loader (`_config`, pydantic)
and the plugin host's default provider name are imported when a command runs. Knows nothing of any provider.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from harness_core.cli._common import JSON_OPTION, dumps, harness_command

if TYPE_CHECKING:
    from harness_core.cli._config import Config, Value

__all__ = ["config", "configured_fields", "default_provider"]

_NOT_SET = {
    "model": "the provider's own; a [providers.NAME] table's `model` sets it for one provider",
    "effort": "the model's own", "max_turns": "no limit", "max_cost_usd": "no limit", "max_output_tokens": "no limit",
}


def default_provider() -> str:
    """The provider a run without --provider, `$HARNESS_PROVIDER` or a configured `provider` uses."""
    from harness_core.plugins import DEFAULT_PROVIDER

    return DEFAULT_PROVIDER


def configured_fields(ctx: click.Context, config: Config, provider: str | None, fields: dict[str, Any]) -> None:
    """Lay `config` under the spec `fields` of a run (or chat) of `provider` (None: the default one): each setting
    the command line did not give, and the `[providers.NAME]` options under `fields["provider_options"]` (the
    `-o` options) key by key. Changes `fields`."""
    from harness_core.cli._config import SPEC_KEYS

    given = set()
    for key in SPEC_KEYS:
        source = ctx.get_parameter_source(key)
        if source is not None and source is not click.core.ParameterSource.DEFAULT:
            given.add(key)
    from harness_core.plugins import get_host

    host = get_host()
    resolve = getattr(host, "resolve", lambda name: name)  # provider aliases (`PluginHost.resolve`)
    name = resolve(provider or host.default_name())
    config = config.named(resolve)
    fields.update(config.spec_fields(name, given))
    fields["provider_options"] = config.provider_options(name, fields.get("provider_options") or {})


@click.group(invoke_without_command=True, subcommand_metavar="[path]",
             short_help="Show the effective settings and where each came from (files, environment, defaults).")
@click.option("--cwd", "-C", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Find the project file (.harness.toml) from this directory up (default: the current one).")
@JSON_OPTION
@click.pass_context
def config(ctx: click.Context, cwd: Path | None, as_json: bool) -> None:
    """Show the settings `harness run` and `harness chat` use and where each came from: the command line >
    the environment ($HARNESS_PROVIDER, $HARNESS_RUNS_DIR) > the project's .harness.toml (the nearest one from
    --cwd up) > the user's $XDG_CONFIG_HOME/harness/config.toml > the built-in default.
    `harness config path` prints where the user file is (to edit it)."""
    if ctx.invoked_subcommand is None:
        _show(cwd, as_json)
    elif cwd is not None or as_json:
        raise click.UsageError(f"--cwd and --json are for the settings; `harness config {ctx.invoked_subcommand}` "
                               "takes neither")


@config.command(short_help="Print where the user configuration file is (whether or not it exists).")
def path() -> None:
    """Print the path of the user configuration file, $XDG_CONFIG_HOME/harness/config.toml (default
    ~/.config/harness/config.toml), whether or not it exists: `$EDITOR "$(harness config path)"`."""
    from harness_core.cli._config import user_config_path

    click.echo(str(user_config_path()))


@harness_command
def _show(cwd: Path | None, as_json: bool) -> None:
    import os

    from harness_core.cli._config import KEYS, Value, load_config
    from harness_core.store import resolve_runs_dir

    found = load_config(cwd)
    defaults = {**found.DEFAULTS, "provider": default_provider(),
                "runs_dir": resolve_runs_dir(None, {k: v for k, v in os.environ.items() if k != "HARNESS_RUNS_DIR"})}
    settings: dict[str, Value | None] = {}
    for key in KEYS:
        settings[key] = found.values.get(key) or (Value(defaults[key], "default") if key in defaults else None)
    if as_json:
        click.echo(dumps(_as_json(found, settings)))
        return
    click.echo("\n".join(_as_text(found, settings)))


def _as_json(found: Config, settings: dict[str, Value | None]) -> dict[str, Any]:
    def one(value: Value | None) -> dict[str, Any]:
        if value is None:
            return {"value": None, "source": "default"}
        shown = "inf" if value.value == math.inf else value.value
        return {"value": str(shown) if isinstance(shown, Path) else shown, "source": value.source}

    return {
        "files": [{"scope": f.scope, "path": str(f.path) if f.found or f.scope == "user" else None,
                   "found": f.found, **({"searched_from": str(f.path)} if f.scope == "project" and not f.found else {})}
                  for f in found.files],
        "settings": {key: one(value) for key, value in settings.items()},
        "providers": {name: {".".join(leaf): one(value) for leaf, value in table.items()}
                      for name, table in found.providers.items()},
    }


def _as_text(found: Config, settings: dict[str, Value | None]) -> list[str]:
    """TOML (it can be pasted into a file), each value's source as a comment; files looked at first."""
    from harness_core.cli._config import PROJECT_FILE

    width = max(len(f.scope) for f in found.files) + len(" file:")
    lines = [f"# {(f.scope + ' file:').ljust(width)} "
             + (str(f.path) if f.found else f"none (no {PROJECT_FILE} in {f.path} or above)" if f.scope == "project"
                else f"{f.path} (not found)")
             for f in found.files]
    rows: list[tuple[str, str]] = []
    for key, value in settings.items():
        if value is None:
            rows.append((f"# {key}: not set ({_NOT_SET.get(key, 'none')})", ""))
        else:
            note = " (no idle timeout)" if key == "idle_timeout" and value.value in (math.inf, "inf") else ""
            rows.append((f"{key} = {_toml(value.value)}", f"# {value.source}{note}"))
    lines.append("")
    lines.extend(_aligned(rows))
    for name, table in found.providers.items():
        lines.extend(["", f"[providers.{_key(name)}]"])
        lines.extend(_aligned([(f"{'.'.join(_key(k) for k in leaf)} = {_toml(value.value)}", f"# {value.source}")
                               for leaf, value in table.items()]))
    return lines


def _aligned(rows: list[tuple[str, str]]) -> list[str]:
    width = min(max((len(text) for text, note in rows if note), default=0), 44)
    return [f"{text.ljust(width)}   {note}" if note else text for text, note in rows]


def _key(name: str) -> str:
    return name if name and all(c.isalnum() or c in "_-" for c in name) else _toml(name)


def _toml(value: Any) -> str:
    """A value as TOML writes it (a path as a string; no idle timeout as "inf")."""
    import json

    if isinstance(value, float) and math.isinf(value):
        return '"inf"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # idle_timeout = 600, as written
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(str(k))} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(str(value))
