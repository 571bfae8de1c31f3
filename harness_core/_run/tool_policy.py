"""What a run's tools need before spawn and while it plays: filters native, enforced (approvals; the `harness`
server's by that server) or refused; attachments sent, degraded or refused; the approvals Harness answers itself.

Layer: core runtime (pure: a function of the spec, the provider's declaration and the installed providers). Knows
the spec, capabilities and approval events; knows no provider's CLI, nor how a provider passes what it takes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from harness_core.attachment import Attachment, check_attachment, media_type_matches
from harness_core.capabilities import Capability, ProviderInfo
from harness_core.errors import InvalidSpecError, UnsupportedFeatureError
from harness_core.events import ApprovalDecision, ApprovalRequested, Notice, ToolKind
from harness_core.mcp import HARNESS_SERVER, harness_server_is_ours, only_harness_servers, server_of, tool_name_matches
from harness_core.spec import ATTACHMENT_CAPABILITIES, AgentRunSpec, ApprovalPolicy, SessionSpec

__all__ = ["SELF_ASKING", "SESSION_NOTICES", "ToolPolicy", "check_attachments", "check_tool_filters", "native_allow",
           "native_attachment", "native_filter", "tool_forbidden", "tool_policy"]


def native_filter(name: str, info: ProviderInfo) -> bool:
    """Whether the provider's CLI filters tool name `name` itself (`ProviderInfo.tool_filters`; `mcp:*` covers
    every `mcp:SERVER` and `mcp:SERVER.TOOL`)."""
    return name in info.tool_filters or (name.startswith("mcp:") and "mcp:*" in info.tool_filters)


def tool_forbidden(spec: AgentRunSpec | SessionSpec, tool: str, server: str = HARNESS_SERVER) -> str | None:
    """Why the run's filters forbid MCP tool `tool` of `server` (by default its Python tool, `mcp:harness.TOOL` to
    them), or None: a `disallowed_tools` name covering it (`mcp`, `mcp:SERVER`, `mcp:SERVER.TOOL`), or an
    `allowed_tools` naming none of those ("only these")."""
    for name in sorted(spec.disallowed_tools):
        if tool_name_matches(name, "mcp", server, tool):
            return f"disallowed_tools {name!r}"
    allowed = spec.allowed_tools
    if allowed is not None and not any(tool_name_matches(name, "mcp", server, tool) for name in allowed):
        return "allowed_tools leaves it out"
    return None


def _ours(name: str, spec: AgentRunSpec | SessionSpec) -> bool:
    """Whether `name` filters Harness's own `harness` tool server, which applies it itself (`ToolServer`)."""
    return server_of(name) == HARNESS_SERVER and harness_server_is_ours(spec.mcp_servers)


def _ours_denied(name: str, spec: AgentRunSpec | SessionSpec) -> bool:
    """Whether `disallowed_tools` `name` filters only Harness's own server: `mcp:harness[.TOOL]`, or `mcp` when
    the spec has no other server (`mcp` in an allow-list still asks the CLI to turn off every other tool)."""
    return _ours(name, spec) or (name == "mcp" and only_harness_servers(spec.mcp_servers))


def _enforceable(name: str, info: ProviderInfo, capabilities: frozenset[Capability]) -> bool:
    return Capability.APPROVALS in capabilities and name in info.approval_kinds


def check_tool_filters(spec: AgentRunSpec | SessionSpec, provider: str, info: ProviderInfo,
                       capabilities: frozenset[Capability], others: Iterable[ProviderInfo]) -> frozenset[str]:
    """The filter names Harness enforces through approvals for this run (the rest are the CLI's own, or filter
    Harness's own `harness` server, which applies them itself on every provider).

    Raises:
        UnsupportedFeatureError: the filters the provider can neither take nor have enforced, every one in one
            message, naming the installed providers that take the run's filters whole.
    """
    problems = _filter_problems(spec, info, capabilities)
    if problems:
        takers = sorted(other.name for other in others if other.name != provider
                        and not _filter_problems(spec, other, other.capabilities))
        raise UnsupportedFeatureError(provider, " and ".join(feature for feature, _ in problems), takers,
                                      "; ".join(why for _, why in problems), have="take the run's filters",
                                      none="takes the run's filters")
    return frozenset(n for n in spec.disallowed_tools if not native_filter(n, info)
                     and not _ours_denied(n, spec) and _enforceable(n, info, capabilities))


