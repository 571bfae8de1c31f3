"""`harness run`: its options, and turning them into an `AgentRunSpec` (online, or `--offline` against the
embedded scripted model backend).

Layer: CLI, imported at start-up: click and the standard library at the top; the spec model, the run driver
(`_live`) and the offline support are imported when the command runs. Knows nothing of any concrete provider.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from harness_core.cli.common import RUN_RUNS_DIR_OPTION, harness_command, run_async, say
from harness_core.cli.complete import complete_option_key, complete_provider, complete_scenario
from harness_core.cli.numbers import Number
from harness_core.cli.providers.scenarios import scenario_callback
from harness_core.cli.render.streams import check_answer_file, check_output_flags
from harness_core.cli.run.option_pairs import OptionSyntaxError, parse_option_pairs
from harness_core.cli.run.spec_flags import (
    CWD_OPTION,
    SANDBOX_OPTION,
    approval_option,
    resume_options,
    spec_flag_options,
)
from harness_core.cli.run.tool_flags import tool_flag_options
from harness_core.cli.run.tool_refs import TOOLS_OPTION, load_cli_tools

WORKER_FLAG = "--background-worker"  # = harness_core.jobs.launcher.WORKER_FLAG (not imported: start-up time)

if TYPE_CHECKING:
    from harness_core import AgentRunSpec, Tool
    from harness_core.cli.config.loader import Config
    from harness_core.cli.run.live import RunRequest
    from harness_core.jobs.launcher import OfflinePlan

__all__ = ["check_offline_flags", "check_online", "run", "say_untrusted", "start_background"]

_DEFAULT_SCENARIO = "tools"  # = harness_core.offline.DEFAULT_SCENARIO (importing it here would slow start-up)


_SECONDS = Number(real=True, low=0, low_open=True, high=604_800, unit="seconds", inf_means="no idle timeout",
                  example="300")


@click.command()
@click.argument("prompt", required=False)
@click.option("--provider", "-p", metavar="NAME", shell_complete=complete_provider,
              help="Provider to use (default: $HARNESS_PROVIDER, else "
              "`provider` in the config files (`harness config`), else the provider `harness providers` marks as "
              "default).")
@click.option("--model", "-m", metavar="M", help="Model name (default: the configured one, else the provider's).")
@CWD_OPTION
@click.option("--system-prompt", metavar="TEXT", help="Extra instructions for the agent.")
@SANDBOX_OPTION
@approval_option()
@resume_options
@spec_flag_options
@tool_flag_options
@click.option("--require", "requires", multiple=True, metavar="CAPABILITY",
              type=click.Choice(["streaming", "session", "interrupt", "approvals"]),
              help="A capability the run cannot do without (repeatable).")
@click.option("-o", "--option", "options", multiple=True, metavar="KEY=VALUE", shell_complete=complete_option_key,
              help="Provider option (repeatable; dotted keys nest, a repeated key makes a list).")
@click.option("--idle-timeout", type=_SECONDS, metavar="SECONDS",
              help="Fail the run after SECONDS without any event (more than 0). Default: no idle timeout; "
                   "`inf` says so explicitly.")
@RUN_RUNS_DIR_OPTION
@click.option("--record-wire", is_flag=True, help="Also log every line to and from the agent CLI.")
@click.option("--offline", is_flag=True,
              help="Run the real agent CLI against the embedded scripted model backend on 127.0.0.1 "
                   "(no credentials, no network); the model plays --scenario instead of reading PROMPT.")
@click.option("--scenario", default=_DEFAULT_SCENARIO, show_default=True, metavar="NAME", callback=scenario_callback,
              shell_complete=complete_scenario,
              help="With --offline: what the scripted model does (say, tools, think, fail_500, ...).")
@click.option("--keep-workspace", is_flag=True,
              help="With --offline and no --cwd: keep the temporary workspace after the run (it is removed "
                   "otherwise; the run log stays either way).")
@click.option("--force", is_flag=True,
              help="With --offline --cwd DIR: play the scenario in DIR even if it is not empty (the scripted "
                   "model creates and changes files there).")
@click.option("--background", "-b", is_flag=True,
              help="Check everything, start the run in a detached worker that survives this terminal, print its "
                   "run id and return (watch it with `harness attach`, stop it with `harness cancel`).")
@click.option(WORKER_FLAG, "background_worker", is_flag=True, hidden=True)
@click.option("--json", "as_json", is_flag=True, help="Print the run's events as JSON lines (as in its log); with "
              "--background, {\"run_id\": ..., \"log\": ...}.")
@click.option("-v", "--verbose", count=True, help="-v: show reasoning, output summaries and usage; -vv: debug "
              "logging.")
@click.option("-q", "--quiet", is_flag=True, help="Print only the final answer (stdout): no live view; a failure is "
              "one line on stderr.")
@click.option("--diff", "show_diff", is_flag=True,
              help="After the run, print the diff of the files it changed on stdout (also: `harness show --diff`).")
@click.option("--output-last-message", "output_last_message", type=click.Path(dir_okay=False, path_type=Path),
              metavar="FILE", callback=check_answer_file,
              help="Also write the final answer to FILE (created or replaced; only when the run succeeds).")
@TOOLS_OPTION
@harness_command
def run(prompt: str | None, provider: str | None, model: str | None, cwd: Path | None,
        system_prompt: str | None, sandbox: str, approval: str, resume_session: str | None,
        continue_last: bool, spec_fields: dict[str, Any], requires: tuple[str, ...], options: tuple[str, ...],
        idle_timeout: float | None,
        runs_dir: Path | None, record_wire: bool, offline: bool, scenario: str, keep_workspace: bool,
        force: bool, background: bool, background_worker: bool, as_json: bool, verbose: int, quiet: bool,
        output_last_message: Path | None, show_diff: bool = False, tool_refs: tuple[str, ...] = ()) -> None:
    """Run one agent turn on PROMPT (`-` reads it from stdin) and show it live, or (--background) detached.

    When stdout is not a terminal (`> answer.txt`, a pipe) it gets the final answer alone and the live view goes
    to stderr; -q prints only the answer.

    Exit status: 0 success, 1 the run failed, 2 usage error, 3 provider unavailable, 130 interrupted; with
    --background, 0 once the run has started (its own status: `harness attach`, `harness runs`).
    """
    if background_worker:
        from harness_core.jobs.worker import serve

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
        from harness_core.cli.stderr_log import level_for, set_level

        set_level(level_for(verbose))
    from harness_core import AgentRunSpec
    from harness_core.cli.config.loader import load_config
    from harness_core.cli.run.live import RunRequest, execute

    config = load_config(cwd)  # a bad file stops everything, before stdin is read
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
    from harness_core.cli.config.settings import configured_fields
    from harness_core.cli.run.spec_flags import resolve_continue

    runs_dir = runs_dir or config.get("runs_dir")
    resume_session, provider = resolve_continue(continue_last, resume_session, provider, offline=offline,
                                                runs_dir=runs_dir, cwd=cwd, what="run")
    provider = provider or config.get("provider")
    fields: dict[str, Any] = {
        "prompt": prompt, "system_prompt": system_prompt, "model": model, "sandbox": sandbox,
        "approval": approval, "resume_session": resume_session, "requires": frozenset(requires),
        "idle_timeout": idle_timeout, "provider_options": provider_options, **spec_fields,
    }
    configured_fields(click.get_current_context(), config, provider, fields)
    approval = fields["approval"]
    if cwd is not None:
        fields["cwd"] = cwd
    project = cwd if cwd is not None else None if offline else Path.cwd()  # offline, no --cwd: a new workspace
    fields["trust_project"] = not offline and project is not None and config.trusts(project)  # offline: never
    spec = AgentRunSpec(**fields)
    tools = load_cli_tools(tool_refs)  # runs the user's module: only for what they typed, after the spec checks
    interactive = approval != "never" and sys.stdin.isatty() and sys.stderr.isatty()

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
        from harness_core.jobs.launcher import OfflinePlan

        plan = OfflinePlan(scenario=scenario, explicit_cwd=explicit_cwd, keep_workspace=keep_workspace)
        sys.exit(start_background(spec, provider, runs_dir=runs_dir, record_wire=record_wire, as_json=as_json,
                                  offline=plan, tools=tools))
    from harness_core.cli.run.offline import offline_workspace

    with offline_workspace(spec, provider, scenario, explicit_cwd=explicit_cwd, keep=keep_workspace,
                           quiet=quiet) as played:
        status = run_async(execute, request_for(played), sys.stdout)
    sys.exit(status)


_DEFAULT_SOURCE = click.core.ParameterSource.DEFAULT


def say_untrusted(config: Config, provider: str | None, cwd: Path, *, quiet: bool = False) -> None:
    """Print, once, that the project's own agent configuration is not loaded (when `cwd` is not a trusted project
    and has some for the provider's agent); nothing under `quiet`."""
    from harness_core.cli.run.trust import untrusted_notice
    from harness_core.plugins import get_host

    notice = None if quiet else untrusted_notice(config, get_host(), provider, cwd)
    if notice is not None:
        say(*notice)


