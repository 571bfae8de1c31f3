"""The workspace and scripted backend of `harness run --offline` and `harness chat --offline`, through
`harness_core.offline.offline_workspace` (which does the work); adds only the command line's stderr lines (none
under `-q`).

Layer: CLI, loaded when an offline command runs (after `check_offline_flags`); no concrete provider.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TypeVar

import click

from harness_core import AgentRunSpec, SessionSpec, Tool, check_run
from harness_core.cli.event_loop import run_async
from harness_core.cli.output import say
from harness_core.errors import InvalidSpecError
from harness_core.mcp import HARNESS_SERVER
from harness_core.offline import check_offline, offline_workspace as played_offline, workspace_conflict
from harness_core.plugins import get_host
from harness_core.scripted.scenarios import CallMcpTool, Scenario

SpecT = TypeVar("SpecT", AgentRunSpec, SessionSpec)

__all__ = ["check_offline_flags", "check_scenario_tools", "offline_workspace"]


@contextmanager
def offline_workspace(spec: SpecT, provider: str | None, scenario: str, *, explicit_cwd: bool, keep: bool,
                      what: str = "run", quiet: bool = False) -> Iterator[SpecT]:
    """`harness_core.offline.offline_workspace` for the command line: a temporary workspace unless `explicit_cwd`
    (removed afterwards unless `keep`), the scenario's files, the backend; what it does is said on stderr (`what`
    names the command's unit; `quiet`, for `-q`: only where a kept workspace is, as `--keep-workspace` asked). A `--cwd`
    directory was checked by `check_offline_flags` (empty, or `--force`)."""

    def tell(workspace: Path, created: list[str]) -> None:
        if quiet:
            return
        if not explicit_cwd:
            then = f"kept after the {what}" if keep else f"removed after the {what}; --keep-workspace keeps it"
            say(f"offline workspace {workspace}", f"({then})")
        if created:
            say(f"created {', '.join(created)}", f"in {workspace}", f"for scenario {scenario!r}")

    with played_offline(spec, provider, scenario, temporary=not explicit_cwd, keep=keep, force=True, host=get_host(),
                        on_ready=tell) as offline_run:
        yield offline_run
    if keep and not explicit_cwd:  # asked for: said even under -q
        say("kept the offline workspace", str(offline_run.cwd))


def check_offline_flags(spec: AgentRunSpec, provider: str | None, scenario: str, *, explicit_cwd: bool, keep: bool,
                   force: bool, runs_dir: Path | None, background: bool = False, tools: tuple[Tool, ...] = ()) -> None:
    """Everything `harness run --offline` checks before it creates anything: the scenario, provider, options,
    capabilities, the agent's CLI, the runs directory, the workspace (raises a usage or spec error). An option
    the offline run refuses (it would take the agent off its backend) is checked here only for a `background` run,
    which plays elsewhere: in the foreground, `offline_workspace` refuses it before creating anything."""

    host = get_host()
    played = check_offline(spec, provider, scenario, host=host, pins=background)
    check_scenario_tools(played, spec, tools)
    run_async(partial(check_run, spec, provider, runs_dir=runs_dir, host=host, tools=tools))  # raises what `run` would
    if explicit_cwd:
        if keep:
            raise click.UsageError("--keep-workspace is for the temporary workspace; a --cwd directory is kept")
        conflict = None if force else workspace_conflict(played, spec.cwd)
        if conflict is not None:
            raise click.UsageError(f"{conflict}. Use an empty or new directory (mkdir DIR; --cwd DIR), leave out "
                                   "--cwd for a temporary workspace, or pass --force to play it there anyway")
    elif force:
        raise click.UsageError("--force is for --offline --cwd DIR (a temporary workspace is always empty)")


def check_scenario_tools(scenario: Scenario, spec: AgentRunSpec, tools: tuple[Tool, ...]) -> None:
    """Refuse, before anything is created, a scenario that calls an MCP tool the run does not give at all (a Python
    tool not among `--tools`, a server not among `--mcp-server`): it could only fail, after the agent started. A
    tool the run's filters leave out is played, so that the run shows the filter at work.

    Raises:
        InvalidSpecError: naming the tool and how to give it.
    """
    servers = {server.name for server in spec.mcp_servers}
    names = {tool.name for tool in tools}
    for step in scenario.steps:
        if not isinstance(step, CallMcpTool):
            continue
        if step.server == HARNESS_SERVER and step.tool not in names:
            given = f"--tools with a module that has a @tool named {step.tool!r}"
        elif step.server != HARNESS_SERVER and step.server not in servers:
            given = f"--mcp-server {step.server}=COMMAND"
        else:
            continue
        raise InvalidSpecError(f"the offline scenario {scenario.name!r} calls the MCP tool {step.tool!r} of server "
                               f"{step.server!r}, which this run does not have; give the agent the tool with {given}, "
                               "or play another scenario")
