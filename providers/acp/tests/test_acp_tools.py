"""Tools on the ACP providers, on the fake agent: MCP servers in `session/new` (a Python tool really called through
Harness's `harness` server), transports and images learned from `initialize` and refused or degraded before the
run starts, the named agents' declared transports, Gemini CLI's trusted-folder rule, and MCP calls shown as `mcp`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from harness_core import (
    AgentRunSpec,
    Attachment,
    McpServer,
    Notice,
    RunStatus,
    ToolResult,
    ToolUse,
    UnsupportedFeatureError,
    open_run,
    run,
    tool,
)
from harness_core.cli.providers.detail import format_provider_detail, provider_detail
from harness_core.plugins import PluginHost

from harness_acp.display import mcp_tool
from harness_acp.generic import learned_capabilities
from harness_acp.mcp_servers import session_servers
from harness_acp.testing import write_fake_agent

pytestmark = pytest.mark.anyio

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415408d763f8"
                    "cfc000000301010018dd8db00000000049454e44ae426082")


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _counting_agent(tmp_path: Path, *args: str) -> tuple[Path, Path]:
    """A fake agent that appends a line to a file each time it starts."""
    starts = tmp_path / "starts"
    agent = write_fake_agent(tmp_path / "bin", args=args)
    agent.write_text(agent.read_text().replace("exec ", f"echo started >> {starts}\nexec ", 1))
    return agent, starts


async def _play(spec: AgentRunSpec, provider: str, host: PluginHost, **kwargs: Any) -> tuple[Any, list[Any]]:
    events: list[Any] = []
    with anyio.fail_after(60):
        async with open_run(spec, provider, host=host, run_log=False, **kwargs) as live:
            async for event in live:
                events.append(event)
            result = await live.wait()
    return result, events


def test_the_generic_provider_learns_transports_and_images_from_initialize() -> None:
    learned = {c.value for c in learned_capabilities({"mcpCapabilities": {"http": True},
                                                      "promptCapabilities": {"image": True}})}
    assert {"mcp_stdio", "mcp_http", "image_input"} <= learned and "mcp_sse" not in learned
    assert {c.value for c in learned_capabilities({})} & {"mcp_http", "mcp_sse", "image_input"} == set()
    assert "mcp_stdio" in {c.value for c in learned_capabilities({})}  # every ACP agent takes stdio servers


def test_servers_go_to_session_new_as_acp_shapes(tmp_path: Path) -> None:
    exe = tmp_path / "srv"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    servers = [McpServer(name="local", command="srv", args=("--x",), env={"TOKEN": "s3"}),
               McpServer(name="there", command="srv", cwd=tmp_path),
               McpServer(name="docs", url="http://127.0.0.1:9/mcp", headers={"Authorization": "Bearer k"})]
    wire = session_servers(servers, {"mcpCapabilities": {"http": True}}, agent="a", path=str(tmp_path))
    assert wire[0] == {"name": "local", "command": str(exe), "args": ["--x"], "env": [{"name": "TOKEN", "value": "s3"}]}
    assert wire[1]["args"][-2:] == [str(tmp_path), str(exe)]  # entered through sh: ACP has no cwd
    assert wire[2] == {"type": "http", "name": "docs", "url": "http://127.0.0.1:9/mcp",
                       "headers": [{"name": "Authorization", "value": "Bearer k"}]}
    with pytest.raises(UnsupportedFeatureError, match=r"mcpCapabilities\.sse"):
        session_servers([McpServer(name="old", url="http://127.0.0.1:9/sse", transport="sse")],
                        {"mcpCapabilities": {"http": True}}, agent="a")


async def test_a_python_tool_is_called_through_the_agents_mcp_client(tmp_path: Path, host: PluginHost) -> None:
    """The fake agent starts the `harness` server's stdio bridge from `session/new` and calls `add` as an agent
    does: the function runs in this process, its result reaches the agent, and the call shows as `mcp`."""
    agent = write_fake_agent(tmp_path / "bin")
    spec = AgentRunSpec(prompt="SCENARIO:tools_mcp", cwd=tmp_path, provider_options={"command": str(agent)})
    result, events = await _play(spec, "acp", host, tools=[add])
    assert result.status is RunStatus.SUCCESS, result.error
    assert result.final_text == "The tool said 5."
    use = next(e for e in events if isinstance(e, ToolUse))
    done = next(e for e in events if isinstance(e, ToolResult))
    assert (use.name, use.input) == ("mcp__harness__add", {"a": 2, "b": 3})
    assert (done.display.kind.value, done.display.title, done.display.command, done.display.summary) == (
        "mcp", "add", "add(a=2, b=3)", "5")


@tool
def subtract(a: int, b: int) -> int:
    return a - b


async def test_a_disallowed_python_tool_is_not_served_to_an_agent_that_filters_no_mcp_tool(
        tmp_path: Path, host: PluginHost) -> None:
    """An ACP agent takes no MCP filter, yet `disallowed_tools mcp:harness.add` is honoured (not refused): the
    `harness` server Harness serves lists only `subtract`, and refuses the fake agent's call of `add` (it calls
    without listing), which the model reads as a tool error."""
    agent = write_fake_agent(tmp_path / "bin")
    spec = AgentRunSpec(prompt="SCENARIO:tools_mcp", cwd=tmp_path, provider_options={"command": str(agent)},
                        disallowed_tools={"mcp:harness.add"})
    result, events = await _play(spec, "acp", host, tools=[add, subtract])
    assert result.status is RunStatus.SUCCESS, result.error
    done = [e for e in events if isinstance(e, ToolResult)]
    refused = "add is forbidden by this run's tool filters (disallowed_tools 'mcp:harness.add'); it was not called"
    assert [(e.output, e.is_error) for e in done] == [(refused, True)]
    assert result.final_text == f"The tool said {refused}."


async def test_an_http_server_the_agent_does_not_offer_is_refused_before_the_run(tmp_path: Path,
                                                                                host: PluginHost) -> None:
    agent, starts = _counting_agent(tmp_path, "--no-mcp-http")
    spec = AgentRunSpec(prompt="hi", cwd=tmp_path, provider_options={"command": str(agent)},
                        mcp_servers=[McpServer(name="docs", url="http://127.0.0.1:9/mcp")])
    with pytest.raises(UnsupportedFeatureError, match="mcp_http"):
        async with open_run(spec, "acp", host=host, run_log=False):
            pass
    assert starts.read_text().count("started") == 1, "only the probe may start the agent"


async def test_an_image_reaches_the_agent_as_an_image_block(tmp_path: Path, host: PluginHost) -> None:
    agent = write_fake_agent(tmp_path / "bin")
    image = tmp_path / "dot.png"
    image.write_bytes(PNG)
    spec = AgentRunSpec(prompt="SCENARIO:attachments", cwd=tmp_path, provider_options={"command": str(agent)},
                        attachments=[Attachment.of(image)])
    result, _events = await _play(spec, "acp", host)
    assert result.final_text == f"image/png {len(PNG)} bytes"


async def test_an_agent_without_images_gets_the_path_and_a_notice(tmp_path: Path, host: PluginHost) -> None:
    agent = write_fake_agent(tmp_path / "bin", args=("--no-image",))
    image = tmp_path / "dot.png"
    image.write_bytes(PNG)
    spec = AgentRunSpec(prompt="SCENARIO:attachments", cwd=tmp_path, provider_options={"command": str(agent)},
                        attachments=[Attachment.of(image)])
    result, events = await _play(spec, "acp", host)
    assert result.final_text == "no attachments"
    assert any(isinstance(e, Notice) and e.code == "attachment_degraded" for e in events)
    with pytest.raises(UnsupportedFeatureError, match="image_input"):
        async with open_run(spec.model_copy(update={"strict_attachments": True}), "acp", host=host, run_log=False):
            pass


@pytest.mark.parametrize(("agent", "takes_sse"), [("codex-acp", False), ("gemini", True), ("qwen", True),
                                                  ("claude-acp", True)])
async def test_each_named_agent_declares_the_transports_its_initialize_offers(
        tmp_path: Path, host: PluginHost, agent: str, takes_sse: bool) -> None:
    """codex-acp 0.16.0 offers http MCP servers but not sse: an sse server is refused before anything starts,
    naming the agents that take it (no CLI is needed to refuse)."""
    info = host.get(agent).cls.info
    assert {"mcp_stdio", "mcp_http", "image_input"} <= {c.value for c in info.capabilities}
    assert ("mcp_sse" in {c.value for c in info.capabilities}) is takes_sse
    if takes_sse:
        return
    spec = AgentRunSpec(prompt="hi", cwd=tmp_path, mcp_servers=[
        McpServer(name="old", url="http://127.0.0.1:9/sse", transport="sse")])
    with pytest.raises(UnsupportedFeatureError, match="mcp_sse") as refused:
        async with open_run(spec, agent, host=host, run_log=False):
            pass
    assert "gemini" in str(refused.value)


@pytest.mark.parametrize(("name", "config"), [("gemini", ".gemini/settings.json"), ("qwen", ".qwen/settings.json"),
                                               ("qwen", ".env")])
async def test_gemini_with_servers_in_an_untrusted_project_with_its_own_config_is_refused(
        tmp_path: Path, host: PluginHost, name: str, config: str) -> None:
    """Gemini CLI and Qwen Code connect MCP servers only in a trusted folder: a project that is not trusted but has
    its own configuration (`.gemini/settings.json`, `.qwen/settings.json`, an `.env`), which trusting the folder
    would load, is refused before the agent starts."""
    agent, starts = _counting_agent(tmp_path)
    named = agent.with_name(name)
    agent.rename(named)
    ws = tmp_path / "ws"
    (ws / config).parent.mkdir(parents=True, exist_ok=True)
    (ws / config).write_text("{}")
    spec = AgentRunSpec(prompt="hi", cwd=ws, provider_options={f"{name}_bin": str(named)},
                        mcp_servers=[McpServer(name="ev", command="true")])
    result, _events = await _play(spec, name, host)
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.code == "invalid_spec" and config in result.error.message
    assert not starts.exists() or "started" not in starts.read_text().replace("started", "", 1), \
        "the agent must not be started for the run"


@pytest.mark.parametrize(("call", "expected"), [
    ({"title": "echo (everything MCP Server)", "kind": "other", "status": "pending",
      "content": [{"type": "content", "content": {"type": "text", "text": '{"message":"hi"}'}}]},
     ("everything", "echo", {"message": "hi"})),
    ({"title": "mcp__my__srv__add", "kind": "other", "rawInput": {"a": 1},
      "_meta": {"claudeCode": {"toolName": "mcp__my__srv__add"}}}, ("my__srv", "add", {"a": 1})),
    ({"title": "Tool: docs/search", "kind": "other",
      "rawInput": {"server": "docs", "tool": "search", "arguments": {"q": "x"}}}, ("docs", "search", {"q": "x"})),
    ({"title": "ls -la", "kind": "execute", "rawInput": {"command": "ls -la"}}, None),
])
def test_an_mcp_call_is_recognised_as_each_agent_names_it(call: dict[str, Any], expected: Any) -> None:
    assert mcp_tool(call, ("my__srv", "everything")) == expected



def test_claude_acp_takes_disallowed_tools_in_session_new() -> None:
    """claude-agent-acp merges `_meta.claudeCode.options.disallowedTools` into the Claude Agent SDK's: each kind's
    built-in tools, and MCP servers or tools by Claude Code's names."""
    from harness_acp.profiles import PROFILES

    profile = PROFILES["claude-acp"]
    assert profile.session_meta is not None
    spec = AgentRunSpec(prompt="hi", disallowed_tools={"shell", "mcp:docs", "mcp:ev.echo"})
    options = profile.session_meta(spec)["claudeCode"]["options"]
    assert options["disallowedTools"] == ["mcp__docs", "mcp__ev__echo", "Bash", "Monitor", "BashOutput", "KillShell"]
    assert {"shell", "edit", "write", "web", "mcp:*"} <= profile.tool_filters


