"""`harness run`'s click definition: its arguments, options and help; the body is `run.invocation`.

Layer: CLI start-up (click and the standard library at the top, one import when the command runs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from harness_core.cli.complete import complete_option_key, complete_provider, complete_scenario
from harness_core.cli.exits import harness_command
from harness_core.cli.flags.numbers import Number
from harness_core.cli.flags.otel_flag import OTEL_OPTION
from harness_core.cli.flags.output_flags import check_answer_file
from harness_core.cli.flags.runs_dir import RUN_RUNS_DIR_OPTION
from harness_core.cli.flags.scenario_flag import DEFAULT_SCENARIO, scenario_callback
from harness_core.cli.flags.spec_flags import (
    CWD_OPTION,
    SANDBOX_OPTION,
    approval_option,
    resume_options,
    spec_flag_options,
)
from harness_core.cli.flags.tool_flags import TOOLS_OPTION, tool_flag_options

__all__ = ["WORKER_FLAG", "run"]

WORKER_FLAG = "--background-worker"  # = harness_core.jobs.launcher.WORKER_FLAG (not imported: start-up time)
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
@OTEL_OPTION
@click.option("--offline", is_flag=True,
              help="Run the real agent CLI against the embedded scripted model backend on 127.0.0.1 "
                   "(no credentials, no network); the model plays --scenario instead of reading PROMPT.")
@click.option("--scenario", default=DEFAULT_SCENARIO, show_default=True, metavar="NAME", callback=scenario_callback,
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
    from harness_core.cli.run.invocation import run as implementation

    implementation(prompt=prompt, provider=provider, model=model, cwd=cwd, system_prompt=system_prompt, sandbox=sandbox,
                   approval=approval, resume_session=resume_session, continue_last=continue_last,
                   spec_fields=spec_fields, requires=requires, options=options, idle_timeout=idle_timeout,
                   runs_dir=runs_dir, record_wire=record_wire, offline=offline, scenario=scenario,
                   keep_workspace=keep_workspace, force=force, background=background,
                   background_worker=background_worker, as_json=as_json, verbose=verbose, quiet=quiet,
                   output_last_message=output_last_message, show_diff=show_diff, tool_refs=tool_refs)
