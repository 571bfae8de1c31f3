"""An MCP server a run gives its agent (`McpServer`), and the provider-neutral tool names filters use.

Layer: core model (no I/O). Knows nothing of any provider or how its CLI takes a server; `env` and `headers`
values are secrets (the run's redaction hides them: `server_secrets`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

__all__ = ["HARNESS_SERVER", "TOOL_BRIDGE_ARGS", "TOOL_KINDS", "McpServer", "McpTransport", "check_server_name",
           "failed_server_next_step", "shown_url",
           "check_tool_name", "harness_server_is_ours", "only_harness_servers", "server_of", "server_secrets",
           "tool_name_matches"]

McpTransport = Literal["stdio", "http", "sse"]
HARNESS_SERVER = "harness"
"""The name of the server that serves the run's Python tools (`tools=`): reserved, no server a user gives may take it
(`check_server_name`)."""
TOOL_BRIDGE_ARGS = ("-m", "harness_core.tools.bridge")
"""The arguments of the stdio bridge Harness gives its agent for the `harness` server (after the Python to run)."""
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
TOOL_KINDS = ("shell", "read", "edit", "write", "search", "web", "agent", "mcp")
"""The provider-neutral tool names that are kinds of action (as `ToolKind` names them; `mcp` is every MCP tool).
An MCP server or one of its tools is `mcp:SERVER` / `mcp:SERVER.TOOL`."""
_MCP_NAME = re.compile(r"^mcp:([A-Za-z0-9_-]{1,64})(?:\.([^\s.][^\s]*))?$")


class McpServer(BaseModel):
    """A named MCP server: a program the agent starts (`stdio`: `command`, `args`, `env`, `cwd`) or one it reaches
    (`http`, streamable HTTP, or `sse`: `url`, `headers`). The transport follows the fields when not given
    (`command` → stdio, `url` → http); `sse` only when asked."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="The server's name, as the agent's tools are prefixed with it "
                      "(`[A-Za-z0-9_-]`, at most 64; `harness` is the Python tools' own).")
    transport: McpTransport = Field(default="stdio", description="`stdio`, `http` (streamable HTTP) or `sse`.")
    command: str | None = Field(default=None, description="The program to start (stdio).")
    args: tuple[str, ...] = Field(default=(), description="Its arguments (stdio).")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment for it (stdio); the values "
                                "are secrets (masked in every file Harness writes).")
    cwd: Path | None = Field(default=None, description="Its working directory (stdio); the agent's when unset.")
    url: str | None = Field(default=None, description="Where it listens (http, sse).")
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP headers to send it (http, sse); the "
                                    "values are secrets.")
    _harness_own: bool = PrivateAttr(default=False)
    """Set only on the entry Harness appends for its Python tools (`harness_own`); never serialized."""

    @classmethod
    def harness_own(cls, **fields: Any) -> McpServer:
        """The `harness` entry Harness gives its agent for the run's Python tools, marked as Harness's own (the one
        server a spec may have by that name; its filters are applied by Harness's tool server)."""
        server = cls(name=HARNESS_SERVER, **fields)
        server._harness_own = True
        return server

    @property
    def is_harness_own(self) -> bool:
        """Whether this is the entry Harness appended for its Python tools (`harness_own`)."""
        return self._harness_own

    @model_validator(mode="before")
    @classmethod
    def _transport_from_fields(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and data.get("transport") is None:
            data = {k: v for k, v in data.items() if k != "transport"}
            data["transport"] = "http" if data.get("url") is not None and data.get("command") is None else "stdio"
        return data

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(f"MCP server name {value!r} is not 1-64 letters, digits, `_` or `-`; rename it")
        return value

    @field_validator("cwd")
    @classmethod
    def _absolute_cwd(cls, value: Path | None) -> Path | None:
        return value.expanduser().absolute() if value is not None else None

    @model_validator(mode="after")
    def _fields_match_transport(self) -> McpServer:
        if self.command is not None and self.url is not None:
            raise ValueError(f"MCP server {self.name!r} has both a command and a url; give one (a command to start "
                             "it, stdio; or the url where it listens, http/sse)")
        if self.transport == "stdio":
            if not self.command:
                raise ValueError(f"MCP server {self.name!r} (stdio) needs a `command` to start it")
            if self.headers:
                raise ValueError(f"MCP server {self.name!r} is stdio: `headers` are for http/sse servers")
        else:
            if not self.url:
                raise ValueError(f"MCP server {self.name!r} ({self.transport}) needs a `url`")
            parts = urlsplit(self.url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"MCP server {self.name!r}: url {self.url!r} is not an http(s) URL")
            if self.args or self.env or self.cwd is not None:
                raise ValueError(f"MCP server {self.name!r} is {self.transport}: `args`, `env` and `cwd` are for "
                                 "stdio servers (a command)")
        return self


def shown_url(url: str) -> str:
    """`url` as a message may show it: a user and password in it, and its query, masked (`http://***@host/p?***`)."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    netloc = f"***@{host}" if "@" in parts.netloc else host
    return parts._replace(netloc=netloc, query="***" if parts.query else "", fragment="").geturl()


def failed_server_next_step(server: McpServer | None) -> str:
    """What to do about an MCP server of the run that the agent could not start or reach: run its command
    yourself, or (a server given by URL) check that it answers there."""
    if server is not None and server.url is not None:
        return (f"could not reach {shown_url(server.url)}: check that the server listens there and answers MCP "
                "(`--mcp-server NAME=URL`; its headers, if it needs credentials)")
    return "check that its command runs (`--mcp-server NAME=COMMAND`: run COMMAND yourself to see why)"


def server_secrets(servers: Iterable[McpServer]) -> list[str]:
    """The secret values of `servers`: every `env` and `headers` value (what the run's redaction hides)."""
    return [value for server in servers for value in (*server.env.values(), *server.headers.values())]


def check_tool_name(name: str) -> str:
    """`name` when it is a provider-neutral tool name (a kind, `mcp:SERVER` or `mcp:SERVER.TOOL`).

    Raises:
        ValueError: it is not, listing the valid ones.
    """
    if name in TOOL_KINDS or _MCP_NAME.match(name):
        return name
    raise ValueError(f"unknown tool name {name!r}: use one of {', '.join(TOOL_KINDS)}, mcp:SERVER or "
                     "mcp:SERVER.TOOL")


def server_of(name: str) -> str | None:
    """The server a tool name `mcp:SERVER` or `mcp:SERVER.TOOL` names, or None for any other name."""
    found = _MCP_NAME.match(name)
    return found.group(1) if found is not None else None


def check_server_name(server: McpServer) -> McpServer:
    """`server`, unless it takes the reserved name `harness` without being Harness's own entry.

    Raises:
        ValueError: it does, saying to rename it.
    """
    if server.name == HARNESS_SERVER and not server.is_harness_own:
        raise ValueError(f"the MCP server name {HARNESS_SERVER!r} is reserved for Harness's own Python tools "
                         "(tools=, --tools): rename your server (e.g. my-harness)")
    return server


def harness_server_is_ours(servers: Iterable[McpServer]) -> bool:
    """Whether `mcp:harness` names Harness's own tool server among `servers`: none is named `harness` (Harness
    serves its Python tools under that name, if any), or the one that is, is the entry Harness appended (marked:
    `McpServer.harness_own`). Harness applies that server's filters itself."""
    return all(server.is_harness_own for server in servers if server.name == HARNESS_SERVER)


def only_harness_servers(servers: Iterable[McpServer]) -> bool:
    """Whether every server of `servers` is Harness's own (none given counts): then `mcp` filters only that one,
    which Harness applies itself."""
    return all(server.is_harness_own for server in servers)


def tool_name_matches(name: str, kind: str, server: str | None = None, tool: str | None = None) -> bool:
    """Whether the neutral tool name `name` covers an action of `kind` (an MCP tool `tool` of `server` when the
    kind is `mcp`)."""
    if name == kind:
        return True
    found = _MCP_NAME.match(name)
    if found is None or kind != "mcp" or server is None:
        return False
    return found.group(1) == server and (found.group(2) is None or found.group(2) == tool)