async def test_claude_acp_refuses_an_allow_list_before_anything_is_made_and_says_so(tmp_path: Path,
                                                                                    host: PluginHost) -> None:
    """claude-acp filters natively in `disallowed_tools` only: it declares no allow-lists, so the runner's check
    refuses `allowed_tools` before a run log (or an agent) exists, and `harness providers claude-acp` says so."""
    runs = tmp_path / "runs"
    spec = AgentRunSpec(prompt="hi", cwd=tmp_path, allowed_tools={"read"})
    with anyio.fail_after(60), pytest.raises(UnsupportedFeatureError, match="claude-acp takes no allow-list"):
        await run(spec, "claude-acp", host=host, runs_dir=runs)
    assert not runs.exists() or not list(runs.rglob("*.jsonl")), "refused before a run was logged"
    info = host.get("claude-acp").cls.info
    assert not info.tool_allow_lists and "shell" in info.tool_filters
    detail = await provider_detail(host, "claude-acp", 10)
    shown = " ".join(format_provider_detail(detail).split())  # wrapped at the terminal width
    assert "; allow-lists refused (docs/tools.md)" in shown and shown.count("allow-lists") == 1, shown


@pytest.mark.parametrize("fields", [{"disallowed_tools": {"shell"}}, {"disallowed_tools": {"edit"}},
                                    {"allowed_tools": {"edit"}}])
