"""Tools through each real pinned ACP agent, offline against its scripted model backend: the npm
`server-everything`'s `echo` given as an MCP server (`tools_echo`), a Python tool served by Harness (`tools_mcp`),
and an image that reaches the model API as an image (`attachments`: the backend reports type and size).

Where an agent or the scripted backend cannot yet play a case, the case is a strict xfail naming why, so it fails
the day it starts to work (and the table in docs/tools.md is updated)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from harness_core import (
    AgentRunSpec,
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    Attachment,
    McpServer,
    RunStatus,
    ToolResult,
    tool,
)
from harness_core.plugins import PluginHost
from harness_core.testing.real_tools import RED_PNG, play_offline, tools_bin

from harness_acp.profiles import PROFILES

pytestmark = [pytest.mark.real_cli, pytest.mark.anyio]

AGENTS = ("claude-acp", "codex-acp", "gemini", "qwen")


NOT_YET: dict[tuple[str, str], str] = {}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _add(a: int, b: int) -> int:
    """Add two integers and return their sum."""
    return a + b


add = tool(name="add")(_add)


def _mark(agent: str, case: str) -> Any:
    why = NOT_YET.get((agent, case))
    return pytest.param(agent, marks=pytest.mark.xfail(reason=why, strict=True)) if why else agent


def _spec(agent: str, cwd: Path, **fields: Any) -> AgentRunSpec:
    cli = PROFILES[agent].cli
    return AgentRunSpec(prompt="go", cwd=cwd, provider_options={f"{cli}_bin": tools_bin(cli)}, **fields)


def _as_the_model_saw(agent: str, result: str) -> str:
    """A pattern of the text the scripted model quotes for a tool's `result`: the result itself for every agent
    (the codex-acp backend's dialect reads Codex's wall-time envelope, the Gemini one takes off the
    `<untrusted_context>` lines Gemini CLI wraps it in)."""
    return re.escape(result)


def _mcp_result(events: list[Any]) -> ToolResult:
    return next(e for e in events if isinstance(e, ToolResult) and e.display.kind.value == "mcp")


@pytest.mark.parametrize("agent", [_mark(a, "tools_echo") for a in AGENTS])
async def test_server_everythings_echo_works_through_the_agent(tmp_path: Path, host: PluginHost, agent: str) -> None:
    server = McpServer(name="everything", command=tools_bin("mcp-server-everything"))
    result, events = await play_offline(_spec(agent, tmp_path, mcp_servers=[server]), agent, "tools_echo", host)
    assert result.status is RunStatus.SUCCESS, result.error
    assert re.fullmatch(f"The server said {_as_the_model_saw(agent, 'Echo: harness-echo')}\\.", result.final_text), \
        result.final_text
    done = _mcp_result(events)
    assert (done.display.title, done.display.command) == ("echo", "echo(message='harness-echo')")
    assert done.display.summary == "Echo: harness-echo"


@pytest.mark.parametrize("agent", [_mark(a, "tools_mcp") for a in AGENTS])
async def test_a_python_tool_is_called_and_its_result_reaches_the_model(tmp_path: Path, host: PluginHost,
                                                                         agent: str) -> None:
    result, events = await play_offline(_spec(agent, tmp_path), agent, "tools_mcp", host, tools=[add])
    assert result.status is RunStatus.SUCCESS, result.error
    assert re.fullmatch(f"The tool said {_as_the_model_saw(agent, '5')}\\.", result.final_text), result.final_text
    done = _mcp_result(events)
    assert (done.display.title, done.display.command, done.display.summary) == ("add", "add(a=2, b=3)", "5")


@pytest.mark.parametrize("agent", AGENTS)
async def test_an_image_reaches_the_model_api(tmp_path: Path, host: PluginHost, agent: str) -> None:
    image = tmp_path / "dot.png"
    image.write_bytes(RED_PNG)
    ws = tmp_path / "ws"
    ws.mkdir()
    spec = _spec(agent, ws, attachments=[Attachment.of(image)])
    result, _events = await play_offline(spec, agent, "attachments", host)
    assert result.status is RunStatus.SUCCESS, result.error
    assert result.final_text == f"image/png {len(RED_PNG)} bytes"


@pytest.mark.parametrize("agent", AGENTS)
async def test_a_python_tool_that_asks_itself_is_asked_about_once(tmp_path: Path, host: PluginHost,
                                                                  agent: str) -> None:
    """The agent asks its own approval before an MCP call (`on-request`); for a tool with `requires_approval` the
    runner approves that question, and the one question the approver gets is the tool's, with its arguments."""
    asked: list[str | None] = []

    def approver(request: ApprovalRequested) -> ApprovalDecision:
        asked.append(request.display.command)
        return ApprovalDecision.APPROVE

    guarded = tool(requires_approval=True, name="add")(_add)
    result, events = await play_offline(_spec(agent, tmp_path, approval="on-request"), agent, "tools_mcp", host,
                                        tools=[guarded], approver=approver)
    assert result.status is RunStatus.SUCCESS, result.error
    assert asked == ["add(a=2, b=3)"]
    resolved = [(e.decided_by, e.decision.value) for e in events if isinstance(e, ApprovalResolved)]
    assert resolved == [("runner", "approve"), ("callback", "approve")]  # the agent's question, then the tool's