def _filter_problems(spec: AgentRunSpec | SessionSpec, info: ProviderInfo,
                     capabilities: frozenset[Capability]) -> list[tuple[str, str]]:
    """What of the spec's filters `info`'s provider refuses, as (feature, why) pairs: the deny-list's names it can
    neither take nor enforce; the allow-list refused whole (the CLI takes none), or its names the CLI cannot take."""
    denied = [name for name in sorted(spec.disallowed_tools) if not native_filter(name, info)
              and not _ours_denied(name, spec) and not _enforceable(name, info, capabilities)]
    problems = [(f"disallowed_tools {_names(denied)}",
                 f"neither its CLI nor its approvals filter {'it' if len(denied) == 1 else 'them'}")] if denied else []
    allowed = _allow_problem(spec, info)
    return problems + ([allowed] if allowed else [])


def _allow_problem(spec: AgentRunSpec | SessionSpec, info: ProviderInfo) -> tuple[str, str] | None:
    if spec.allowed_tools is None:
        return None
    if not info.tool_allow_lists:
        return ("an allow-list (allowed_tools)", f"{info.name} takes no allow-list, whatever it names (its CLI cannot "
                "turn off every tool one leaves out); name what to forbid in disallowed_tools instead")
    # the CLI allows Harness's own server whole; Harness serves only the tools the list names
    refused = [name for name in sorted(spec.allowed_tools)
               if not native_allow(f"mcp:{HARNESS_SERVER}" if _ours(name, spec) else name, info)]
    if not refused:
        return None
    by_server = [name for name in refused if native_filter(name, info)]  # mcp:SERVER.TOOL on a by-server CLI
    servers = ", ".join(dict.fromkeys(f"mcp:{server_of(name)}" for name in by_server))
    why = "; ".join(part for part in (
        f"its CLI allows MCP tools by server only; allow the server ({servers}) and name its tools to leave out in "
        "disallowed_tools" if by_server else "",
        f"its CLI does not filter by {_names([n for n in refused if n not in by_server])}; use disallowed_tools"
        if len(by_server) < len(refused) else "") if part)
    return f"allowed_tools {_names(refused)}", why


def _names(names: Sequence[str]) -> str:
    return ", ".join(repr(name) for name in names)


def native_allow(name: str, info: ProviderInfo) -> bool:
    """Whether the provider's CLI honours tool name `name` in an allow-list, turning off every tool not named
    (`ProviderInfo.tool_allow_lists`; a single MCP tool `mcp:SERVER.TOOL` only with `tool_allow_mcp_tools`)."""
    one_tool = server_of(name) is not None and "." in name
    return info.tool_allow_lists and native_filter(name, info) and (info.tool_allow_mcp_tools or not one_tool)


