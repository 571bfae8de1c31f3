"""`harness run`: its options, and turning them into an `AgentRunSpec` (online, or `--offline` against the
embedded scripted model backend).

Layer: CLI, imported at start-up: click and the standard library at the top; the spec model, the run driver
(`_live`) and the offline support are imported when the command runs. Knows nothing of any concrete provider.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from harness_core.cli._common import RUNS_DIR_OPTION, harness_command, run_async
from harness_core.cli._options import OptionSyntaxError, parse_option_pairs

__all__ = ["run"]

_DEFAULT_SCENARIO = "tools"  # = harness_core.offline.DEFAULT_SCENARIO (importing it here would slow start-up)


@click.command()
@click.argument("prompt", required=False)
@click.option("--provider", "-p", metavar="NAME", help="Provider to use (default: $HARNESS_PROVIDER, else the "
              "provider `harness providers` marks as default).")
@click.option("--model", "-m", metavar="M", help="Model name (default: the provider's).")
@click.option("--cwd", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Working directory of the agent (default: the current directory).")
@click.option("--system-prompt", metavar="TEXT", help="Extra instructions for the agent.")
@click.option("--sandbox", type=click.Choice(["read-only", "workspace-write", "danger-full-access"]),
              default="workspace-write", show_default=True, help="How much the agent may change.")
@click.option("--approval", type=click.Choice(["never", "on-request", "untrusted"]), default="never",
              show_default=True, help="When the agent must ask before acting (asked on the terminal).")
@click.option("--resume", "resume_session", metavar="SESSION_ID", help="Continue a provider session.")
@click.option("--require", "requires", multiple=True, metavar="CAPABILITY",
              type=click.Choice(["streaming", "session", "interrupt", "approvals"]),
              help="A capability the run cannot do without (repeatable).")
@click.option("-o", "--option", "options", multiple=True, metavar="KEY=VALUE",
              help="Provider option (repeatable; dotted keys nest, a repeated key makes a list).")
@click.option("--idle-timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="Fail the run after this long without any event.")
@RUNS_DIR_OPTION
@click.option("--record-wire", is_flag=True, help="Also log every line to and from the agent CLI.")
@click.option("--offline", is_flag=True,
              help="Run the real agent CLI against the embedded scripted model backend on 127.0.0.1 "
                   "(no credentials, no network); the model plays --scenario instead of reading PROMPT.")
@click.option("--scenario", default=_DEFAULT_SCENARIO, show_default=True, metavar="NAME",
              help="With --offline: what the scripted model does (say, tools, think, fail_500, ...).")
@click.option("--json", "as_json", is_flag=True, help="Print the run's events as JSON lines (as in its log).")
@click.option("-v", "--verbose", count=True, help="-v: show output summaries and usage; -vv: debug logging.")
@harness_command
def run(prompt: str | None, provider: str | None, model: str | None, cwd: Path | None,
        system_prompt: str | None, sandbox: str, approval: str, resume_session: str | None,
        requires: tuple[str, ...], options: tuple[str, ...], idle_timeout: float | None,
        runs_dir: Path | None, record_wire: bool, offline: bool, scenario: str, as_json: bool,
        verbose: int) -> None:
    """Run one agent turn on PROMPT (`-` reads it from stdin) and show it live.

    Exit status: 0 success, 1 the run failed, 2 usage error, 3 provider unavailable, 130 interrupted.
    """
    if verbose >= 2:  # -v is for the rendering; -vv adds debug logs
        from harness_core.cli._logs import level_for, set_level

        set_level(level_for(verbose))
    from harness_core import AgentRunSpec
    from harness_core.cli._live import RunRequest, execute

    if prompt is None and offline:
        prompt = f"(offline scenario {scenario!r})"
    if prompt is None:
        raise click.UsageError("missing PROMPT: pass the task as an argument, or `-` to read it from stdin")
    if prompt == "-":
        prompt = sys.stdin.read()
    try:
        provider_options = parse_option_pairs(options)
    except OptionSyntaxError as exc:
        raise click.BadParameter(str(exc), param_hint="-o/--option") from None
    fields: dict[str, Any] = {
        "prompt": prompt, "system_prompt": system_prompt, "model": model, "sandbox": sandbox,
        "approval": approval, "resume_session": resume_session, "requires": frozenset(requires),
        "idle_timeout": idle_timeout, "provider_options": provider_options,
    }
    if offline and cwd is None:
        import tempfile

        cwd = Path(tempfile.mkdtemp(prefix="harness-offline-ws-"))
        click.echo(f"harness: offline workspace {cwd}", err=True)
    if cwd is not None:
        fields["cwd"] = cwd
    spec = AgentRunSpec(**fields)
    interactive = approval != "never" and sys.stdin.isatty() and sys.stderr.isatty()

    def request_for(to_run: AgentRunSpec) -> RunRequest:
        return RunRequest(spec=to_run, provider=provider, runs_dir=runs_dir, record_wire=record_wire,
                          json=as_json, verbose=verbose, interactive=interactive, environ=dict(os.environ))

    if not offline:
        sys.exit(run_async(execute, request_for(spec), sys.stdout))
    from harness_core.offline import offline_spec, scenario_named, seed_workspace
    from harness_core.plugins import get_host

    played = scenario_named(scenario)
    created = seed_workspace(played, spec.cwd)
    if created:
        click.echo(f"harness: created {', '.join(created)} in {spec.cwd} for scenario {scenario!r}", err=True)
    with offline_spec(spec, provider, played, host=get_host()) as offline_run:
        status = run_async(execute, request_for(offline_run), sys.stdout)
    sys.exit(status)
