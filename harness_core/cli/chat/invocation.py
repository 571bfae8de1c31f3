"""`harness chat`'s body: its flags turned into the settings of one session (online, or `--offline` against the
embedded scripted model backend, which then answers every turn) and the conversation started.

Layer: CLI, loaded when the command runs; knows nothing of any concrete provider.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import Any

import click

from harness_core import AgentRunSpec, SessionSpec
from harness_core.cli.chat.conversation import ChatRequest, converse
from harness_core.cli.flags.continuation import resolve_continue
from harness_core.cli.flags.option_pairs import OptionSyntaxError, parse_option_pairs
from harness_core.cli.flags.otel_flag import otel_from_config
from harness_core.cli.flags.tool_checks import load_cli_tools
from harness_core.cli.foreground.offline import check_offline_flags, offline_workspace
from harness_core.cli.foreground.trust import say_untrusted
from harness_core.cli.settings.layering import configured_fields
from harness_core.cli.settings.loader import load_config
from harness_core.cli.stderr_log import level_for, set_level

__all__ = ["chat"]

_PLACEHOLDER = "(chat)"
"""The prompt of the spec the pre-flight checks see; a session plays the prompts typed, never this one."""


def chat(provider: str | None, model: str | None, cwd: Path | None, sandbox: str, approval: str,
         resume_session: str | None, continue_last: bool, spec_fields: dict[str, Any], options: tuple[str, ...],
         runs_dir: Path | None, offline: bool, scenario: str, keep_workspace: bool, force: bool, as_json: bool,
         verbose: int, tool_refs: tuple[str, ...] = ()) -> None:
    """Hold a conversation with an agent: one session, one turn per prompt (on a live agent process when the
    provider has live sessions). On a terminal: type a prompt at `you>` (a paste is one prompt; a line ending in
    a backslash, or Alt-Enter, goes on at the next); `/help` lists the commands (`/model`,
    `/approval`, `/exit`); Ctrl-C interrupts the turn (twice: stops it; the chat goes on, in a new agent process
    if need be), Ctrl-D (or Ctrl-C twice at an empty prompt) leaves. Off a terminal: one prompt per line of stdin.

    Exit status: that of the last turn (0 success, 1 failed, 130 interrupted); 2 usage error, 3 provider
    unavailable.
    """
    if verbose >= 2:
        set_level(level_for(verbose))

    config = load_config(cwd)
    if (otel := config.values.get("otel")) is not None:
        otel_from_config(otel.value, otel.source)  # before the plugin host loads: the observer reads it then
    try:
        provider_options = parse_option_pairs(options)
    except OptionSyntaxError as exc:
        raise click.BadParameter(str(exc), param_hint="-o/--option") from None

    runs_dir = runs_dir or config.get("runs_dir")
    resume_session, provider = resolve_continue(continue_last, resume_session, provider, offline=offline,
                                                runs_dir=runs_dir, cwd=cwd, what="chat")
    provider = provider or config.get("provider")
    fields: dict[str, Any] = {"prompt": _PLACEHOLDER, "model": model, "sandbox": sandbox, "approval": approval,
                              "resume_session": resume_session, "provider_options": provider_options,
                              **spec_fields}
    configured_fields(click.get_current_context(), config, provider, fields, offline=offline,
                      scenario=scenario if offline else None)
    if cwd is not None:
        fields["cwd"] = cwd
    project = cwd if cwd is not None else None if offline else Path.cwd()  # offline, no --cwd: a new workspace
    fields["trust_project"] = not offline and project is not None and config.trusts(project)  # offline: never
    spec = AgentRunSpec(**fields)
    tools = load_cli_tools(tool_refs)  # runs the user's module: only for what they typed, after the spec checks
    request = ChatRequest(spec=spec, provider=provider, runs_dir=runs_dir, json=as_json, verbose=verbose,
                          prompt=sys.stdin.isatty(), approvals=sys.stdin.isatty() and sys.stderr.isatty(),
                          environ=dict(os.environ), offline=offline, tools=tools)
    if not offline:
        scenario_given = click.get_current_context().get_parameter_source("scenario") is not _DEFAULT_SOURCE
        if keep_workspace or force or scenario_given:
            raise click.UsageError("--scenario, --keep-workspace and --force only apply with --offline")
        say_untrusted(config, provider, spec.cwd)
        sys.exit(converse(request, sys.stdin, sys.stdout))

    explicit_cwd = cwd is not None
    check_offline_flags(spec, provider, scenario, explicit_cwd=explicit_cwd, keep=keep_workspace, force=force,
                        runs_dir=runs_dir, tools=tools)
    if explicit_cwd:
        say_untrusted(config, provider, spec.cwd)
    with offline_workspace(SessionSpec.of(spec), provider, scenario, explicit_cwd=explicit_cwd, keep=keep_workspace,
                           what="chat") as played:
        status = converse(dataclasses.replace(request, spec=played), sys.stdin, sys.stdout)
    sys.exit(status)


_DEFAULT_SOURCE = click.core.ParameterSource.DEFAULT
