"""A provider made ready to play: found, options validated, capabilities checked, CLI probed (`ProbedProvider`).

Layer: core runtime, below the run API and everything that plays. Knows the plugin host and the provider
interface; spawns nothing but the provider's probe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio

from harness_core._provider_interface import CliInfo, Provider, ProviderOptions
from harness_core._run.tool_policy import check_attachments, check_tool_filters
from harness_core.capabilities import Capability, missing_capabilities
from harness_core.errors import HarnessError, ProviderCrashedError, SpawnFailedError, UnsupportedFeatureError
from harness_core.plugins import PluginHost, RegisteredProvider
from harness_core.spec import ATTACHMENT_CAPABILITIES, TRANSPORT_CAPABILITIES, AgentRunSpec, SessionSpec

__all__ = ["ProbedProvider", "check_capabilities", "check_tools", "preflight", "prepare", "probe"]

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
    check_attachments(spec, name, info, capabilities, others)


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
            why = (f"attachment {', '.join(repr(n) for n in names)} ({_KIND_OF[cap]}) would go in the prompt as its "
                   "path, and strict_attachments is on")
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
