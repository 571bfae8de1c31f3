"""How a scripted backend plays an MCP tool call and reports attachments, whatever the model API.

Layer: offline (pure functions: no I/O). Knows tool names as agents prefix them and base64 payloads; knows no
model API's request shape (each backend reads its own) and no agent.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from harness_core.errors import SCRIPTED_REFUSAL
from harness_core.scripted.scenarios import CallMcpTool

__all__ = ["McpCall", "attachment_lines", "base64_size", "data_url_type", "find_mcp_tool", "texts_in"]

_SEPARATORS = "_.:/-"


@dataclass(frozen=True)
class McpCall:
    """A `CallMcpTool` step found in a request's tool list: `name` is the tool as the agent listed it."""

    name: str
    arguments: Mapping[str, Any]
    step: CallMcpTool
    search: bool = False
    """A call of the agent's own tool search that loads the tool (the step plays after it), not the tool."""


def find_mcp_tool(names: Iterable[str], server: str, tool: str, *, left_out: str | None = None) -> str:
    """The one name in `names` that is tool `tool` of MCP server `server`, however the agent spells it: the server
    (after `mcp`, maybe) before the tool with separators (`mcp__harness__add`, `harness__add`, `mcp_harness_add`,
    `harness.add`), or the bare tool name (`add`) when no name carries the server.

    Raises:
        LookupError: no such name, or more than one (listing them, and the tools the request has); `left_out`, why
            the run's tool filter leaves the tool out, replaces the advice to give the agent the tool.
    """
    offered = list(dict.fromkeys(names))
    prefixed: list[str] = []
    bare: list[str] = []
    for name in offered:
        if name == tool:
            bare.append(name)
        elif name.endswith(tool) and len(name) > len(tool) and name[-len(tool) - 1] in _SEPARATORS:
            head = name[: -len(tool)].rstrip(_SEPARATORS)
            if head.endswith(server) and head[: -len(server)].strip(_SEPARATORS).lower() in ("", "mcp"):
                prefixed.append(name)
    found = prefixed or bare
    if len(found) == 1:
        return found[0]
    if found:
        raise LookupError(f"MCP tool {tool!r} of server {server!r} is ambiguous in the request's tools: "
                          f"{', '.join(found)}; rename the server or the tool so that one name matches")
    listed = ", ".join(offered) if offered else "none"
    if left_out is not None:
        raise LookupError(f"{SCRIPTED_REFUSAL}the request offers no MCP tool {tool!r} of server {server!r}: the run's "
                          f"tool filter leaves it out ({left_out}), and the scenario calls it; drop it from the "
                          f"filter or play another scenario; the request's tools: {listed}")
    given = (f"`--tools` with a module that has a @tool named {tool!r}" if server == "harness"
             else f"`--mcp-server {server}=COMMAND`")
    raise LookupError(f"{SCRIPTED_REFUSAL}the request offers no MCP tool {tool!r} of server {server!r}; give the "
                      f"agent the tool with {given}; if given, the agent did not list it (the server did not start, "
                      f"or it defers MCP tools); the request's tools: {listed}")


def attachment_lines(found: Iterable[tuple[str, int]]) -> str:
    """What `ReportAttachments` says: `image/png 1234 bytes`, one line per attachment, or `no attachments`."""
    lines = [f"{mime} {size} bytes" for mime, size in found]
    return "\n".join(lines) if lines else "no attachments"


def base64_size(data: str) -> int:
    """The number of bytes a base64 text (or a `data:` URL holding one) decodes to (-1 when it is not base64)."""
    if data.startswith("data:"):
        data = data.partition(",")[2]
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return -1


def data_url_type(url: str, default: str = "application/octet-stream") -> str:
    """The media type of a `data:TYPE;base64,...` URL (`default` when it names none)."""
    if url.startswith("data:"):
        mime = url[5:].partition(",")[0].partition(";")[0]
        return mime or default
    return default


def texts_in(value: Any) -> str:
    """The text a tool result carries: the string itself, or its `text` / `output` strings joined by newlines
    (a list of content blocks, an object holding them)."""
    if isinstance(value, str):
        return value
    parts: list[str] = []
    _collect(value, parts)
    return "\n".join(parts)


def _collect(value: Any, parts: list[str]) -> None:
    if isinstance(value, list):
        for item in value:
            if isinstance(item, str):
                parts.append(item)
            else:
                _collect(item, parts)
    elif isinstance(value, Mapping):
        for key in ("text", "output", "content", "result", "llmContent"):
            item = value.get(key)
            if isinstance(item, str):
                parts.append(item)
                return
            if isinstance(item, (list, Mapping)):
                _collect(item, parts)
                return