@dataclass(frozen=True)
class ToolPolicy:
    """What the runner does for a run's tools: the spec the provider plays, the notices to show, and the filters
    it enforces through approvals."""

    played: AgentRunSpec
    notices: tuple[Notice, ...] = ()
    enforced: frozenset[str] = frozenset()
    auto_approve: bool = False
    """The user's policy is `never`, raised to `untrusted` so the agent asks: every other request is approved."""
    degraded: tuple[Attachment, ...] = field(default=())
    asks_itself: frozenset[str] = frozenset()
    """The run's Python tools with `requires_approval`: the agent's own question before calling one is approved
    (the `harness` server then asks, showing the checked arguments: one question per call)."""

    def denial(self, request: ApprovalRequested) -> str | None:
        """Why Harness denies `request` itself (a kind an enforced filter forbids), or None."""
        kind = request.display.kind.value if isinstance(request.display.kind, ToolKind) else str(request.display.kind)
        for name in sorted(self.enforced):
            if tool_name_matches(name, kind):
                return f"`{name}` is in disallowed_tools (enforced by Harness: the agent's CLI cannot filter it)"
        return None

    def decide(self, request: ApprovalRequested) -> tuple[ApprovalDecision, str] | None:
        """The runner's own decision of `request`, or None when the operation decides it."""
        why = self.denial(request)
        if why is not None:
            return ApprovalDecision.DENY, why
        if _harness_tool(request) in self.asks_itself:  # never Harness's own request: the broker asks that one
            return ApprovalDecision.APPROVE, SELF_ASKING
        if self.auto_approve:
            return ApprovalDecision.APPROVE, "approval policy never (Harness asks only to enforce disallowed_tools)"
        return None


SELF_ASKING = "the tool asks for approval itself when called, showing its checked arguments"
"""The reason the runner approves an agent's question about a Python tool with `requires_approval`."""


def _harness_tool(request: ApprovalRequested) -> str | None:
    """The Python tool an agent's request is about (an MCP action whose display's `raw` names the server `harness`
    and the tool, as every provider's does), or None."""
    raw = request.display.raw or {}
    tool = raw.get("tool")
    ours = request.display.kind is ToolKind.MCP and raw.get("server") == HARNESS_SERVER
    return tool if ours and isinstance(tool, str) else None


SESSION_NOTICES = frozenset({"tools_unserved"})
"""The codes of the notices about what a session keeps for all its turns (its Python tools): a session says them
on its first turn only."""


def tool_policy(spec: AgentRunSpec, info: ProviderInfo, capabilities: frozenset[Capability],
                tools: Sequence[str] = (), asking: Iterable[str] = ()) -> ToolPolicy:
    """How `spec` is played on a provider with `capabilities`: attachments it cannot take named in the prompt by
    their path (a notice each), the approval policy raised to `untrusted` when Harness enforces a filter under
    `never`, and the filters of Harness's own `harness` server left to it (a name the CLI cannot take dropped, an
    allow-list's `mcp:harness.TOOL` given to the CLI as the whole server); a warning when every Python tool given
    (`tools`, their names) is forbidden; the agent's questions about the tools that ask themselves (`asking`)
    approved. Assumes `check_tool_filters` and `check_attachments` passed."""
    enforced = frozenset(n for n in spec.disallowed_tools if not native_filter(n, info)
                         and not _ours_denied(n, spec) and _enforceable(n, info, capabilities))
    kept: list[Attachment] = []
    degraded: list[Attachment] = []
    for attachment in spec.attachments:
        (kept if native_attachment(attachment, info, capabilities) else degraded).append(attachment)
    update: dict[str, object] = {}
    notices: list[Notice] = []
    if degraded:
        named = "\n".join(f"- {a.path} ({a.mime_type})" for a in degraded)
        update["prompt"] = f"{spec.prompt}\n\nAttached files (read them from disk):\n{named}"
        update["attachments"] = tuple(kept)
        notices += [Notice(level="warning", code="attachment_degraded",
                           message=f"{info.name} cannot take the {a.kind} {a.name} ({a.mime_type}) natively: its path "
                                   "is in the prompt instead (--strict-attachments refuses the run instead)",
                           details={"path": str(a.path), "mime_type": a.mime_type}) for a in degraded]
    if harness_server_is_ours(spec.mcp_servers):
        update |= _harness_filters_played(spec, info)
    unserved = {tool: tool_forbidden(spec, tool) for tool in tools}
    if tools and all(unserved.values()):
        whys = ", ".join(dict.fromkeys(why for why in unserved.values() if why))
        notices.append(Notice(level="warning", code="tools_unserved",
                              message=f"every Python tool given (tools=, --tools: {', '.join(tools)}) is forbidden by "
                                      f"this run's tool filters ({whys}), so Harness serves no `{HARNESS_SERVER}` MCP "
                                      "server: drop the filter or the tools",
                              details={"tools": list(tools)}))
    auto = bool(enforced) and spec.approval is ApprovalPolicy.NEVER
    if auto:
        update["approval"] = ApprovalPolicy.UNTRUSTED
    played = spec.model_copy(update=update) if update else spec
    asks_itself = frozenset(asking) if harness_server_is_ours(spec.mcp_servers) else frozenset()
    return ToolPolicy(played, tuple(notices), enforced, auto, tuple(degraded), asks_itself)


