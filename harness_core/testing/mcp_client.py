"""A minimal MCP client for the in-process scripted provider: call one tool of one `McpServer` of the spec, as an
agent would (the official `mcp` SDK's client, over stdio or streamable HTTP), and give back its text.

Layer: testing. Knows the `McpServer` model and the `mcp` client; nothing of runs or of providers.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from harness_core import McpServer

__all__ = ["McpCallFailed", "call_mcp_tool"]

_DEADLINE = 30.0
"""Seconds to reach the server and list its tools."""


class McpCallFailed(Exception):
    """The server could not be reached, or has no such tool (what an agent would report as a failed call)."""


async def call_mcp_tool(server: McpServer, tool: str, arguments: Mapping[str, Any], *,
                        cwd: str | None = None) -> tuple[str, bool]:
    """Call `tool` of `server` with `arguments`: its text and whether it is a tool error. Cancellable: an
    interrupt of the run cancels the call (the session closes, and a stdio server is shut down, bounded).

    Raises:
        McpCallFailed: the server did not answer within 30 s, or lists no tool `tool`.
    """
    failed: str | None = None  # raised once the session is closed: inside, its task group would wrap it
    async with _session(server, cwd) as session:
        try:
            with anyio.fail_after(_DEADLINE):
                await session.initialize()
                listed = await session.list_tools()
        except TimeoutError:
            failed = f"MCP server {server.name!r} did not answer within {_DEADLINE:g} s"
        else:
            names = [t.name for t in listed.tools]
            if tool in names:
                result = await session.call_tool(tool, dict(arguments))
                text = "".join(getattr(block, "text", "") for block in result.content)
                return text, bool(result.is_error)
            failed = f"MCP server {server.name!r} has no tool {tool!r} (it has: {', '.join(names) or 'none'})"
    raise McpCallFailed(failed)


@asynccontextmanager
async def _session(server: McpServer, cwd: str | None) -> AsyncIterator[ClientSession]:
    if server.transport == "stdio":
        assert server.command is not None
        params = StdioServerParameters(command=server.command, args=list(server.args),
                                       env={**os.environ, **server.env},
                                       cwd=str(server.cwd) if server.cwd is not None else cwd)
        # the server's stderr: this process's own (the SDK's default is bound to sys.stderr when it is imported,
        # which in a test's CliRunner is a stream without a file descriptor)
        errlog = sys.__stderr__ if sys.__stderr__ is not None else sys.stderr
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            yield session
        return
    if server.transport != "http" or server.url is None:
        raise McpCallFailed(f"MCP server {server.name!r} is {server.transport}: this client speaks stdio and "
                            "streamable HTTP")
    async with httpx2.AsyncClient(headers=server.headers, timeout=httpx2.Timeout(_DEADLINE, read=None)) as client, \
            streamable_http_client(server.url, http_client=client) as (read, write, *_), \
            ClientSession(read, write) as session:
        yield session
