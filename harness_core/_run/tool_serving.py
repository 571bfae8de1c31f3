"""A run's Python tools, served: the `harness` MCP server entry the provider sees, by the transport its agent
takes, and the tool server started and stopped with the run (or the session).

Layer: core runtime. Knows the tool server, the spec and capabilities; knows nothing of any concrete provider
(a provider only passes `spec.mcp_servers` on). The `mcp` SDK is imported only when a run has tools.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Literal, TypeVar

from harness_core._run.tool_policy import tool_forbidden
from harness_core.capabilities import Capability
from harness_core.errors import InvalidSpecError, UnsupportedFeatureError
from harness_core.mcp import McpServer, check_server_name
from harness_core.spec import AgentRunSpec, SessionSpec
from harness_core.tools.loader import unique_tools
from harness_core.tools.tool import Tool

if TYPE_CHECKING:
    from harness_core.tools.server import ToolServer

__all__ = ["check_tools_for", "checked_tools", "new_tool_server", "served", "served_tools", "tool_transport"]

SpecT = TypeVar("SpecT", AgentRunSpec, SessionSpec)
ToolTransport = Literal["stdio", "http"]


def checked_tools(tools: Iterable[Tool] | None, spec: AgentRunSpec | SessionSpec) -> tuple[Tool, ...]:
    """`tools` without repeats, checked against `spec` (raises before anything starts).

    Raises:
        InvalidSpecError: not tools, two tools with one name, or the spec has its own server named `harness` (the
            spec's validation refuses one; this catches a `model_copy` that skipped it).
    """
    for server in spec.mcp_servers:
        try:
            check_server_name(server)
        except ValueError as exc:
            raise InvalidSpecError(f"{exc}. Nothing was started.") from None
    return unique_tools(tools or ())


def check_tools_for(provider: str, capabilities: frozenset[Capability], tools: Sequence[Tool],
                    providers_with: Callable[[Capability], list[str]]) -> None:
    """Raises `UnsupportedFeatureError` when `tools` are given and the agent (its `capabilities_of`) can reach no
    MCP server Harness serves (the checks a command makes before it starts a run elsewhere: a background worker)."""
    if tools:
        tool_transport(provider, capabilities, providers_with, on_asyncio=True)


def tool_transport(provider: str, capabilities: frozenset[Capability],
                   providers_with: Callable[[Capability], list[str]], *,
                   on_asyncio: bool | None = None) -> ToolTransport:
    """How the agent reaches the tools: the stdio bridge when it starts MCP programs, else loopback HTTP (on
    asyncio only; `on_asyncio` None: the running loop says).

    Raises:
        UnsupportedFeatureError: it takes neither, or only HTTP while the event loop is not asyncio's.
    """
    if Capability.MCP_STDIO in capabilities:
        return "stdio"
    why = "the run has Python tools (tools=, --tools), which Harness serves as the MCP server 'harness'"
    if Capability.MCP_HTTP in capabilities:
        if on_asyncio is None:
            on_asyncio = _on_asyncio()
        if not on_asyncio:
            raise UnsupportedFeatureError(provider, Capability.MCP_STDIO.value,
                                          providers_with(Capability.MCP_STDIO),
                                          why + "; this agent reaches it over HTTP, served on asyncio only "
                                          "(run on the asyncio backend)")
        return "http"
    others = sorted({*providers_with(Capability.MCP_STDIO), *providers_with(Capability.MCP_HTTP)})
    raise UnsupportedFeatureError(provider, Capability.MCP_STDIO.value, others, why)


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def served_tools(tools: Sequence[Tool], spec: AgentRunSpec | SessionSpec) -> tuple[Tool, ...]:
    """The tools of `tools` that `spec`'s filters leave to the agent (`mcp:harness[.TOOL]`, `mcp`, an allow-list)."""
    return tuple(t for t in tools if tool_forbidden(spec, t.name) is None)


def new_tool_server(tools: Sequence[Tool], spec: AgentRunSpec | SessionSpec, *,
                    object_results: bool = False) -> ToolServer | None:
    """A tool server for `tools` (None without tools), serving only those `spec`'s filters leave; its secret is
    known at once, for the run's redaction. `object_results`: the provider's `mcp_object_results`."""
    if not tools:
        return None
    from harness_core.tools.server import ToolServer  # here: the mcp SDK only for runs with tools

    forbidden = {t.name: why for t in tools if (why := tool_forbidden(spec, t.name)) is not None}
    return ToolServer(tools, object_results=object_results, forbidden=forbidden)


@asynccontextmanager
async def served(server: ToolServer | None, spec: SpecT, transport: ToolTransport | None) -> AsyncIterator[SpecT]:
    """Serve `server` while the block runs, giving `spec` with the `harness` server appended (`spec` itself
    without a server, or when the filters leave it no tool: then nothing is served). Leaving the block cancels
    running calls and stops the server (bounded)."""
    if server is None or transport is None or not server.served:
        yield spec
        return
    async with server.serving(http=transport == "http"):
        if transport == "http":
            entry = McpServer.harness_own(url=server.url, headers=server.headers)
        else:
            command, args, env = server.bridge_command()
            entry = McpServer.harness_own(command=command, args=tuple(args), env=env)
        yield spec.model_copy(update={"mcp_servers": (*spec.mcp_servers, entry)})
