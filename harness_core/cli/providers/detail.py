"""`harness providers NAME`: one provider in full, what `harness providers` lists plus its aliases and every option
of its `Options` model, as `-o` spells them (`settings.provider_options`).

Layer: CLI, loaded when the command runs; knows the plugin host, the provider interface and the reports
(`providers.report`); no concrete provider.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from typing import Any

from harness_core.capabilities import Capability, ProviderInfo
from harness_core.cli.providers.report import PROBE_DEADLINE, ProviderReport, probe_outcome, provider_entry
from harness_core.cli.settings.provider_options import OptionInfo, describe_options, jsonable
from harness_core.mcp import HARNESS_SERVER, TOOL_KINDS
from harness_core.offline import can_run_offline
from harness_core.plugins import PluginHost
from harness_core.spec import ATTACHMENT_CAPABILITIES

__all__ = ["ProviderDetail", "format_provider_detail", "provider_detail"]


@dataclass(frozen=True)
class ProviderDetail:
    """`harness providers NAME`: the provider's report (probed), whether it runs offline, and its options."""

    report: ProviderReport
    offline: bool
    options: tuple[OptionInfo, ...]
    tool_filters: tuple[str, ...] = ()
    """The tool names its CLI filters natively (`ProviderInfo.tool_filters`)."""
    approval_kinds: tuple[str, ...] = ()
    """The actions its agent always asks approval for (`ProviderInfo.approval_kinds`)."""
    allow_lists: bool = True
    """Its CLI honours `tool_filters` in an allow-list too (`ProviderInfo.tool_allow_lists`)."""
    allow_mcp_tools: bool = True
    """Its allow-list can name one MCP tool (`ProviderInfo.tool_allow_mcp_tools`)."""
    attachment_types: tuple[str, ...] = ("*/*",)
    """The media types it sends natively (`ProviderInfo.attachment_types`)."""
    attachment_data: bool = True
    """It takes attachments given as bytes (`ProviderInfo.attachment_data`)."""

    @property
    def enforced(self) -> tuple[str, ...]:
        """The kinds Harness enforces in a deny-list through approvals (not native, the agent asks for them)."""
        if Capability.APPROVALS.value not in self.report.capabilities:
            return ()
        return tuple(k for k in self.approval_kinds if k not in self.tool_filters)

    @property
    def refused_kinds(self) -> tuple[str, ...]:
        """The kinds (`shell`, ..., `mcp`) refused before spawn even in a deny-list."""
        return tuple(sorted(k for k in TOOL_KINDS if k not in self.tool_filters and k not in self.enforced))

    @property
    def attachment_kinds(self) -> tuple[str, ...]:
        """The kinds of attachment it sends natively (`image`, `file`)."""
        return tuple(k for k, cap in ATTACHMENT_CAPABILITIES.items() if cap.value in self.report.capabilities)

    @property
    def python_tools(self) -> bool:
        """Python tools reach its agent: it takes an MCP server Harness can serve them as."""
        return bool({Capability.MCP_STDIO.value, Capability.MCP_HTTP.value} & set(self.report.capabilities))

    def as_json(self) -> dict[str, Any]:
        return {**self.report.as_json(), "offline": self.offline, "options": [o.as_json() for o in self.options],
                "tool_filters": list(self.tool_filters), "approval_kinds": list(self.approval_kinds),
                "tool_filters_enforced": list(self.enforced), "tool_kinds_refused": list(self.refused_kinds),
                "tool_allow_lists": self.allow_lists, "tool_allow_mcp_tools": self.allow_mcp_tools,
                "python_tools": self.python_tools, "attachment_kinds": list(self.attachment_kinds),
                "attachment_types": list(self.attachment_types), "attachment_data": self.attachment_data}


async def provider_detail(host: PluginHost, name: str, deadline: float = PROBE_DEADLINE,
                          default: str | None = None) -> ProviderDetail:
    """Provider `name` (or an alias of one) probed under `deadline`, with its options (`default`: the default
    provider's name, None for the host's).

    Raises:
        ProviderNotFoundError: no provider by that name (the message suggests the closest and lists them all).
    """

    registered = host.get(name)
    report = provider_entry(host, registered, await probe_outcome(registered, deadline), default)
    info: ProviderInfo = registered.cls.info
    return ProviderDetail(report, can_run_offline(registered.cls), tuple(describe_options(registered.cls.Options)),
                          tuple(sorted(info.tool_filters)), tuple(sorted(info.approval_kinds)),
                          info.tool_allow_lists, info.tool_allow_mcp_tools, tuple(sorted(info.attachment_types)),
                          info.attachment_data)


