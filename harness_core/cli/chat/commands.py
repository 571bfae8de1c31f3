"""`harness chat`'s click definition: its arguments, options and help; the body is `chat.invocation`.

Layer: CLI start-up (click and the standard library at the top; each command imports its body when it runs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from harness_core.cli.complete import complete_option_key, complete_provider, complete_scenario
from harness_core.cli.exits import harness_command
from harness_core.cli.flags.otel_flag import OTEL_OPTION
from harness_core.cli.flags.runs_dir import RUN_RUNS_DIR_OPTION
from harness_core.cli.flags.scenario_flag import scenario_callback
from harness_core.cli.flags.spec_flags import (
    CWD_OPTION,
    SANDBOX_OPTION,
    approval_option,
    resume_options,
    spec_flag_options,
)
from harness_core.cli.flags.tool_flags import TOOLS_OPTION, tool_flag_options

__all__ = ["chat"]

_DEFAULT_SCENARIO = "say"


@click.command()
@click.option("--provider", "-p", metavar="NAME", shell_complete=complete_provider,
              help="Provider to use (default: $HARNESS_PROVIDER, else "
              "`provider` in the config files (`harness config`), else the provider `harness providers` marks as "
              "default).")
@click.option("--model", "-m", metavar="M", help="Model of the session (default: the configured one, else the "
              "provider's; `/model` changes it for the next turns).")
@CWD_OPTION
@SANDBOX_OPTION
@approval_option("; `/approval` changes it for the next turns")
@resume_options
@spec_flag_options
@tool_flag_options
@click.option("-o", "--option", "options", multiple=True, metavar="KEY=VALUE", shell_complete=complete_option_key,
              help="Provider option (repeatable; dotted keys nest, a repeated key makes a list).")
@RUN_RUNS_DIR_OPTION
@OTEL_OPTION
@click.option("--offline", is_flag=True,
              help="Chat with the real agent CLI against the embedded scripted model backend on 127.0.0.1 (no "
                   "credentials, no network): every turn plays --scenario, whatever is typed.")
@click.option("--scenario", default=_DEFAULT_SCENARIO, show_default=True, metavar="NAME", callback=scenario_callback,
              shell_complete=complete_scenario,
              help="With --offline: what the scripted model does on each turn (say, tools, think, ...).")
@click.option("--keep-workspace", is_flag=True,
              help="With --offline and no --cwd: keep the temporary workspace after the chat.")
@click.option("--force", is_flag=True, help="With --offline --cwd DIR: play in DIR even if it is not empty.")
@click.option("--json", "as_json", is_flag=True, help="Print every turn's events as JSON lines (as in their logs).")
@click.option("-v", "--verbose", count=True, help="-v: show output summaries and usage; -vv: debug logging.")
@TOOLS_OPTION
@harness_command
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
    from harness_core.cli.chat.invocation import chat as implementation

    implementation(provider=provider, model=model, cwd=cwd, sandbox=sandbox, approval=approval,
                   resume_session=resume_session, continue_last=continue_last, spec_fields=spec_fields, options=options,
                   runs_dir=runs_dir, offline=offline, scenario=scenario, keep_workspace=keep_workspace, force=force,
                   as_json=as_json, verbose=verbose, tool_refs=tool_refs)
