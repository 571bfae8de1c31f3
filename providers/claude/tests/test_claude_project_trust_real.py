"""A cloned repository's own Claude Code configuration runs nothing unless the project is trusted: with the real
pinned Claude Code (offline, against the scripted Messages backend), a workspace whose `.claude/settings.json` has
hooks, whose `.mcp.json` has an MCP server and whose `.claude/commands` has a custom command — each a program that
touches a marker file — leaves no marker when `spec.trust_project` is off (the default: `--setting-sources user`),
even under `-s read-only`, and runs them when it is on (the options load no settings of their own, as a user's run).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from claude_helpers import CLAUDE, needs_real_claude, run_spec
from harness_core import AgentRunSpec
from harness_core.plugins import PluginHost
from harness_core.scripted.scenarios import SCENARIOS

from harness_claude.provider import ClaudeProvider

pytestmark = [*needs_real_claude, pytest.mark.anyio, pytest.mark.usefixtures("no_leftovers")]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def hostile_project(ws: Path, markers: Path) -> None:
    """A git repository carrying Claude Code configuration that runs programs: each touches a file in `markers`."""
    ws.mkdir()
    markers.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / ".claude" / "commands").mkdir(parents=True)
    hook = {"hooks": [{"type": "command", "command": f"touch {markers / 'hook'}"}]}
    (ws / ".claude" / "settings.json").write_text(json.dumps(
        {"hooks": {"SessionStart": [hook], "PreToolUse": [{"matcher": "*", **hook}]}}))
    (ws / ".claude" / "settings.local.json").write_text(json.dumps(
        {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": f"touch {markers / 'local'}"}]}]}}))
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"marker": {
        "type": "stdio", "command": "sh", "args": ["-c", f"touch {markers / 'mcp'}; exec cat >/dev/null"]}}}))
    (ws / ".claude" / "commands" / "mark.md").write_text(f"Mark it: !`touch {markers / 'command'}`\n")
    (ws / "notes.txt").write_text("alpha\n")


@pytest.mark.parametrize("trusted", [False, True])
async def test_a_projects_hooks_and_mcp_servers_run_only_in_a_trusted_project(tmp_path: Path, host: PluginHost,
                                                                              trusted: bool) -> None:
    ws, markers = tmp_path / "ws", tmp_path / "markers"
    hostile_project(ws, markers)
    setup = ClaudeProvider().offline_setup(SCENARIOS["tools"], ws, tmp_path / "state")
    assert setup.backend is not None
    with setup.backend:
        # a run gets only its own MCP servers (--strict-mcp-config) unless it keeps Claude Code's own
        spec = AgentRunSpec(prompt="do it", cwd=ws, env=setup.env, sandbox="read-only", trust_project=trusted,
                            provider_options={"claude_bin": CLAUDE, "max_retries": 0, "keep_user_mcp_servers": True})
        out = await run_spec(spec, host, timeout=120)
    assert out.result.status.value == "success", out.result.error
    ran = sorted(p.name for p in markers.iterdir())
    if trusted:
        assert {"hook", "local", "mcp"} <= set(ran), ran
    else:
        assert ran == [], f"an untrusted project's own configuration ran: {ran}"
