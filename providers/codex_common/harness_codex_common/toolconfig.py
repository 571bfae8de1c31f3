"""A run's MCP servers and MCP tool filters as codex 0.169.0's `mcp_servers` config table takes them.

Layer: provider (pure), shared by codex-appserver and codex-exec. `inline`: secrets in the table (app-server: over
stdin); else (exec: `-c` is on the command line) codex forwards private variables of its environment, a shell
giving a server's `env` their real names (`_env_shim`). Knows nothing of processes or events.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from harness_core import AgentRunSpec, InvalidSpecError, McpServer, SessionSpec

__all__ = ["HARNESS_TOOL_TIMEOUT_SEC", "TOOL_ALLOW_LISTS", "TOOL_FILTERS", "McpConfig", "mcp_config",
           "mcp_result_text"]

TOOL_FILTERS = frozenset({"mcp", "mcp:*"})
"""The neutral tool names codex filters itself in `disallowed_tools`: MCP servers (left out) and their tools
(`disabled_tools`). The kinds (shell, edit, ...) are not codex config: Harness enforces them through approvals
where the provider asks (codex-appserver), else they are refused before spawn."""
TOOL_ALLOW_LISTS = False
"""Codex cannot turn off its own tools (shell, apply_patch, web search), so an allow-list ("only these") would
leave them on: `allowed_tools` is refused before spawn (`ProviderInfo.tool_allow_lists`)."""


@dataclass(frozen=True)
class McpConfig:
    """The `mcp_servers` table and the variables the child's environment must hold for it."""

    servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)

    def config(self) -> dict[str, Any]:
        """The config overrides (`{"mcp_servers": {...}}`, or nothing). The private variables codex forwards to
        the servers (`env`) are also kept out of the agent's own commands (`shell_environment_policy.exclude`):
        codex's default policy drops only names like *KEY*, *SECRET*, *TOKEN*, so `env` in a shell step would show
        the rest. Only those names: the agent's `PATH` stays codex's even when a server has its own."""
        if not self.servers:
            return {}
        if not self.env:
            return {"mcp_servers": self.servers}
        return {"mcp_servers": self.servers, "shell_environment_policy": {"exclude": sorted(self.env)}}


def _tools(server: McpServer, names: frozenset[str]) -> list[str]:
    prefix = f"mcp:{server.name}."
    return sorted(name[len(prefix):] for name in names if name.startswith(prefix))


_SHELL = "/bin/sh"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _env_shim(refs: dict[str, str], command: str | None, args: list[str]) -> list[str]:
    """`/bin/sh`'s arguments that start `command args` with each of its variables under its real name, read from
    the private name codex forwards (`refs`: real → private): a server's `PATH` or `OPENAI_API_KEY` never
    replaces codex's own. The values stay in the environment, the script holds names only; the command is looked
    up on the server's own `PATH` when it has one, as `env PATH=... CMD` would."""
    for key in refs:
        if not _ENV_NAME.fullmatch(key):
            raise InvalidSpecError(f"MCP server variable {key!r} is not a shell variable name (letters, digits, "
                                   "`_`, not starting with a digit); codex-exec starts the server through a shell")
    exports = "".join(f'export {key}="${private}"; ' for key, private in refs.items())
    return ["-c", exports + 'exec "$@"', "sh", str(command), *args]


def _entry(server: McpServer, index: int, spec: AgentRunSpec | SessionSpec, env: dict[str, str] | None,
           ) -> dict[str, Any]:
    entry: dict[str, Any]
    if server.transport == "stdio":
        entry = {"command": server.command, "args": list(server.args)}
        if server.cwd is not None:
            entry["cwd"] = str(server.cwd)
        if env is None:
            if server.env:
                entry["env"] = dict(server.env)
            return _filtered(entry, server, spec)
        if server.env:
            refs = {key: f"HARNESS_MCP_{index}_ENV_{n}" for n, key in enumerate(server.env)}
            env.update({refs[key]: value for key, value in server.env.items()})
            entry["command"], entry["args"] = _SHELL, _env_shim(refs, entry["command"], entry["args"])
            entry["env_vars"] = sorted(refs.values())
    elif server.transport == "http":
        entry = {"url": server.url}
        if server.headers and env is None:
            entry["http_headers"] = dict(server.headers)
        elif server.headers and env is not None:
            refs = {header: f"HARNESS_MCP_{index}_HEADER_{n}" for n, header in enumerate(server.headers)}
            env.update({refs[header]: value for header, value in server.headers.items()})
            entry["env_http_headers"] = refs
    else:
        raise InvalidSpecError(f"codex takes MCP servers over stdio and streamable HTTP, not {server.transport} "
                               f"({server.name}); give its streamable HTTP url, or run it through a stdio bridge")
    return _filtered(entry, server, spec)


_PYTHON_TOOLS = "harness"  # the MCP server Harness serves a run's Python tools as (docs/python-tools.md)
HARNESS_TOOL_TIMEOUT_SEC = 86400.0
"""codex's `tool_timeout_sec` for the `harness` server (its own default: 60 s). Harness ends each call of a Python
tool at the tool's own timeout, and an approval it waits for lasts until a person answers or the run is
interrupted: codex's clock must never be the shorter one, or codex reports a timeout while the call goes on."""


def _filtered(entry: dict[str, Any], server: McpServer, spec: AgentRunSpec | SessionSpec) -> dict[str, Any]:
    if server.name == _PYTHON_TOOLS:
        entry["tool_timeout_sec"] = HARNESS_TOOL_TIMEOUT_SEC
    entry["required"] = True  # codex waits for it before the first model request, and fails the run if it cannot start
    entry["default_tools_approval_mode"] = "approve"  # asks nobody: codex would refuse every call under approval
    # `never`, and under another policy ask through `mcpServer/elicitation/request`, which Harness does not answer
    # yet (codex-exec takes `never` only). A Python tool that needs approval asks through Harness itself.
    disabled = _tools(server, spec.disallowed_tools)
    if disabled:
        entry["disabled_tools"] = disabled
    return entry


def _kept(server: McpServer, spec: AgentRunSpec | SessionSpec) -> bool:
    name = f"mcp:{server.name}"
    return "mcp" not in spec.disallowed_tools and name not in spec.disallowed_tools  # allowed_tools: refused


def mcp_config(spec: AgentRunSpec | SessionSpec, *, inline: bool) -> McpConfig:
    """`spec.mcp_servers` as codex config, filtered by `disallowed_tools` (a server left out, or its tools named in
    `disabled_tools`); `allowed_tools` never gets here (refused before spawn: `TOOL_ALLOW_LISTS`).

    Raises:
        InvalidSpecError: an SSE server (codex has no SSE client), or (not `inline`) a server variable whose name
            a shell cannot export.
    """
    env: dict[str, str] = {}
    servers = {server.name: _entry(server, index, spec, None if inline else env)
               for index, server in enumerate(spec.mcp_servers) if _kept(server, spec)}
    return McpConfig(servers, env)


def mcp_result_text(content: Any) -> str | None:
    """An MCP tool result's content as the text the model reads: its text blocks joined (`Echo: hi`), else the
    blocks as JSON (an image, a resource), None when there is none."""
    if content is None:
        return None
    if isinstance(content, list):
        texts = [block.get("text") for block in content if isinstance(block, dict) and block.get("type") == "text"]
        if texts and len(texts) == len(content) and all(isinstance(t, str) for t in texts):
            return "\n".join(str(t) for t in texts)
    return json.dumps(content, ensure_ascii=False, default=str)