async def test_a_filter_an_acp_agent_cannot_honour_is_refused_before_it_starts(
        tmp_path: Path, host: PluginHost, fields: dict[str, Any]) -> None:
    """ACP agents run some commands without asking (`echo`, reads), so a `shell` filter cannot be enforced through
    their permission requests; the generic provider cannot know what an unknown agent asks before; and no ACP agent
    takes an allow-list. Each is refused, the agent never started for the run (at most probed)."""
    agent, starts = _counting_agent(tmp_path)
    spec = AgentRunSpec(prompt="SCENARIO:tools", cwd=tmp_path, provider_options={"command": str(agent)}, **fields)
    try:
        result, _events = await _play(spec, "acp", host)
    except UnsupportedFeatureError:  # the runner's own refusal, before the run
        result = None
    if result is not None:
        assert result.status is RunStatus.FAILED and result.error is not None
        assert result.error.code == "unsupported_feature", result.error
    started = starts.read_text().count("started") if starts.exists() else 0
    assert started <= 1, "only the probe may start the agent"
    assert not (tmp_path / "new.txt").exists()


async def test_a_disallowed_edit_is_denied_through_the_agents_permission_request(tmp_path: Path,
                                                                                 host: PluginHost) -> None:
    """`edit` and `write` are enforced by Harness on a named ACP agent (its asking mode asks before file changes:
    `approval_kinds`): under approval `never` the agent is still made to ask, the runner denies the edit and the
    write, and everything else runs."""
    agent = write_fake_agent(tmp_path / "bin", name="gemini",
                             args=("--modes", "default=ask,autoEdit=auto,yolo=auto,plan=read-only"))
    (tmp_path / "notes.txt").write_text("alpha\n")
    spec = AgentRunSpec(prompt="SCENARIO:tools", cwd=tmp_path, approval="never",
                        provider_options={"gemini_bin": str(agent)}, disallowed_tools={"edit", "write"})
    result, events = await _play(spec, "gemini", host)
    assert result.status is RunStatus.SUCCESS, result.error
    assert (tmp_path / "notes.txt").read_text() == "alpha\n" and not (tmp_path / "new.txt").exists()
    done = {e.display.kind.value: e.display.status.value for e in events if isinstance(e, ToolResult)}
    assert done["shell"] == "completed" and done["read"] == "completed"
    assert done.get("edit") == "declined" and done.get("write") == "declined", done
