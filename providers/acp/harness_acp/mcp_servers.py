"""The spec's MCP servers as ACP `session/new` takes them, and the transports an agent's `initialize` offers.

Layer: provider configuration (pure: no I/O but resolving a command on PATH). Knows ACP's `McpServer` shapes
(stdio `{name, command, args, env:[{name, value}]}` always; `{type: "http"|"sse", name, url, headers:[...]}` only
where `agentCapabilities.mcpCapabilities` says so) and `promptCapabilities`; knows no wire traffic.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping
from typing import Any

from harness_core import McpServer, UnsupportedFeatureError
from harness_core.provider import Capability

__all__ = ["learned_input_capabilities", "session_servers"]

_CWD_SHIM = 'cd "$0" && exec "$@"'
"""ACP's stdio server has no working directory: a server with `cwd` is started through `sh`, which enters it."""


def learned_input_capabilities(agent_capabilities: Mapping[str, Any]) -> frozenset[Capability]:
    """The MCP transports and attachment kinds an agent takes, from its `initialize` answer's
    `agentCapabilities`: stdio always; http / sse per `mcpCapabilities`; images per `promptCapabilities.image`.
    Not files: an embedded `resource` (`embeddedContext`) reaches the model as the agent chooses (Gemini CLI puts
    a text one in the prompt's text), so a file attachment goes by its path in the prompt."""
    caps = {Capability.MCP_STDIO}
    mcp = agent_capabilities.get("mcpCapabilities")
    if isinstance(mcp, dict):
        if mcp.get("http") is True:
            caps.add(Capability.MCP_HTTP)
        if mcp.get("sse") is True:
            caps.add(Capability.MCP_SSE)
    prompt = agent_capabilities.get("promptCapabilities")
    if isinstance(prompt, dict) and prompt.get("image") is True:
        caps.add(Capability.IMAGE_INPUT)
    return frozenset(caps)


def _command(server: McpServer, path: str | None) -> list[str]:
    """The server's command line with an absolute executable (ACP asks for one), entering `cwd` when it has one."""
    assert server.command is not None
    command = server.command
    if os.sep not in command:
        command = shutil.which(command, path=path) or command
    elif not os.path.isabs(command):
        command = os.path.abspath(os.path.join(str(server.cwd), command) if server.cwd else command)
    if server.cwd is None:
        return [command, *server.args]
    return [shutil.which("sh") or "/bin/sh", "-c", _CWD_SHIM, str(server.cwd), command, *server.args]


def session_servers(servers: Iterable[McpServer], agent_capabilities: Mapping[str, Any], *, agent: str,
                    path: str | None = None) -> list[dict[str, Any]]:
    """`session/new`'s `mcpServers` for `servers` (`path`: the PATH a bare command is looked up on).

    Raises:
        UnsupportedFeatureError: an http or sse server the agent's `initialize` did not offer (the runner refuses it
            before spawn from the provider's capabilities; this catches an agent that changed).
    """
    offered = learned_input_capabilities(agent_capabilities)
    wire: list[dict[str, Any]] = []
    for server in servers:
        if server.transport == "stdio":
            command, *args = _command(server, path)
            wire.append({"name": server.name, "command": command, "args": args,
                         "env": [{"name": k, "value": v} for k, v in server.env.items()]})
            continue
        needed = Capability.MCP_HTTP if server.transport == "http" else Capability.MCP_SSE
        if needed not in offered:
            raise UnsupportedFeatureError(agent, f"MCP server {server.name!r} over {server.transport}", [],
                                          f"{agent}'s initialize answer does not offer mcpCapabilities."
                                          f"{server.transport}; give it the server over stdio")
        wire.append({"type": server.transport, "name": server.name, "url": server.url,
                     "headers": [{"name": k, "value": v} for k, v in server.headers.items()]})
    return wire
