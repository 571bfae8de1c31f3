"""`harness run`'s body: its flags turned into an `AgentRunSpec`, played live, `--offline` or `--background`.

Layer: CLI, loaded when the command runs; knows nothing of any concrete provider.
"""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path
from typing import Any

import click

from harness_core import AgentRunSpec, Tool, check_run
from harness_core.cli.event_loop import run_async
from harness_core.cli.flags.continuation import resolve_continue
from harness_core.cli.flags.option_pairs import OptionSyntaxError, parse_option_pairs
from harness_core.cli.flags.otel_flag import otel_from_config
from harness_core.cli.flags.output_flags import check_output_flags
from harness_core.cli.flags.tool_checks import load_cli_tools
from harness_core.cli.foreground.live import RunRequest, execute
from harness_core.cli.foreground.offline import check_offline_flags, offline_workspace
from harness_core.cli.foreground.trust import say_untrusted
from harness_core.cli.output import dumps, say
from harness_core.cli.settings.layering import configured_fields
from harness_core.cli.settings.loader import load_config
from harness_core.cli.stderr_log import level_for, set_level
from harness_core.jobs.launcher import JobPlan, OfflinePlan, launch
from harness_core.jobs.worker import serve
from harness_core.plugins import get_host
from harness_core.store import new_run_id
from harness_core.tools.reference import references

__all__ = ["check_online", "run", "start_background"]

def run(prompt: str | None, provider: str | None, model: str | None, cwd: Path | None,
        system_prompt: str | None, sandbox: str, approval: str, resume_session: str | None,
        continue_last: bool, spec_fields: dict[str, Any], requires: tuple[str, ...], options: tuple[str, ...],
        idle_timeout: float | None,
        runs_dir: Path | None, record_wire: bool, offline: bool, scenario: str, keep_workspace: bool,
        force: bool, background: bool, background_worker: bool, as_json: bool, verbose: int, quiet: bool,
        output_last_message: Path | None, show_diff: bool = False, tool_refs: tuple[str, ...] = ()) -> None:
    """The body of `harness run` (its flags and help: `run.commands`)."""
    if background_worker:
        sys.exit(serve())
    check_output_flags(quiet=quiet, as_json=as_json, background=background, output_last_message=output_last_message)
    if show_diff and (as_json or background):
        raise click.UsageError("--diff prints after a foreground run; with --json or --background, use "
                               "`harness show RUN_ID --diff` once the run is over")
    if background and verbose:
        raise click.UsageError("-v/-vv are for the live view and its log lines, which a background run does not "
                               "have: watch it with `harness attach -v RUN_ID`; its warnings go to "
                               "<runs dir>/RUN_ID.worker.log")
    if verbose >= 2:  # -v is for the rendering; -vv adds debug logs

        set_level(level_for(verbose))

    config = load_config(cwd)  # a bad file stops everything, before stdin is read
    if (otel := config.values.get("otel")) is not None:
        otel_from_config(otel.value, otel.source)  # before the plugin host loads: the observer reads it then
    if prompt is None and offline:
        prompt = f"(offline scenario {scenario!r})"
    if prompt is None:
        raise click.UsageError("missing PROMPT: pass the task as an argument, or `-` to read it from stdin")
    if prompt == "-":
        prompt = _stdin_prompt()
    try:
        provider_options = parse_option_pairs(options)
    except OptionSyntaxError as exc:
        raise click.BadParameter(str(exc), param_hint="-o/--option") from None

    runs_dir = runs_dir or config.get("runs_dir")
    resume_session, provider = resolve_continue(continue_last, resume_session, provider, offline=offline,
                                                runs_dir=runs_dir, cwd=cwd, what="run")
    provider = provider or config.get("provider")
    fields: dict[str, Any] = {
        "prompt": prompt, "system_prompt": system_prompt, "model": model, "sandbox": sandbox,
        "approval": approval, "resume_session": resume_session, "requires": frozenset(requires),
        "idle_timeout": idle_timeout, "provider_options": provider_options, **spec_fields,
    }
    configured_fields(click.get_current_context(), config, provider, fields, offline=offline,
                      scenario=scenario if offline else None)
    approval = fields["approval"]
    if cwd is not None:
        fields["cwd"] = cwd
    project = cwd if cwd is not None else None if offline else Path.cwd()  # offline, no --cwd: a new workspace
    fields["trust_project"] = not offline and project is not None and config.trusts(project)  # offline: never
    spec = AgentRunSpec(**fields)
    tools = load_cli_tools(tool_refs)  # runs the user's module: only for what they typed, after the spec checks
    interactive = sys.stdin.isatty() and sys.stderr.isatty()  # a `requires_approval` tool asks under every policy

    def request_for(to_run: AgentRunSpec) -> RunRequest:
        return RunRequest(spec=to_run, provider=provider, runs_dir=runs_dir, record_wire=record_wire,
                          json=as_json, verbose=verbose, interactive=interactive, environ=dict(os.environ),
                          quiet=quiet, output_last_message=output_last_message, diff=show_diff, tools=tools)

    if not offline:
        scenario_given = click.get_current_context().get_parameter_source("scenario") is not _DEFAULT_SOURCE
        if keep_workspace or force or scenario_given:
            raise click.UsageError("--scenario, --keep-workspace and --force only apply with --offline")
        say_untrusted(config, provider, spec.cwd, quiet=quiet)
        if background:
            check_online(spec, provider, runs_dir, tools)
            sys.exit(start_background(spec, provider, runs_dir=runs_dir, record_wire=record_wire, as_json=as_json,
                                      tools=tools))
        sys.exit(run_async(execute, request_for(spec), sys.stdout))
    explicit_cwd = cwd is not None
    check_offline_flags(spec, provider, scenario, explicit_cwd=explicit_cwd, keep=keep_workspace, force=force,
                        runs_dir=runs_dir, background=background, tools=tools)
    if explicit_cwd:
        say_untrusted(config, provider, spec.cwd, quiet=quiet)
    if background:
        plan = OfflinePlan(scenario=scenario, explicit_cwd=explicit_cwd, keep_workspace=keep_workspace)
        sys.exit(start_background(spec, provider, runs_dir=runs_dir, record_wire=record_wire, as_json=as_json,
                                  offline=plan, tools=tools))

    with offline_workspace(spec, provider, scenario, explicit_cwd=explicit_cwd, keep=keep_workspace,
                           quiet=quiet) as played:
        status = run_async(execute, request_for(played), sys.stdout)
    sys.exit(status)


