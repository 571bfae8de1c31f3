"""codex's `mcp_servers` table from a run's servers: the `harness` server (a run's Python tools) gets a
`tool_timeout_sec` no call or approval wait of Harness's can outlast, another server keeps codex's own; a stdio
server's variables never take codex's own names."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from harness_core import AgentRunSpec, InvalidSpecError, McpServer

from harness_codex_common.toolconfig import HARNESS_TOOL_TIMEOUT_SEC, mcp_config


def test_the_harness_server_waits_as_long_as_harness_does_and_another_keeps_codexs_default(tmp_path: Path) -> None:
    spec = AgentRunSpec(prompt="x", cwd=tmp_path, mcp_servers=[
        McpServer.harness_own(command="python", args=("-m", "bridge")),
        McpServer(name="docs", url="http://127.0.0.1:9/mcp")])
    for inline in (True, False):
        servers = mcp_config(spec, inline=inline).servers
        assert servers["harness"]["tool_timeout_sec"] == HARNESS_TOOL_TIMEOUT_SEC >= 24 * 3600
        assert "tool_timeout_sec" not in servers["docs"]


def test_a_servers_variables_travel_under_private_names_and_a_shell_gives_them_their_own(tmp_path: Path) -> None:
    """Forwarded from codex's environment (`env_vars`), a server's `PATH` or `OPENAI_API_KEY` under its own name
    would replace codex's, and `shell_environment_policy.exclude` would take it from the agent's shell: each value
    goes under a private name, a shell gives it its real name in the server only, and only private names are
    excluded. The shell is run here for real, with values a careless script would break on."""
    odd = "it's \"$HOME\" `id` \\ ; x"
    server = McpServer(name="srv", command="printenv", args=("PATH", "OPENAI_API_KEY", "ODD"),
                       env={"PATH": "/opt/srv/bin:/usr/bin:/bin", "OPENAI_API_KEY": "sk-for-the-server", "ODD": odd})
    config = mcp_config(AgentRunSpec(prompt="x", cwd=tmp_path, mcp_servers=[server]), inline=False)
    assert set(config.env) == {"HARNESS_MCP_0_ENV_0", "HARNESS_MCP_0_ENV_1", "HARNESS_MCP_0_ENV_2"}
    entry = config.servers["srv"]
    assert entry["env_vars"] == sorted(config.env) and "env" not in entry
    assert config.config()["shell_environment_policy"] == {"exclude": sorted(config.env)}
    assert entry["command"] == "/bin/sh" and odd not in " ".join(entry["args"])
    out = subprocess.run([entry["command"], *entry["args"]], env={"PATH": "/nowhere", **config.env},
                         capture_output=True, text=True, timeout=10)
    assert out.stdout.splitlines() == ["/opt/srv/bin:/usr/bin:/bin", "sk-for-the-server", odd], out.stderr


def test_a_variable_name_no_shell_can_export_is_refused(tmp_path: Path) -> None:
    server = McpServer(name="srv", command="srv", env={"MY-VAR": "x"})
    with pytest.raises(InvalidSpecError, match="MY-VAR"):
        mcp_config(AgentRunSpec(prompt="x", cwd=tmp_path, mcp_servers=[server]), inline=False)
    assert mcp_config(AgentRunSpec(prompt="x", cwd=tmp_path, mcp_servers=[server]), inline=True).servers["srv"][
        "env"] == {"MY-VAR": "x"}  # the app-server takes the table inline: codex sets it as given


def test_the_app_server_takes_a_servers_variables_inline_never_in_codexs_environment(tmp_path: Path) -> None:
    server = McpServer(name="srv", command="srv", env={"PATH": "/opt/srv/bin", "OPENAI_API_KEY": "sk-server"})
    config = mcp_config(AgentRunSpec(prompt="x", cwd=tmp_path, mcp_servers=[server]), inline=True)
    assert config.env == {} and config.servers["srv"]["env"] == dict(server.env)
    assert config.servers["srv"]["command"] == "srv" and "shell_environment_policy" not in config.config()
