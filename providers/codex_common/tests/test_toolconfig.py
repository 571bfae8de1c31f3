"""codex's `mcp_servers` table from a run's servers: the `harness` server (a run's Python tools) gets a
`tool_timeout_sec` no call or approval wait of Harness's can outlast; another server keeps codex's own."""

from __future__ import annotations

from pathlib import Path

from harness_core import AgentRunSpec, McpServer

from harness_codex_common.toolconfig import HARNESS_TOOL_TIMEOUT_SEC, mcp_config


def test_the_harness_server_waits_as_long_as_harness_does_and_another_keeps_codexs_default(tmp_path: Path) -> None:
    spec = AgentRunSpec(prompt="x", cwd=tmp_path, mcp_servers=[
        McpServer.harness_own(command="python", args=("-m", "bridge")),
        McpServer(name="docs", url="http://127.0.0.1:9/mcp")])
    for inline in (True, False):
        servers = mcp_config(spec, inline=inline).servers
        assert servers["harness"]["tool_timeout_sec"] == HARNESS_TOOL_TIMEOUT_SEC >= 24 * 3600
        assert "tool_timeout_sec" not in servers["docs"]
