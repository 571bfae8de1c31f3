"""The run API: `open_run` / `run` / `run_sync` (exported by `harness_core`); the checks before a run are in `probe`.

Layer: core runtime (the runner's front door). Knows the plugin host, the provider interface and `LiveRun`;
knows nothing of any concrete provider or of rendering. Each pre-flight check raises its `HarnessError` before
anything is spawned; after that, everything ends in the `done` event's result (docs/runs.md).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import anyio

from harness_core._run.approvals import Approver
from harness_core._run.live import LiveRun
from harness_core._run.pipe import EventCallback
from harness_core._run.probe import ProbedProvider, preflight, prepare, probe
from harness_core._run.run_files import RunLogs, check_writable
from harness_core._run.started import capabilities_of, redacted_spec
from harness_core._run.tool_serving import check_tools_for, checked_tools, new_tool_server, served, tool_transport
from harness_core.events import HarnessResult
from harness_core.mcp import server_secrets
from harness_core.plugins import PluginHost, get_host
from harness_core.redaction import RunSecrets
from harness_core.spec import AgentRunSpec
from harness_core.store import new_run_id, validate_run_id
from harness_core.tools.tool import Tool

__all__ = ["Approver", "EventCallback", "LiveRun", "ProbedProvider", "check_run", "open_run", "prepare", "preflight",
           "probe", "played", "run", "run_sync", "unwrap_caller_exception"]


async def check_run(spec: AgentRunSpec, provider: str | None = None, *, runs_dir: str | Path | None = None,
                    host: PluginHost | None = None, tools: Sequence[Tool] = ()) -> None:
    """What `open_run` checks before it spawns anything, without starting the run (for a run played elsewhere, a
    background worker say): the provider and its options, the capabilities the spec needs, the agent's CLI (found
    and new enough), that the agent can reach `tools`, that `runs_dir` is writable.

    Raises: what `open_run` raises before anything is spawned.
    """
    host = host or get_host()
    probed = await prepare(spec, provider, host)
    check_tools_for(probed.name, capabilities_of(probed), tools, host.providers_with)
    check_writable(runs_dir)


@asynccontextmanager
async def open_run(
    spec: AgentRunSpec,
    provider: str | None = None,
    *,
    approver: Approver | None = None,
    on_event: EventCallback | None = None,
    runs_dir: str | Path | None = None,
    run_log: bool = True,
    record_wire: bool = False,
    host: PluginHost | None = None,
    run_id: str | None = None,
    buffer: int = 256,
    interrupt_grace: float = 5.0,
    tools: Iterable[Tool] | None = None,
) -> AsyncIterator[LiveRun]:
    """Start a run and give it to the caller live.

    Raises (before anything is spawned): ProviderNotFoundError, UnsupportedFeatureError, InvalidSpecError,
    CliNotFoundError, CliVersionUnsupportedError. Everything after that ends in the `done` event's result. An
    exception raised by the caller's own block propagates unchanged (not wrapped in an exception group), after
    the run was interrupted and its log completed. Leaving the block early interrupts the run, waits
    `interrupt_grace`, then stops it hard; that bound holds for providers that honour cancellation.

    `tools`: Python functions decorated with `@tool` the agent may call; Harness serves them for the run as the
    MCP server `harness` and runs each call here, in this process (see docs/tools.md).
    """
    host = host or get_host()
    given_tools = checked_tools(tools, spec)
    probed = await prepare(spec, provider, host)
    tool_server = new_tool_server(given_tools, spec, object_results=probed.registered.cls.info.mcp_object_results)
    serves = tool_server is not None and bool(tool_server.served)
    transport = tool_transport(probed.name, capabilities_of(probed), host.providers_with) if serves else None
    rid = validate_run_id(run_id) if run_id is not None else new_run_id()  # also without a run log
    info = probed.registered.cls.info
    secrets = RunSecrets.of_run(spec.env, spec.provider_options, secret_flags=info.secret_flags,
                                public_env=info.public_env).with_values(server_secrets(spec.mcp_servers))
    if tool_server is not None:
        secrets = secrets.with_values([tool_server.secret])
    logs = RunLogs.open(runs_dir, rid, run_log=run_log, record_wire=record_wire, secrets=secrets)
    try:
        async with served(tool_server, spec, transport) as given:
            registered = probed.registered
            if logs.recorder is not None:
                logs.recorder.header(
                    run_id=rid, provider=registered.name, cli=probed.cli,
                    provider_version=registered.distribution_version or registered.cls.info.version,
                    spec=redacted_spec(given, registered.cls.info))
            live = LiveRun(given, probed, host=host, run_id=rid, logs=logs, approver=approver, on_event=on_event,
                           buffer=buffer, interrupt_grace=interrupt_grace, tools=tool_server)
            async with played(live):
                yield live
    finally:
        logs.close()  # the run closes them after `done`; this only matters if it never got to run


@asynccontextmanager
async def played(live: LiveRun) -> AsyncIterator[LiveRun]:
    """A run owner's block around one `LiveRun`: `drive` in a task group while the caller consumes it, then
    `aclose` (shielded: the caller's scope may be the one being cancelled). An exception from the caller's own
    block propagates unchanged, not wrapped in an exception group."""
    thrown: BaseException | None = None
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(live.drive)
            try:
                yield live
            except BaseException as exc:
                thrown = exc
                raise
            finally:
                await live.aclose()
    except BaseException as group:
        unwrap_caller_exception(group, thrown)
        raise


def unwrap_caller_exception(group: BaseException, thrown: BaseException | None) -> None:
    """A run owner's task group wraps what the caller's own block raised (`thrown`) in an exception group:
    raise the caller's exception unchanged instead. Returns (the owner re-raises `group`) otherwise."""
    inner = getattr(group, "exceptions", None)
    if thrown is not None and group is not thrown and inner is not None and len(inner) == 1 and inner[0] is thrown:
        raise thrown from None


async def run(
    spec: AgentRunSpec,
    provider: str | None = None,
    *,
    approver: Approver | None = None,
    on_event: EventCallback | None = None,
    runs_dir: str | Path | None = None,
    run_log: bool = True,
    record_wire: bool = False,
    host: PluginHost | None = None,
    run_id: str | None = None,
    buffer: int = 256,
    interrupt_grace: float = 5.0,
    tools: Iterable[Tool] | None = None,
) -> HarnessResult:
    """Run `spec` to the end and return its result. The arguments are exactly `open_run`'s, with its defaults
    (see `help(open_run)`: the provider, approver, event callback, runs directory, wire log, buffer, interrupt
    grace and Python tools).

    Raises: what `open_run` raises before anything is spawned; after that, every outcome is in the result.
    """
    async with open_run(spec, provider, approver=approver, on_event=on_event, runs_dir=runs_dir, run_log=run_log,
                        record_wire=record_wire, host=host, run_id=run_id, buffer=buffer,
                        interrupt_grace=interrupt_grace, tools=tools) as live:
        return await live.wait()


def run_sync(
    spec: AgentRunSpec,
    provider: str | None = None,
    *,
    approver: Approver | None = None,
    on_event: EventCallback | None = None,
    runs_dir: str | Path | None = None,
    run_log: bool = True,
    record_wire: bool = False,
    host: PluginHost | None = None,
    run_id: str | None = None,
    buffer: int = 256,
    interrupt_grace: float = 5.0,
    backend: str = "asyncio",
    tools: Iterable[Tool] | None = None,
) -> HarnessResult:
    """Blocking convenience for scripts: `run_sync(AgentRunSpec(prompt="..."))`, on a new event loop of `backend`
    ("asyncio" or "trio"). The other arguments are `run`'s (and `open_run`'s).

    Raises: as `run`.
    """

    async def main() -> HarnessResult:
        return await run(spec, provider, approver=approver, on_event=on_event, runs_dir=runs_dir, run_log=run_log,
                         record_wire=record_wire, host=host, run_id=run_id, buffer=buffer,
                         interrupt_grace=interrupt_grace, tools=tools)

    return anyio.run(main, backend=backend)
