"""`harness config`'s body: the effective settings and where each came from; `config path`.

Layer: CLI, loaded when a command runs; knows nothing of any provider.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import click

from harness_core.cli.exits import harness_command
from harness_core.cli.flags.otel_flag import sdk_off
from harness_core.cli.output import dumps
from harness_core.cli.settings.checks import check_config
from harness_core.cli.settings.loader import (
    KEYS,
    PROJECT_FILE,
    Config,
    ConfigError,
    ConfiguredServer,
    Looked,
    Value,
    load_config,
    project_config_path,
    search_stop,
    user_config_path,
)
from harness_core.plugins import DEFAULT_PROVIDER, get_host
from harness_core.redaction import redact, scrub
from harness_core.store import resolve_runs_dir

__all__ = ["config", "default_provider"]

_NOT_SET = {
    "model": "the provider's own; a [providers.NAME] table's `model` sets it for one provider",
    "effort": "the model's own", "max_turns": "no limit", "max_cost_usd": "no limit", "max_output_tokens": "no limit",
}


def default_provider() -> str:
    """The provider a run without --provider, `$HARNESS_PROVIDER` or a configured `provider` uses."""

    return DEFAULT_PROVIDER


def config(ctx: click.Context, cwd: Path | None, as_json: bool) -> None:
    """Show the settings `harness run` and `harness chat` use and where each came from: the command line >
    the environment ($HARNESS_PROVIDER, $HARNESS_RUNS_DIR) > the project's .harness.toml (the nearest one from
    --cwd up) > the user's $XDG_CONFIG_HOME/harness/config.toml > the built-in default; then each file's
    [mcp_servers.NAME] as a TOML table, with its file:line (env and header values masked), commented out
    when no run takes it (an untrusted project's, saying how to trust it; one a project's replaces).
    `harness config path` prints where the files are (to edit them)."""
    if ctx.invoked_subcommand is None:
        _show(cwd, as_json)
    elif as_json:
        raise click.UsageError(f"--json is for the settings; `harness config {ctx.invoked_subcommand}` takes no "
                               "--json")


def path(ctx: click.Context, scope: str | None, cwd: Path | None) -> None:
    """Print where the configuration files are: the user file, $XDG_CONFIG_HOME/harness/config.toml (default
    ~/.config/harness/config.toml), whether or not it exists, and the project file that applies to --cwd (the
    nearest .harness.toml from there up), or where the search went.

    With SCOPE, only that file's path, to edit it: `$EDITOR "$(harness config path user)"`; exit 1 when there is
    no project file (the message says where to create one).
    """

    given = cwd or (ctx.parent.params.get("cwd") if ctx.parent is not None else None)
    start = Path(given or Path.cwd()).resolve()
    user, project = user_config_path(), project_config_path(start)
    if scope == "user":
        click.echo(str(user))
    elif scope == "project" and project is not None:
        click.echo(str(project))
    elif scope == "project":
        click.echo(f"harness: error: no {PROJECT_FILE} in {start} or above it (up to {search_stop(start)}); "
                   f"create one: $EDITOR {start / PROJECT_FILE}", err=True)
        ctx.exit(1)
    else:
        click.echo(f"user:    {user}{'' if user.is_file() else ' (not found)'}")
        click.echo(f"project: {project}" if project is not None
                   else f"project: none found, searched from {start} up to {search_stop(start)}")


@harness_command
def _show(cwd: Path | None, as_json: bool) -> None:
    found = load_config(cwd)
    problems = check_config(found, get_host())
    for warning in problems.warnings:
        click.echo(f"harness: warning: {warning}", err=True)
    if problems.errors:
        raise ConfigError(problems.errors[0])
    defaults = {**found.DEFAULTS, "provider": default_provider(), "otel": False,
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

    shown = {key: one(value) for key, value in settings.items()}
    if shown.get("otel", {}).get("value") is True and (off := sdk_off()) is not None:
        shown["otel"]["off_by"] = off  # set, yet no run is traced

    return {
        "files": [{"scope": f.scope, "path": str(f.path) if f.found or f.scope == "user" else None,
                   "found": f.found, **({"ignored": f.ignored} if f.ignored else {}),
                   **({"searched_from": str(f.path)} if f.scope == "project" and not f.found else {})}
                  for f in found.files],
        "settings": shown,
        "providers": {name: {".".join(leaf): {**one(value), "value": _shown(leaf, one(value)["value"])}
                             for leaf, value in table.items()}
                      for name, table in found.providers.items()},
        "refused": [{"key": ".".join(loc), "error": message} for loc, message in found.refused.items()],
        "mcp_servers": [_server_json(found, table) for table in found.server_tables],
    }


def _as_text(found: Config, settings: dict[str, Value | None]) -> list[str]:
    """TOML (it can be pasted into a file; masked secrets read `***`), each value's source as a comment; files
    looked at first."""

    width = max(len(f.scope) for f in found.files) + len(" file:")
    def where(f: Looked) -> str:
        if f.found:
            return f"{f.path} (ignored: {f.ignored})" if f.ignored else str(f.path)
        return f"none (no {PROJECT_FILE} in {f.path} or above)" if f.scope == "project" else f"{f.path} (not found)"

    lines = [f"# {(f.scope + ' file:').ljust(width)} {where(f)}" for f in found.files]
    rows: list[tuple[str, str]] = []
    for key, value in settings.items():
        if value is None:
            rows.append((f"# {key}: not set ({_NOT_SET.get(key, 'none')})", ""))
        else:
            note = " (no idle timeout)" if key == "idle_timeout" and value.value in (math.inf, "inf") else ""
            if key == "otel" and value.value is True and (off := sdk_off()) is not None:
                note = f", but {off} keeps it off: runs are not traced"
            rows.append((f"{key} = {_toml(value.value)}", f"# {value.source}{note}"))
    lines.append("")
    lines.extend(_aligned(rows))
    refused = [message for loc, message in found.refused.items() if loc[0] != "mcp_servers"]  # shown with them
    if refused:
        lines += ["", "# not applied (a run fails on these unless its command line sets them itself):"]
        lines += [f"# {message}" for message in refused]
    lines.extend(_servers_text(found))
    for name, table in found.providers.items():
        lines.extend(["", f"[providers.{_key(name)}]"])
        lines.extend(_aligned([(f"{'.'.join(_key(k) for k in leaf)} = {_toml(_shown(leaf, value.value))}",
                                 f"# {value.source}")
                               for leaf, value in table.items()]))
    return lines


def _servers_text(found: Config) -> list[str]:
    """Each `[mcp_servers.NAME]` of the files as a TOML table with its file:line, env and header values masked; a
    table not applied (refused, or replaced by the project's) commented out, saying why."""

    if not found.server_tables:
        return []
    lines = ["", "# MCP servers (env and header values masked), given to every run and chat but an --offline one:"]
    for table in found.server_tables:
        fields = _masked(table)
        raw = table.found.value
        status, why = _status(found, table)
        trusted = " (trusted project)" if status == "in_force" and table.found.source.startswith("project ") else ""
        body = [f"{key} = {_toml(fields[key])}" for key in ("transport", "command", "args", "env", "cwd", "url",
                                                            "headers") if raw.get(key) is not None]
        if status == "refused":
            body.append(f"# refused, and a run stops on it: {why}")
        elif status == "replaced":
            body.append(f"# replaced by {why}")
        prefix = "" if status == "in_force" else "# "
        head = f"[mcp_servers.{_key(table.name)}]"
        lines += ["", *_aligned([(f"{prefix}{head}", f"# {table.found.source}{trusted}")]),
                  *(line if line.startswith("#") else prefix + line for line in body)]
    return lines


def _shown(leaf: tuple[str, ...], value: Any) -> Any:
    """A provider option's value as the redaction policy shows it, its whole key path counted (an `env` table's
    values, a `*_TOKEN` key's, a URL's user-info masked)."""

    nested = value
    for key in reversed(leaf):
        nested = {key: nested}
    shown = redact(nested)
    for key in leaf:
        shown = shown[key]
    return shown


def _server_json(found: Config, table: ConfiguredServer) -> dict[str, Any]:
    fields = _masked(table)
    status, why = _status(found, table)
    return {**fields, "source": table.found.source, "status": status,
            **({"refused": why} if status == "refused" else {"replaced_by": why} if status == "replaced" else {})}


def _status(found: Config, table: ConfiguredServer) -> tuple[str, str | None]:
    """`in_force`; `refused` and why (an untrusted project's table: the error, saying how to trust the project); or
    `replaced` and by which table (the project's of the same name)."""

    if table.refused is not None:
        return "refused", table.refused.removeprefix(f"{table.found.place}: ")
    winner = found.mcp_servers.get(table.name)
    if winner is not None and winner.source != table.found.source:
        return "replaced", winner.source
    return "in_force", None


def _masked(table: ConfiguredServer) -> dict[str, Any]:
    """A server's fields, every one present (the transport as the fields imply it), `env` and `headers` values
    masked, and the command line and url scrubbed of credentials (those values too, wherever they recur)."""

    raw = table.found.value
    found: list[str] = []
    env = redact({"env": dict(raw.get("env") or {}), "headers": dict(raw.get("headers") or {})}, found=found)
    known = tuple(found)
    command = raw.get("command")
    argv = [scrub(arg, known) for arg in redact([command, *(raw.get("args") or ())] if command is not None else [])]
    url = raw.get("url")
    transport = raw.get("transport") or ("http" if url is not None and command is None else "stdio")
    return {"name": table.name, "transport": transport, "command": argv[0] if argv else None, "args": argv[1:],
            "env": env["env"], "cwd": raw.get("cwd"), "url": None if url is None else scrub(url, known),
            "headers": env["headers"]}


def _aligned(rows: list[tuple[str, str]]) -> list[str]:
    width = min(max((len(text) for text, note in rows if note), default=0), 44)
    return [f"{text.ljust(width)}   {note}" if note else text for text, note in rows]


def _key(name: str) -> str:
    return name if name and all(c.isalnum() or c in "_-" for c in name) else _toml(name)


def _toml(value: Any) -> str:
    """A value as TOML writes it (a path as a string; no idle timeout as "inf")."""

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