_DEFAULT_SOURCE = click.core.ParameterSource.DEFAULT


def check_online(spec: AgentRunSpec, provider: str | None, runs_dir: Path | None,
                 tools: tuple[Tool, ...] = ()) -> None:
    """What a foreground run checks before it spawns anything (raises what `run` would), before a worker starts."""

    run_async(partial(check_run, spec, provider, runs_dir=runs_dir, host=get_host(), tools=tools))


def start_background(spec: AgentRunSpec, provider: str | None, *, runs_dir: Path | None, record_wire: bool,
                     as_json: bool, offline: OfflinePlan | None = None, tools: tuple[Tool, ...] = ()) -> int:
    """Start a checked run in a detached worker; print its id (stdout) and how to follow it (stderr)."""

    plan = JobPlan(spec=spec, run_id=new_run_id(), provider=provider, runs_dir=runs_dir, record_wire=record_wire,
                   offline=offline, tools=references(tools))
    started = launch(plan)
    if as_json:
        click.echo(dumps({"run_id": started.run_id, "log": str(started.log), "pid": started.pid,
                          "wire": str(started.log.with_name(f"{started.run_id}.wire.jsonl")) if record_wire else None,
                          "workspace": str(started.workspace) if started.workspace else None}))
        return 0
    click.echo(started.run_id)
    rid = started.run_id
    if started.workspace is not None:
        kept = "kept after the run" if offline is not None and offline.keep_workspace else "removed after the run"
        say(f"offline workspace {started.workspace}", f"({kept})")
    say(f"run {rid} started in the background", f"(log {started.log});", f"`harness attach {rid}` to watch it,",
        f"`harness cancel {rid}` to stop it")
    if record_wire:
        say(f"wire log {started.log.with_name(f'{rid}.wire.jsonl')}", f"(`harness replay {rid}` plays it back",
            "once the run is over)")
    if spec.approval.value != "never" or any(t.requires_approval for t in tools):
        say("it asks before acting:", f"answer in `harness attach {rid}` on a terminal,",
            f"or with `harness approve {rid} REQUEST_ID allow|deny`;", "`harness runs` shows it waiting")
    return 0


PROMPT_LIMIT = 64 << 20
"""`harness run -` reads at most this many bytes of prompt from stdin (a device like /dev/zero never ends)."""


def _stdin_prompt() -> str:
    data = sys.stdin.buffer.read(PROMPT_LIMIT + 1)
    if len(data) > PROMPT_LIMIT:
        raise click.UsageError(f"the prompt on stdin is longer than {PROMPT_LIMIT >> 20} MiB (is it the right input? "
                               "a device such as /dev/zero never ends); give a shorter one")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise click.UsageError(f"the prompt on stdin is not UTF-8 text ({exc.reason}); give it as UTF-8") from None
