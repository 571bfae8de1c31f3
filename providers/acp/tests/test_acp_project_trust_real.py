"""A cloned repository's own agent configuration runs nothing unless the project is trusted: each real pinned ACP
agent (offline, against its scripted backend) in a git repository whose configuration starts an MCP server, runs a
hook or a tool-discovery command — each a program touching a marker file — leaves no marker when `spec.trust_project`
is off (the default), even under `-s read-only`, and runs them when it is on, as the agent would by itself. codex-acp
loads a project's `.codex/config.toml` only where the user's own Codex config trusts the project, so neither run
loads it. An untrusted Gemini CLI or Qwen Code still plays `danger-full-access` with approval `never` (their `yolo`
mode is refused in an untrusted folder: their asking mode instead, every request allowed by the policy)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from harness_core import AgentRunSpec, RunStatus, open_run
from harness_core.offline import offline_spec
from harness_core.plugins import PluginHost

from harness_acp.profiles import PROFILES

pytestmark = [pytest.mark.real_cli, pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _server(markers: Path, name: str) -> dict[str, object]:
    return {"command": "sh", "args": ["-c", f"touch {markers / name}"]}


def _gemini(ws: Path, markers: Path) -> None:
    (ws / ".gemini").mkdir()
    (ws / ".gemini" / "settings.json").write_text(json.dumps({
        "mcpServers": {"marker": _server(markers, "mcp")},
        "tools": {"discoveryCommand": f"sh -c 'touch {markers / 'discovery'}; echo []'"}}))


def _qwen(ws: Path, markers: Path) -> None:
    (ws / ".qwen").mkdir()
    hook = {"hooks": [{"type": "command", "command": f"touch {markers / 'hook'}"}]}
    (ws / ".qwen" / "settings.json").write_text(json.dumps({
        "mcpServers": {"marker": _server(markers, "mcp")}, "hooks": {"SessionStart": [hook]}}))


def _claude(ws: Path, markers: Path) -> None:
    (ws / ".claude").mkdir()
    hook = {"hooks": [{"type": "command", "command": f"touch {markers / 'hook'}"}]}
    (ws / ".claude" / "settings.json").write_text(json.dumps(
        {"hooks": {"SessionStart": [hook], "PreToolUse": [{"matcher": "*", **hook}]}}))
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"marker": {"type": "stdio", **_server(markers, "mcp")}}}))


def _codex(ws: Path, markers: Path) -> None:
    (ws / ".codex").mkdir()
    server = _server(markers, "mcp")
    (ws / ".codex" / "config.toml").write_text(
        f'[mcp_servers.marker]\ncommand = "sh"\nargs = {json.dumps(server["args"])}\n')


PROJECTS: dict[str, tuple[Callable[[Path, Path], None], set[str]]] = {
    "gemini": (_gemini, {"mcp", "discovery"}),
    "qwen": (_qwen, {"hook"}),
    "claude-acp": (_claude, {"hook", "mcp"}),
    "codex-acp": (_codex, set()),  # Codex's own trust decides: this project is not in the user's config
}
"""Per agent: how to write a hostile project, and the markers a trusted run leaves (what the agent runs by itself;
Qwen Code 0.24.4 starts a project's MCP server only after the turn's first tool call, so its hook is the proof)."""


def _cli(agent: str) -> str:
    """The real pinned agent: `$HARNESS_<CLI>_BIN`, else `$HARNESS_TOOLS_DIR/bin/<cli>` (as the contract finds it)."""
    cli = PROFILES[agent].cli
    tools = os.environ.get("HARNESS_TOOLS_DIR")
    path = os.environ.get(f"HARNESS_{cli.upper().replace('-', '_')}_BIN") or (
        str(Path(tools) / "bin" / cli) if tools else "")
    if not os.access(path, os.X_OK):
        pytest.skip(f"the real {cli} is not installed (scripts/install-clis.sh; HARNESS_TOOLS_DIR); with "
                    "HARNESS_REQUIRE_REAL_CLIS=1 this skip is a failure")
    return path


def _repository(ws: Path, markers: Path) -> None:
    """A git repository with the scripted scenario's file, and an empty folder for the markers."""
    ws.mkdir()
    markers.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "notes.txt").write_text("alpha\n")


@pytest.mark.parametrize("trusted", [False, True])
@pytest.mark.parametrize("agent", sorted(PROJECTS))
async def test_a_projects_own_agent_configuration_runs_only_in_a_trusted_project(
        tmp_path: Path, host: PluginHost, agent: str, trusted: bool) -> None:
    write, _ = PROJECTS[agent]  # what a trusted project would run: offline, nothing is
    ws, markers = tmp_path / "ws", tmp_path / "markers"
    _repository(ws, markers)
    write(ws, markers)
    cli = _cli(agent)
    spec = AgentRunSpec(prompt="do it", cwd=ws, sandbox="read-only", trust_project=trusted,
                        provider_options={f"{PROFILES[agent].cli}_bin": cli})
    with offline_spec(spec, agent, "tools", host=host) as played, anyio.fail_after(180):
        async with open_run(played, agent, host=host, run_log=False) as live:
            result = await live.wait()
    assert result.status is RunStatus.SUCCESS, result.error
    ran = {p.name for p in markers.iterdir()}
    # offline, even a trusted project's own configuration is not loaded (it could name another model API):
    # `offline_spec` plays every run untrusted, so both cases must run none of it
    assert played.trust_project is False
    assert not ran, f"the project's own configuration ran offline (trusted={trusted}): {sorted(ran)}"


@pytest.mark.parametrize("agent", ["gemini", "qwen"])
async def test_an_untrusted_project_still_plays_full_access_without_asking(tmp_path: Path, host: PluginHost,
                                                                           agent: str) -> None:
    spec = AgentRunSpec(prompt="do it", cwd=tmp_path, sandbox="danger-full-access", approval="never",
                        provider_options={f"{PROFILES[agent].cli}_bin": _cli(agent)})
    with offline_spec(spec, agent, "tools", host=host) as played, anyio.fail_after(180):
        (tmp_path / "notes.txt").write_text("alpha\n")
        async with open_run(played, agent, host=host, run_log=False) as live:
            result = await live.wait()
    assert result.status is RunStatus.SUCCESS, result.error
    assert (tmp_path / "new.txt").read_text() == "fresh\n"
    assert os.environ.get("GEMINI_CLI_TRUST_WORKSPACE") is None  # nothing leaked into this process
