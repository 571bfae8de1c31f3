"""mini-agent end to end against the scripted Responses backend (asyncio and trio), and its wire mapping."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from harness_core import (
    AgentRunSpec,
    AuthFailedError,
    InvalidSpecError,
    ModelError,
    RateLimitedError,
    RunStatus,
    SandboxMode,
    ToolResult,
    ToolStatus,
    open_run,
)
from harness_core.offline import SCENARIOS, seed_workspace
from harness_core.testing.contract import descendants

from harness_mini_agent import wire
from harness_mini_agent.offline import OFFLINE_KEY, offline_setup


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def play(
    tmp_path: Path, name: str, interrupt_on: str | None = None, record_wire: bool = False, **fields: Any
) -> tuple[Any, list[Any], list[dict[str, Any]]]:
    scenario = SCENARIOS[name]
    workspace = tmp_path / "ws"
    workspace.mkdir()
    seed_workspace(scenario, workspace)
    setup = offline_setup(scenario, workspace)
    events: list[Any] = []
    assert setup.backend is not None
    with setup.backend as backend:
        spec = AgentRunSpec(
            prompt=f"play {name}",
            cwd=workspace,
            provider_options=setup.provider_options,
            env=setup.env,
            **fields,
        )
        async with open_run(spec, "mini-agent", runs_dir=tmp_path / "runs", record_wire=record_wire) as live:
            async for event in live:
                events.append(event)
                if event.type == interrupt_on:
                    live.interrupt()
        return live.result, events, backend.requests


@pytest.mark.anyio
async def test_tools_change_the_workspace_and_chain_the_responses(tmp_path: Path) -> None:
    result, events, requests = await play(tmp_path, "tools")
    assert result.status is RunStatus.SUCCESS, result.error
    assert (tmp_path / "ws" / "notes.txt").read_text() == "beta\n"
    assert (tmp_path / "ws" / "new.txt").read_text() == "fresh\n"
    assert [r.get("previous_response_id") for r in requests] == [None, "resp_0", "resp_1", "resp_2", "resp_3"]
    assert requests[1]["input"][0]["type"] == "function_call_output"
    assert "harness-ok" in requests[1]["input"][0]["output"]
    assert requests[2]["input"][0]["output"].startswith("alpha")
    assert requests[3]["input"][0] == {
        "type": "custom_tool_call_output",
        "call_id": "call_2",
        "output": "Success. Updated the following files: update notes.txt",
    }
    assert all(r["stream"] is True and r["model"] == "gpt-5.5" for r in requests)
    assert result.session_id == "resp_4"
    assert result.usage.input_tokens == sum(100 + 10 * i for i in range(5))
    titles = [
        (e.display.title, e.display.path or e.display.command) for e in events if isinstance(e, ToolResult)
    ]
    assert titles == [
        ("Running command", "echo harness-ok"),
        ("Reading file", "notes.txt"),
        ("Editing file", "notes.txt"),
        ("Writing file", "new.txt"),
    ]


@pytest.mark.anyio
async def test_the_wire_log_holds_the_http_bodies_and_not_the_commands_output(tmp_path: Path) -> None:
    result, _, _ = await play(tmp_path, "tools", record_wire=True)
    assert result.status is RunStatus.SUCCESS, result.error
    (wire_log,) = (tmp_path / "runs").glob("*.wire.jsonl")
    lines = [json.loads(line) for line in wire_log.read_text().splitlines()]
    sent = [json.loads(r["line"]) for r in lines if r["dir"] == "out"]
    assert [body["previous_response_id"] for body in sent[1:]] == ["resp_0", "resp_1", "resp_2", "resp_3"]
    received = [r["line"] for r in lines if r["dir"] == "in"]
    assert "harness-ok" not in received, "a tool command's stdout is not agent protocol: not in the wire log"
    events = [json.loads(line) for line in received if line.startswith("{")]
    assert sum(e.get("type") == "response.completed" for e in events) == 5
    assert OFFLINE_KEY not in wire_log.read_text(), "the API key never reaches the wire log"


@pytest.mark.anyio
async def test_read_only_sandbox_refuses_patches(tmp_path: Path) -> None:
    result, events, requests = await play(tmp_path, "tools", sandbox=SandboxMode.READ_ONLY)
    assert result.status is RunStatus.SUCCESS
    assert (tmp_path / "ws" / "notes.txt").read_text() == "alpha\n"
    assert not (tmp_path / "ws" / "new.txt").exists()
    statuses = [e.display.status for e in events if isinstance(e, ToolResult)]
    assert statuses == [ToolStatus.COMPLETED, ToolStatus.COMPLETED, ToolStatus.FAILED, ToolStatus.FAILED]
    assert "read-only" in requests[3]["input"][0]["output"]


@pytest.mark.anyio
@pytest.mark.parametrize(("name", "busy"), [("slow_command", "tool_use"), ("slow_text", "text_delta")])
async def test_interrupt_stops_the_command_or_the_stream_promptly(
    tmp_path: Path, name: str, busy: str
) -> None:
    before, started = descendants(), time.monotonic()
    result, events, _ = await play(tmp_path, name, interrupt_on=busy)
    assert result.status is RunStatus.INTERRUPTED
    assert time.monotonic() - started < 5
    uses, results = (
        [e for e in events if e.type == "tool_use"],
        [e for e in events if e.type == "tool_result"],
    )
    assert len(uses) == len(results)
    assert descendants() - before == set(), "the interrupted command must be killed"


@pytest.mark.anyio
async def test_resume_sends_the_session_as_previous_response_id(tmp_path: Path) -> None:
    result, events, requests = await play(tmp_path, "say", resume_session="resp_41")
    assert requests[0]["previous_response_id"] == "resp_41"
    started = [e for e in events if e.type == "session_started"]
    assert len(started) == 1 and started[0].session_id == "resp_41" and started[0].resumed
    assert result.session_id == "resp_0"  # the scripted backend's next response: resume from there next time


def test_base_url_is_required(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness_mini_agent.provider import MiniAgentProvider

    monkeypatch.delenv("MINI_AGENT_BASE_URL", raising=False)
    with pytest.raises(InvalidSpecError, match="base_url is required"):
        MiniAgentProvider().parse_options({})
    monkeypatch.setenv("MINI_AGENT_BASE_URL", "http://127.0.0.1:9/v1/")
    assert MiniAgentProvider().parse_options({}).base_url == "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    ("status", "cls", "next_step"),
    [
        (401, AuthFailedError, "$OPENAI_API_KEY is not set"),
        (403, AuthFailedError, "$OPENAI_API_KEY is not set"),
        (429, RateLimitedError, "wait and retry"),
        (500, ModelError, "check base_url and model"),
    ],
)
def test_http_errors_are_classified(status: int, cls: type[Exception], next_step: str) -> None:
    err = wire.http_error(
        status, json.dumps({"error": {"message": "nope"}}).encode(), "OPENAI_API_KEY", False
    )
    assert type(err) is cls and "nope" in err.message and err.details["status"] == status
    assert next_step in err.message
    assert err.retryable is (status >= 429), "rate limits and server errors are worth retrying"


def test_sse_frames_and_tool_calls() -> None:
    frames = ["event: x", 'data: {"type": "a",', 'data: "n": 1}', "", ": comment", "data: [DONE]", ""]
    assert list(wire.sse_events(frames)) == [{"type": "a", "n": 1}]
    call = wire.tool_call(
        {"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": '{"cmd": "ls"}'}
    )
    assert call is not None and (call.kind, call.cmd) == ("exec", "ls")
    bad = wire.tool_call({"type": "function_call", "call_id": "c2", "name": "web_search", "arguments": "{}"})
    assert bad is not None and bad.kind == "unknown" and "no tool named" in bad.problem
    assert wire.tool_output_item(call, "out") == {
        "type": "function_call_output",
        "call_id": "c1",
        "output": "out",
    }