def check_online(spec: AgentRunSpec, provider: str | None, runs_dir: Path | None,
                 tools: tuple[Tool, ...] = ()) -> None:
    """What a foreground run checks before it spawns anything (raises what `run` would), before a worker starts."""
    from harness_core._run.logs import check_writable
    from harness_core._run.probe import prepare
    from harness_core._run.started import capabilities_of
    from harness_core._run.tooling import check_tools_for
    from harness_core.plugins import get_host

    host = get_host()
    probed = run_async(prepare, spec, provider, host)
    check_tools_for(probed.name, capabilities_of(probed), tools, host.providers_with)
    check_writable(runs_dir)


def check_offline_flags(spec: AgentRunSpec, provider: str | None, scenario: str, *, explicit_cwd: bool, keep: bool,
                   force: bool, runs_dir: Path | None, background: bool = False, tools: tuple[Tool, ...] = ()) -> None:
    """Everything `harness run --offline` checks before it creates anything: the scenario, provider, options,
    capabilities, the agent's CLI, the runs directory, the workspace (raises a usage or spec error). An option
    the offline run refuses (it would take the agent off its backend) is checked here only for a `background` run,
    which plays elsewhere: in the foreground, `offline_workspace` refuses it before creating anything."""
    from harness_core._run.logs import check_writable
    from harness_core._run.probe import prepare
    from harness_core._run.started import capabilities_of
    from harness_core._run.tooling import check_tools_for
    from harness_core.offline._setup import check_offline, workspace_conflict
    from harness_core.plugins import get_host

    host = get_host()
    played = check_offline(spec, provider, scenario, host=host, pins=background)
    probed = run_async(prepare, spec, provider, host)  # the CLI is there and new enough (raises what `run` would)
    check_tools_for(probed.name, capabilities_of(probed), tools, host.providers_with)
    check_writable(runs_dir)
    if explicit_cwd:
        if keep:
            raise click.UsageError("--keep-workspace is for the temporary workspace; a --cwd directory is kept")
        conflict = None if force else workspace_conflict(played, spec.cwd)
        if conflict is not None:
            raise click.UsageError(f"{conflict}. Use an empty or new directory (mkdir DIR; --cwd DIR), leave out "
                                   "--cwd for a temporary workspace, or pass --force to play it there anyway")
    elif force:
        raise click.UsageError("--force is for --offline --cwd DIR (a temporary workspace is always empty)")


def start_background(spec: AgentRunSpec, provider: str | None, *, runs_dir: Path | None, record_wire: bool,
                     as_json: bool, offline: OfflinePlan | None = None, tools: tuple[Tool, ...] = ()) -> int:
    """Start a checked run in a detached worker; print its id (stdout) and how to follow it (stderr)."""
    from harness_core.cli.common import dumps
    from harness_core.jobs.launcher import JobPlan, launch
    from harness_core.store import new_run_id
    from harness_core.tools.loader import references

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
    if spec.approval.value != "never":
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
