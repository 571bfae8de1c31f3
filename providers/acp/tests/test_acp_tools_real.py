"""Tools through each real pinned ACP agent, offline against its scripted model backend: the npm
`server-everything`'s `echo` given as an MCP server (`tools_echo`), a Python tool served by Harness (`tools_mcp`),
and an image that reaches the model API as an image (`attachments`: the backend reports type and size).

Where an agent or the scripted backend cannot yet play a case, the case is a strict xfail naming why, so it fails
the day it starts to work (and the table in docs/tools.md is updated)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from harness_core import AgentRunSpec, Attachment, McpServer, RunStatus, ToolResult, open_run, tool
from harness_core.offline import offline_spec
from harness_core.plugins import PluginHost

from harness_acp.profiles import PROFILES

pytestmark = [pytest.mark.real_cli, pytest.mark.anyio]

AGENTS = ("claude-acp", "codex-acp", "gemini", "qwen")
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415408d763f8"
                    "cfc000000301010018dd8db00000000049454e44ae426082")

NOT_YET: dict[tuple[str, str], str] = {}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@tool
def add(a: int, b: int) -> int:
    """Add two integers and return their sum."""
    return a + b


def _tools_bin(name: str) -> str:
    """`$HARNESS_TOOLS_DIR/bin/NAME` (the pinned CLIs and the MCP test server), or skip."""
    tools = os.environ.get("HARNESS_TOOLS_DIR")
    path = str(Path(tools) / "bin" / name) if tools else ""
    if not os.access(path, os.X_OK):
        pytest.skip(f"{name} is not installed (scripts/install-clis.sh; HARNESS_TOOLS_DIR); with "
                    "HARNESS_REQUIRE_REAL_CLIS=1 this skip is a failure")
    return path


def _mark(agent: str, case: str) -> Any:
    why = NOT_YET.get((agent, case))
    return pytest.param(agent, marks=pytest.mark.xfail(reason=why, strict=True)) if why else agent


async def _play(spec: AgentRunSpec, agent: str, scenario: str, host: PluginHost,
                **kwargs: Any) -> tuple[Any, list[Any]]:
    events: list[Any] = []
    with offline_spec(spec, agent, scenario, host=host) as played, anyio.fail_after(240):
        async with open_run(played, agent, host=host, run_log=False, **kwargs) as live:
            async for event in live:
                events.append(event)
            result = await live.wait()
    return result, events


def _spec(agent: str, cwd: Path, **fields: Any) -> AgentRunSpec:
    cli = PROFILES[agent].cli
    return AgentRunSpec(prompt="go", cwd=cwd, provider_options={f"{cli}_bin": _tools_bin(cli)}, **fields)


def _as_the_model_saw(agent: str, result: str) -> str:
    """A pattern of the text the scripted model quotes for a tool's `result`: the result itself for every agent
    (the codex-acp backend's dialect reads Codex's wall-time envelope, the Gemini one takes off the
    `<untrusted_context>` lines Gemini CLI wraps it in)."""
    return re.escape(result)


def _mcp_result(events: list[Any]) -> ToolResult:
    return next(e for e in events if isinstance(e, ToolResult) and e.display.kind.value == "mcp")


@pytest.mark.parametrize("agent", [_mark(a, "tools_echo") for a in AGENTS])
async def test_server_everythings_echo_works_through_the_agent(tmp_path: Path, host: PluginHost, agent: str) -> None:
    server = McpServer(name="everything", command=_tools_bin("mcp-server-everything"))
    result, events = await _play(_spec(agent, tmp_path, mcp_servers=[server]), agent, "tools_echo", host)
    assert result.status is RunStatus.SUCCESS, result.error
    assert re.fullmatch(f"The server said {_as_the_model_saw(agent, 'Echo: harness-echo')}\\.", result.final_text), \
        result.final_text
    done = _mcp_result(events)
    assert (done.display.title, done.display.command) == ("echo", "echo(message='harness-echo')")
    assert done.display.summary == "Echo: harness-echo"


@pytest.mark.parametrize("agent", [_mark(a, "tools_mcp") for a in AGENTS])
async def test_a_python_tool_is_called_and_its_result_reaches_the_model(tmp_path: Path, host: PluginHost,
                                                                         agent: str) -> None:
    result, events = await _play(_spec(agent, tmp_path), agent, "tools_mcp", host, tools=[add])
    assert result.status is RunStatus.SUCCESS, result.error
    assert re.fullmatch(f"The tool said {_as_the_model_saw(agent, '5')}\\.", result.final_text), result.final_text
    done = _mcp_result(events)
    assert (done.display.title, done.display.command, done.display.summary) == ("add", "add(a=2, b=3)", "5")


@pytest.mark.parametrize("agent", AGENTS)
async def test_an_image_reaches_the_model_api(tmp_path: Path, host: PluginHost, agent: str) -> None:
    image = tmp_path / "dot.png"
    image.write_bytes(PNG)
    ws = tmp_path / "ws"
    ws.mkdir()
    result, _events = await _play(_spec(agent, ws, attachments=[Attachment.of(image)]), agent, "attachments", host)
    assert result.status is RunStatus.SUCCESS, result.error
    assert result.final_text == f"image/png {len(PNG)} bytes"
