"""A run's MCP servers, tool filters and attachments as Claude Code 2.1.328 takes them.

Layer: provider (pure). The `--mcp-config` JSON (secrets inline: a private file, `mcpfile`), `--strict-mcp-config`,
`--tools`/`--disallowedTools` names, and the user message's image and document blocks. Knows nothing of processes
or the stream-json protocol's flow.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

from harness_core import AgentRunSpec, Attachment, InvalidSpecError, McpServer, SessionSpec
from harness_core.provider import API_IMAGE_TYPES

__all__ = ["ATTACHMENT_TYPES", "KIND_TOOLS", "TOOL_FILTERS", "ToolConfig", "content_blocks", "tool_config"]

KIND_TOOLS: dict[str, tuple[str, ...]] = {
    "shell": ("Bash", "Monitor", "BashOutput", "KillShell"),
    "read": ("Read",),
    "edit": ("Edit", "MultiEdit", "NotebookEdit"),
    "write": ("Write",),
    "search": ("Grep", "Glob", "LS"),
    "web": ("WebFetch", "WebSearch"),
    "agent": ("Task", "Agent", "SendMessage", "ListAgents", "Workflow"),
}
"""Claude Code's built-in tools of each provider-neutral kind (`--tools` / `--disallowedTools` names)."""
TOOL_FILTERS = frozenset({*KIND_TOOLS, "mcp", "mcp:*"})
"""The neutral names Claude Code filters itself (`ProviderInfo.tool_filters`); an allow-list names MCP servers,
not single tools (`ProviderInfo.tool_allow_mcp_tools` off: the runner refuses one before spawn)."""
_HOUSEKEEPING = ("ToolSearch", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate")
"""Tools kept under an allow-list: they act on nothing outside Claude Code's own state."""
_DOCUMENT_TYPES = ("application/pdf",)
_PYTHON_TOOLS = "harness"  # the MCP server Harness serves a run's Python tools as (docs/python-tools.md)
ATTACHMENT_TYPES = frozenset({*API_IMAGE_TYPES, *_DOCUMENT_TYPES, "text/*", "application/json", "application/jsonl",
                              "application/yaml", "application/toml", "application/xml", "application/x-sh"})
"""What Claude takes natively (`ProviderInfo.attachment_types`): the API's image types as image blocks, a PDF as a
document, text as a plain-text document; the runner names any other file in the prompt by its path."""


@dataclass(frozen=True)
class ToolConfig:
    """What a run's tools add to Claude Code's command line."""

    argv: tuple[str, ...] = ()
    mcp_config: str | None = None
    """The `--mcp-config` JSON, the servers' secrets in it (None: no server): written to a private file."""
    tools: tuple[str, ...] | None = None
    """`--tools` from `allowed_tools` (None: no allow-list of built-in tools)."""
    disallowed: tuple[str, ...] = ()
    allowed: tuple[str, ...] = ()
    """`--allowedTools` rules allowed whatever the approval policy: Harness's own `harness` server (its tools ask
    through Harness themselves, `requires_approval`)."""
    servers: tuple[str, ...] = ()
    """`mcp__NAME` rules of the user's other servers: their tools follow the run's approval policy (allowed under
    `never`, asked about otherwise), as on the ACP agents."""


def _kept(server: McpServer, spec: AgentRunSpec | SessionSpec) -> bool:
    name = f"mcp:{server.name}"
    if "mcp" in spec.disallowed_tools or name in spec.disallowed_tools:
        return False
    allowed = spec.allowed_tools
    return allowed is None or "mcp" in allowed or name in allowed


def _server_json(server: McpServer) -> dict[str, Any]:
    if server.transport == "stdio":
        assert server.command is not None
        command, args = server.command, list(server.args)
        if server.cwd is not None:  # Claude Code's config has no cwd: a shell changes to it, then runs the server
            command, args = "/bin/sh", ["-c", 'cd "$1" && shift && exec "$@"', "sh", str(server.cwd), command, *args]
        entry: dict[str, Any] = {"type": "stdio", "command": command, "args": args}
        if server.env:
            entry["env"] = dict(server.env)
        return entry
    entry = {"type": server.transport, "url": server.url}
    if server.headers:
        entry["headers"] = dict(server.headers)
    return entry


def tool_config(spec: AgentRunSpec | SessionSpec, *, keep_user_servers: bool = False,
                read_only_tools: tuple[str, ...] | None = None) -> ToolConfig:
    """The flags and `--mcp-config` JSON for `spec.mcp_servers` and its filters. `read_only_tools` is the allow-list the
    sandbox already sets (`--tools`), which an `allowed_tools` list can only narrow.

    Raises:
        InvalidSpecError: an allow-list naming one tool of a server (Claude Code allows MCP tools by server).
    """
    servers = {server.name: _server_json(server) for server in spec.mcp_servers if _kept(server, spec)}
    config = json.dumps({"mcpServers": servers}, separators=(",", ":")) if servers else None
    argv: list[str] = []
    if not keep_user_servers:
        argv.append("--strict-mcp-config")
    disallowed: list[str] = []
    for name in sorted(spec.disallowed_tools):
        if name.startswith("mcp:"):
            disallowed.append("mcp__" + name[4:].replace(".", "__", 1))
        elif name != "mcp":
            disallowed += KIND_TOOLS.get(name, ())
    tools: tuple[str, ...] | None = None
    if spec.allowed_tools is not None:
        for name in sorted(spec.allowed_tools):
            if name.startswith("mcp:") and "." in name:
                raise InvalidSpecError(
                    f"claude allows MCP tools by server: allowed_tools {name!r} names one tool; allow the server "
                    f"(mcp:{name[4:].split('.', 1)[0]}) and list its other tools in disallowed_tools")
        wanted = [tool for kind in sorted(spec.allowed_tools) for tool in KIND_TOOLS.get(kind, ())]
        listed = tuple(dict.fromkeys([*wanted, *_HOUSEKEEPING]))
        tools = tuple(t for t in listed if t in read_only_tools) if read_only_tools is not None else listed
    ours = tuple(f"mcp__{name}" for name in servers if name == _PYTHON_TOOLS)
    theirs = tuple(f"mcp__{name}" for name in servers if name != _PYTHON_TOOLS)
    return ToolConfig(tuple(argv), config, tools, tuple(dict.fromkeys(disallowed)), ours, theirs)


def _data(attachment: Attachment) -> bytes:
    return attachment.read()  # bounded: a file that grew past the limit since the check is refused


def content_blocks(text: str, attachments: tuple[Attachment, ...]) -> str | list[dict[str, Any]]:
    """A user message's content: `text` alone, or image/document blocks followed by the text (images as base64;
    a PDF as a base64 document; a text file as a plain-text document).

    Raises:
        InvalidSpecError: a file that is neither a PDF nor UTF-8 text (Claude takes no other documents).
    """
    if not attachments:
        return text
    blocks: list[dict[str, Any]] = []
    for attachment in attachments:
        data = _data(attachment)
        if attachment.kind == "image":
            source = {"type": "base64", "media_type": attachment.mime_type, "data": base64.b64encode(data).decode()}
            blocks.append({"type": "image", "source": source})
        elif attachment.mime_type in _DOCUMENT_TYPES:
            source = {"type": "base64", "media_type": attachment.mime_type, "data": base64.b64encode(data).decode()}
            blocks.append({"type": "document", "source": source, "title": attachment.name})
        else:
            try:
                body = data.decode("utf-8")
            except UnicodeDecodeError:
                raise InvalidSpecError(
                    f"claude takes PDF and text files; {attachment.name} ({attachment.mime_type}) is neither: convert "
                    "it, or leave it in the workspace and name its path in the prompt") from None
            source = {"type": "text", "media_type": "text/plain", "data": body}
            blocks.append({"type": "document", "source": source, "title": attachment.name})
    blocks.append({"type": "text", "text": text})
    return blocks
