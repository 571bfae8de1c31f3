"""The run API: pre-flight checks, the probe, and `open_run` / `run` / `run_sync` (exported by `harness_core`).

Layer: core runtime (the runner's front door). Knows the plugin host, the provider interface and `LiveRun`;
knows nothing of any concrete provider or of rendering. Nothing is spawned unless the provider exists, its
options validate, it declares every capability the spec needs, and its CLI probe passes: each check raises its
`HarnessError` instead. After that, everything ends in the `done` event's result.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from harness_core._provider import CliInfo, Provider, ProviderOptions
from harness_core._run.approvals import Approver
from harness_core._run.context import write_wire_header
from harness_core._run.live import LiveRun
from harness_core._run.logs import RunLogs
from harness_core._run.pipe import EventCallback
from harness_core._run.started import capabilities_of, redacted_spec
from harness_core._run.tool_policy import check_attachments, check_tool_filters
from harness_core._run.tooling import checked_tools, new_tool_server, served, tool_transport
from harness_core.capabilities import Capability, missing_capabilities
from harness_core.errors import HarnessError, ProviderCrashedError, SpawnFailedError, UnsupportedFeatureError
from harness_core.events import HarnessResult
from harness_core.mcp import server_secrets
from harness_core.plugins import PluginHost, RegisteredProvider, get_host
from harness_core.redaction import RunSecrets
from harness_core.spec import ATTACHMENT_CAPABILITIES, TRANSPORT_CAPABILITIES, AgentRunSpec, SessionSpec
from harness_core.store import new_run_id, validate_run_id
from harness_core.tools.tool import Tool

__all__ = ["Approver", "EventCallback", "LiveRun", "ProbedProvider", "open_run", "prepare", "preflight", "probe",
           "played", "run", "run_sync", "unwrap_caller_exception"]

_CAPABILITY_WHY = {
    Capability.SESSION: "the spec resumes a session",
    Capability.APPROVALS: "the spec's approval policy asks before acting",
    Capability.STRUCTURED_OUTPUT: "the spec has an output_schema (--output-schema)",
    Capability.EFFORT: "the spec sets a reasoning effort (--effort)",
    Capability.MAX_TURNS: "the spec sets max_turns (--max-turns)",
    Capability.COST: "max_cost_usd needs the run's cost, which this provider does not report",
}
_PROBE_DEADLINE = 30.0
_TRANSPORT_OF = {cap: transport for transport, cap in TRANSPORT_CAPABILITIES.items()}
_KIND_OF = {cap: kind for kind, cap in ATTACHMENT_CAPABILITIES.items()}


@dataclass(frozen=True)
class ProbedProvider:
    """A provider ready to play runs: found, its options validated, the spec's capabilities checked, its CLI
    probed. `open_run` makes one per run; a session makes one and plays each of its turns with it."""

    registered: RegisteredProvider
    instance: Provider[Any]
    options: ProviderOptions
    cli: CliInfo

    @property
    def name(self) -> str:
        return self.registered.name


def preflight(
    spec: AgentRunSpec | SessionSpec, provider: str | None, host: PluginHost
) -> tuple[RegisteredProvider, Provider[Any], ProviderOptions]:
    """Resolve the provider, validate its options and check capabilities; spawns nothing.

    Raises:
        ProviderNotFoundError: no provider by that name.
        UnsupportedFeatureError: the spec needs a capability the provider does not declare.
        InvalidSpecError: `provider_options` do not validate.
    """
    registered = host.get(provider)
    instance = registered.cls()
    check_capabilities(spec, registered.name, registered.cls.info.capabilities, host)
    check_tools(spec, registered.name, registered.cls.info.capabilities, host)
    options = instance.parse_options(spec.provider_options)
    return registered, instance, options


def check_tools(spec: AgentRunSpec | SessionSpec, name: str, capabilities: frozenset[Capability],
                host: PluginHost) -> None:
    """Refuse `spec` when a tool filter cannot be honoured or an attachment cannot be sent (`tool_policy`).

    Raises:
        UnsupportedFeatureError: a filter neither native nor enforceable, naming the providers that take it.
        InvalidSpecError: an attachment missing, unreadable, too big, or bytes a provider cannot take.
    """
    info = host.get(name).cls.info
    others = [host.get(other).cls.info for other in host.names()]
    check_tool_filters(spec, name, info, capabilities, others)
    check_attachments(spec, capabilities)


def check_capabilities(spec: AgentRunSpec | SessionSpec, name: str, declared: frozenset[Capability],
                       host: PluginHost, *, learned: bool = False) -> None:
    """Refuse `spec` when it needs a capability `declared` lacks (`learned`: the agent itself said so).

    Raises:
        UnsupportedFeatureError: naming the first missing capability, why the spec needs it and who has it.
    """
    missing = missing_capabilities(spec.needed_capabilities(), declared)
    if missing:
        cap = missing[0]
        why = _CAPABILITY_WHY.get(cap, "the operation requires it")
        if cap in spec.requires:
            why = "the run requires it (--require / `requires`)"
        elif cap is Capability.APPROVALS:
            why = f"approval policy {spec.approval.value!r} needs it"
        elif cap in _TRANSPORT_OF:
            names = [s.name for s in spec.mcp_servers if s.transport == _TRANSPORT_OF[cap]]
            why = f"MCP server {', '.join(repr(n) for n in names)} is {_TRANSPORT_OF[cap]}"
        elif cap in _KIND_OF:
            names = [a.name for a in spec.attachments if a.kind == _KIND_OF[cap]]
            why = (f"attachment {', '.join(repr(n) for n in names)} ({_KIND_OF[cap]}) cannot go in the prompt as "
                   "its path: strict_attachments is on")
        others = host.providers_with(cap)
        if learned:  # the provider may have it with another agent: it is this agent that lacks it
            why += "; this agent does not offer it (it said so when the provider probed it)"
            others = [p for p in others if p != name]
        raise UnsupportedFeatureError(name, cap.value, others, why)


async def probe(instance: Provider[Any], options: ProviderOptions, name: str) -> CliInfo:
    """The provider's probe, under a deadline; anything but a `HarnessError` is the provider's bug.

    Raises:
        CliNotFoundError, CliVersionUnsupportedError: what the provider's probe raised.
        SpawnFailedError: the probe took more than 30 s.
        ProviderCrashedError: the probe raised something else.
    """
    try:
        with anyio.fail_after(_PROBE_DEADLINE):
            return await instance.probe(options)
    except HarnessError:
        raise
    except TimeoutError:
        raise SpawnFailedError(
            f"provider {name!r} took more than {_PROBE_DEADLINE:g} s to check its CLI; run its `--version` by hand "
            "to see why (a first run may be installing something)", provider=name) from None
    except Exception as exc:
        raise ProviderCrashedError(
            f"provider {name!r} failed while checking its CLI: {type(exc).__name__}: {exc}. This is a bug in the "
            "provider; `harness doctor` shows the details", provider=name) from exc


async def prepare(spec: AgentRunSpec | SessionSpec, provider: str | None, host: PluginHost) -> ProbedProvider:
    """`preflight`, then `probe`: the provider ready to play `spec` (raises as both do)."""
    registered, instance, options = preflight(spec, provider, host)
    cli = await probe(instance, options, registered.name)
    if cli.capabilities is not None:
        check_capabilities(spec, registered.name, cli.capabilities, host, learned=True)
        check_tools(spec, registered.name, cli.capabilities, host)
    return ProbedProvider(registered, instance, options, cli)


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
    transport = tool_transport(probed.name, capabilities_of(probed), host.providers_with) if given_tools else None
    tool_server = new_tool_server(given_tools)
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
            write_wire_header(logs, run_id=rid, provider=registered.name, cli=probed.cli,
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