def _harness_filters_played(spec: AgentRunSpec, info: ProviderInfo) -> dict[str, object]:
    """The filter fields the CLI is given when the `harness` server is Harness's own: its `disallowed_tools` names
    the CLI cannot take left out (the server applies them), an allow-list's `mcp:harness.TOOL` widened to
    `mcp:harness` (a CLI allows MCP tools by server; the server serves only the named ones)."""
    update: dict[str, object] = {}
    dropped = {name for name in spec.disallowed_tools if not native_filter(name, info)
               and (server_of(name) == HARNESS_SERVER or _ours_denied(name, spec))}
    if dropped:
        update["disallowed_tools"] = spec.disallowed_tools - dropped
    if spec.allowed_tools is not None:
        whole = frozenset(f"mcp:{HARNESS_SERVER}" if server_of(name) == HARNESS_SERVER else name
                          for name in spec.allowed_tools)
        if whole != spec.allowed_tools:
            update["allowed_tools"] = whole
    return update


def native_attachment(attachment: Attachment, info: ProviderInfo, capabilities: frozenset[Capability]) -> bool:
    """Whether the provider sends `attachment` to the model itself: it has its kind's capability (`image_input`,
    `file_input`), takes its media type (`ProviderInfo.attachment_types`) and, for bytes, `attachment_data`."""
    return (ATTACHMENT_CAPABILITIES[attachment.kind] in capabilities
            and media_type_matches(attachment.mime_type, info.attachment_types)
            and (attachment.path is not None or info.attachment_data))


def check_attachments(spec: AgentRunSpec | SessionSpec, provider: str, info: ProviderInfo,
                      capabilities: frozenset[Capability], others: Iterable[ProviderInfo]) -> None:
    """Refuse before spawn an attachment that cannot be sent: missing, unreadable, too big; given as bytes to a
    provider that cannot take them natively (it has no path to put in the prompt); or, with `strict_attachments`,
    one the provider would degrade (its type, or its kind: `check_capabilities` refuses that first).

    Raises:
        InvalidSpecError: a file that cannot be read, or bytes that cannot be sent, saying which and what to do.
        UnsupportedFeatureError: strict, and the provider does not take its type, naming the providers that do.
    """
    for attachment in spec.attachments:
        problem = check_attachment(attachment)
        if problem is not None:
            raise InvalidSpecError(f"{problem}. Nothing was started.")
        if native_attachment(attachment, info, capabilities):
            continue
        takers = sorted(other.name for other in others
                        if other.name != provider and native_attachment(attachment, other, other.capabilities))
        if attachment.path is None:
            can = f"; providers that take it as bytes: {', '.join(takers)}" if takers else ""
            raise InvalidSpecError(f"attachment {attachment.name!r} is given as bytes, and {provider} cannot take "
                                   f"this {attachment.kind} ({attachment.mime_type}) natively as bytes: save it to a "
                                   f"file and attach the path (its path goes in the prompt if need be){can}. Nothing "
                                   "was started.")
        if spec.strict_attachments:
            raise UnsupportedFeatureError(provider, f"{attachment.kind} attachments of type {attachment.mime_type}",
                                          takers, f"attachment {attachment.name!r} would go in the prompt as its "
                                          "path, and strict_attachments is on")
