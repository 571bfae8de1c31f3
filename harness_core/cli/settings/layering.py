"""The configuration laid under what `harness run` / `harness chat` were given on the command line
(`configured_fields`); a setting an untrusted project file may not make refused unless the command line gives it.

Layer: CLI, loaded when a command runs; knows the spec's field names and click's parameter sources; no provider.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import click

from harness_core.cli.settings.checks import check_config
from harness_core.cli.settings.loader import SPEC_KEYS, Config, ConfigError
from harness_core.errors import InvalidSpecError
from harness_core.offline import scenario_named
from harness_core.plugins import get_host
from harness_core.scripted.scenarios import CallMcpTool

__all__ = ["configured_fields"]


def configured_fields(ctx: click.Context, config: Config, provider: str | None, fields: dict[str, Any], *,
                      offline: bool = False, scenario: str | None = None) -> None:
    """Lay `config` under the spec `fields` of a run (or chat) of `provider` (None: the default one): each setting
    the command line did not give, and the `[providers.NAME]` options under `fields["provider_options"]` (the
    `-o` options) key by key. Changes `fields`. `offline`: the files' `[mcp_servers]` are left out (one notice
    names those `scenario` calls a tool of): an offline run takes only the servers given for it (`--mcp-server`)."""

    given = set()
    for key in SPEC_KEYS:
        source = ctx.get_parameter_source(key)
        if source is not None and source is not click.core.ParameterSource.DEFAULT:
            given.add(key)

    host = get_host()
    resolve = host.resolve
    name = resolve(provider or host.default_name())
    from_file = ctx.get_parameter_source("provider") in (None, click.core.ParameterSource.DEFAULT)
    problems = check_config(config, host, name, check_provider=from_file and provider == config.get("provider"))
    for warning in problems.warnings:
        click.echo(f"harness: warning: {warning}", err=True)
    if problems.errors:
        raise ConfigError(problems.errors[0])
    config = config.named(resolve)
    named = {server["name"] for server in fields.get("mcp_servers") or ()}  # --mcp-server: the command line's
    left_out: dict[str, str] = {}  # offline: the files' servers (a project's too), by where each is
    if offline:
        left_out = {server: found.source for server, found in config.mcp_servers.items() if server not in named}
        left_out.update({loc[1]: message.split(": ", 1)[0] for loc, message in config.refused.items()
                         if loc[0] == "mcp_servers" and loc[1] not in named})
    _refuse_unless_given(ctx, config, name, given | {f"mcp_servers.{n}" for n in {*named, *left_out}},
                         fields.get("provider_options") or {}, resolve)
    fields.update(config.spec_fields(name, given))
    called = _servers_called(scenario)
    missed = {server: source for server, source in left_out.items() if called is None or server in called}
    if missed:
        listed = ", ".join(f"{server} ({source})" for server, source in missed.items())
        click.echo(f"harness: --offline leaves out the MCP servers of your configuration: {listed}; give a server "
                   "to this run with --mcp-server", err=True)
    configured = [found.value for server, found in config.mcp_servers.items()
                  if server not in named and server not in left_out]
    if configured:
        fields["mcp_servers"] = [*configured, *(fields.get("mcp_servers") or ())]
    fields["provider_options"] = config.provider_options(name, fields.get("provider_options") or {})


def _servers_called(scenario: str | None) -> frozenset[str] | None:
    """The MCP servers whose tools offline `scenario` (a name or inline JSON) calls; None when it is not known."""
    if scenario is None:
        return None
    try:
        steps = scenario_named(scenario).steps
    except InvalidSpecError:
        return None
    return frozenset(step.server for step in steps if isinstance(step, CallMcpTool))


def _refuse_unless_given(ctx: click.Context, config: Config, provider: str, given: set[str],
                         options: Mapping[str, Any], resolve: Callable[[str], str]) -> None:
    """Raise the error of a setting an untrusted project file may not make, when this run would take it from
    the file: one the command line gives itself (`-p`, `-s`, `--runs-dir`, `-o KEY=…`) is simply overridden."""

    for loc, message in config.refused.items():
        if loc[0] == "mcp_servers":
            if f"mcp_servers.{loc[1]}" in given:  # the command line names a server of its own by that name
                continue
        elif loc[0] == "providers":
            if resolve(loc[1]) != provider or _has(options, loc[2:]):
                continue
        elif loc[0] in given or ctx.get_parameter_source(loc[0]) not in (None, click.core.ParameterSource.DEFAULT):
            continue
        elif (chosen := config.values.get(loc[0])) is not None and chosen.source.startswith("$"):
            continue  # the environment wins over the project file anyway
        raise ConfigError(message)


def _has(options: Mapping[str, Any], leaf: tuple[str, ...]) -> bool:
    """Whether the `-o` options (nested dicts) set the key path `leaf`."""
    found: Any = options
    for key in leaf:
        if not isinstance(found, Mapping) or key not in found:
            return False
        found = found[key]
    return True