def _default_text(option: OptionInfo) -> str:
    if option.required:
        return "required"
    value = jsonable(option.default)
    if value is None:
        return "none"
    if value in ({}, []):
        return "empty"
    return value if isinstance(value, str) and value else json.dumps(value)


def format_provider_detail(detail: ProviderDetail, width: int | None = None) -> str:
    """The page of one provider, its lines broken between words to fit `width` (a terminal's; None: 100)."""
    width = width or _PAGE_WIDTH

    def wrapped(text: str, indent: str, first: str | None = None) -> list[str]:
        return textwrap.wrap(text, width, initial_indent=indent if first is None else first, subsequent_indent=indent,
                             break_long_words=False, break_on_hyphens=False)

    p = detail.report
    marks = [m for m in ("default" if p.default else "", "also: " + ", ".join(p.aliases) if p.aliases else "") if m]
    lines = [f"{p.name} {p.version}" + (f" ({'; '.join(marks)})" if marks else "")]
    if p.description:
        lines += wrapped(p.description, "  ")
    lines.append(f"  distribution: {p.distribution or '(not installed as a distribution)'}")
    if p.probe.available:
        cli = " ".join(x for x in (p.cli_name, p.probe.cli_version) if x)
        where = f" at {p.probe.cli_path}" if p.probe.cli_path else ""
        lines.append("  available: yes" + (f" ({cli}{where})" if cli or where else ""))
    else:
        lines += wrapped(f"available: no: {p.probe.reason}", "    ", "  ")
    if p.cli_name:
        lines.append(f"  cli: {p.cli_name} (minimum {p.min_cli_version or 'none'})")
    lines += wrapped(f"capabilities: {', '.join(p.capabilities) or 'none'}", "    ", "  ")
    for line in _tool_lines(detail):
        lines += wrapped(line, "    ", "  ")
    lines += wrapped("offline: " + (f"yes (harness run --offline -p {p.name}; `harness scenarios` lists what it "
                                    "plays)" if detail.offline else "no"), "    ", "  ")
    if not detail.options:
        lines += ["", "Options: none"]
        return "\n".join(lines)
    lines += ["", "Options (-o KEY=VALUE, repeatable):"]
    for option in detail.options:
        lines.append(f"  {option.name}: {option.type} (default: {_default_text(option)})")
        if option.description:
            lines += wrapped(option.description, "      ")
    return "\n".join(lines)


def _tool_lines(detail: ProviderDetail) -> list[str]:
    """What it does with a run's tools: the filters native, enforced and refused, Python tools, attachments."""
    parts = [f"{', '.join(detail.tool_filters) or 'none'} native"]
    if detail.enforced:
        parts.append(f"{', '.join(detail.enforced)} enforced through approvals")
    if detail.refused_kinds:
        parts.append(f"{', '.join(detail.refused_kinds)} refused")
    if not detail.allow_lists:
        parts.append("allow-lists refused")
    elif not detail.allow_mcp_tools:
        parts.append("an allow-list names MCP servers, not single tools (mcp:SERVER.TOOL refused)")
    served = (f"served as the MCP server `{HARNESS_SERVER}`, as on every provider; its filters (mcp:{HARNESS_SERVER}, "
              f"mcp:{HARNESS_SERVER}.TOOL, and mcp when no other server is given) are applied by Harness on every "
              "provider" if detail.python_tools
              else "refused: it takes no MCP server")
    kinds = " and ".join(f"{k}s" for k in detail.attachment_kinds)
    bytes_too = "" if detail.attachment_data else "; by path only, bytes refused"
    if not kinds:
        attached = "none natively: each goes in the prompt as its path (--strict-attachments refuses the run)"
    elif "*/*" in detail.attachment_types:
        attached = f"{kinds} natively, of any type{bytes_too}"
    else:
        attached = (f"{kinds} natively ({', '.join(detail.attachment_types)}{bytes_too}); others go in the prompt as "
                    "their path (--strict-attachments refuses the run instead)")
    return [f"tool filters: {'; '.join(parts)} (docs/tools.md)", f"Python tools (--tools): {served}",
            f"attachments: {attached}"]


_PAGE_WIDTH = 100
"""The width of the page off a terminal (a pipe, a file)."""
