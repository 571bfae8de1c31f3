"""Live sessions against the fake claude (fast, no Node, no model; asyncio and trio): one process for the
turns, overrides by control request and back, interrupt, native budgets, structured output, a process that
dies between turns."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest
from harness_core import ApprovalPolicy, HarnessEvent, Session, SessionSpec, UnsupportedFeatureError, open_session
from harness_core.errors import SessionClosedError
from harness_core.plugins import PluginHost

from harness_claude.testing.fake import LOG_ENV

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leftovers")]


def spec(tmp_path: Path, fake: Path, **kw: Any) -> SessionSpec:
    env = {LOG_ENV: str(tmp_path / "stdin.jsonl")}
    return SessionSpec(cwd=tmp_path, env=env, provider_options={"claude_bin": str(fake)}, **kw)


def controls(tmp_path: Path) -> list[dict[str, Any]]:
    """The control requests the fake got between turns, in order."""
    path = tmp_path / "stdin.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [m["request"] for m in lines if m.get("type") == "control_request"]


async def turn_events(s: Session, prompt: str, **kw: Any) -> tuple[list[HarnessEvent], Any]:
    events: list[HarnessEvent] = []
    async with s.turn(prompt, **kw) as live:
        async for event in live:
            events.append(event)
        return events, await live.wait()


async def test_turns_share_one_process_and_overrides_are_put_back(
    tmp_path: Path, fake_bin: Path, host: PluginHost
) -> None:
    with anyio.fail_after(30):
        async with open_session(spec(tmp_path, fake_bin, model="claude-sonnet-4-5"), "claude", host=host,
                                run_log=False) as s:
            one, first = await turn_events(s, "SCENARIO:say")
            pid = s.pid
            two, second = await turn_events(s, "SCENARIO:say", model="claude-haiku-4-5",
                                            approval=ApprovalPolicy.UNTRUSTED)
            three, third = await turn_events(s, "SCENARIO:say")
            assert s.pid == pid is not None and s.turns == 3
    models = [next(e.model for e in events if e.type == "session_started") for events in (one, two, three)]
    assert models == ["claude-sonnet-4-5", "claude-haiku-4-5", "claude-sonnet-4-5"]
    assert controls(tmp_path) == [
        {"subtype": "set_model", "model": "claude-haiku-4-5"},
        {"subtype": "set_permission_mode", "mode": "default"},
        {"subtype": "set_model", "model": "claude-sonnet-4-5"},
        {"subtype": "set_permission_mode", "mode": "acceptEdits"},
    ]
    assert [r.status.value for r in (first, second, third)] == ["success"] * 3
    assert first.session_id == second.session_id == third.session_id
    costs = [r.usage.cost_usd for r in (first, second, third)]  # per turn, not the process's running total
    assert costs[0] == costs[1] == costs[2] and costs[0]


async def test_a_per_turn_override_the_process_cannot_take_is_refused(
    tmp_path: Path, fake_bin: Path, host: PluginHost
) -> None:
    with anyio.fail_after(30):
        async with open_session(spec(tmp_path, fake_bin), "claude", host=host, run_log=False) as s:
            with pytest.raises(UnsupportedFeatureError, match="effort"):
                await s.run("SCENARIO:say", effort="high")
            assert (await s.run("SCENARIO:say")).status.value == "success"


async def test_interrupted_turn_then_the_next_one(tmp_path: Path, fake_bin: Path, host: PluginHost) -> None:
    with anyio.fail_after(30):
        async with open_session(spec(tmp_path, fake_bin), "claude", host=host, run_log=False) as s:
            async with s.turn("SCENARIO:slow_command") as live:
                async for event in live:
                    if event.type == "tool_use":
                        live.interrupt()
                first = await live.wait()
            second = await s.run("SCENARIO:say")
    assert first.status.value == "interrupted"
    assert second.status.value == "success" and second.final_text == "Hello from the scripted model."


async def test_process_killed_between_turns(tmp_path: Path, fake_bin: Path, host: PluginHost) -> None:
    with anyio.fail_after(30):
        async with open_session(spec(tmp_path, fake_bin), "claude", host=host, run_log=False) as s:
            assert (await s.run("SCENARIO:say")).status.value == "success"
            assert s.pid is not None
            os.kill(s.pid, signal.SIGKILL)
            second = await s.run("SCENARIO:say")
            assert second.error is not None and second.error.code == "process_exited"
            assert s.closed is not None
            with pytest.raises(SessionClosedError):
                await s.run("SCENARIO:say")


async def test_native_budget_covers_the_process(tmp_path: Path, fake_bin: Path, host: PluginHost) -> None:
    """The fake's model call costs 0.0004 USD: a 0.0006 budget lets one turn through, not two."""
    with anyio.fail_after(30):
        async with open_session(spec(tmp_path, fake_bin, max_cost_usd=0.0006), "claude", host=host,
                                run_log=False) as s:
            first = await s.run("SCENARIO:say")
            second = await s.run("SCENARIO:say")
    assert first.status.value == "success"
    assert second.status.value == "failed" and second.error is not None
    assert second.error.code == "budget_exceeded" and second.error.details["scope"] == "session"


async def test_max_turns_with_a_tool_step(tmp_path: Path, fake_bin: Path, host: PluginHost) -> None:
    with anyio.fail_after(30):
        async with open_session(spec(tmp_path, fake_bin, max_turns=1), "claude", host=host, run_log=False) as s:
            result = await s.run("SCENARIO:tools")
    assert result.status.value == "failed" and result.error is not None
    assert result.error.code == "budget_exceeded" and result.error.details["budget"] == "max_turns"


async def test_structured_output(tmp_path: Path, fake_bin: Path, host: PluginHost) -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}
    with anyio.fail_after(30):
        async with open_session(spec(tmp_path, fake_bin, output_schema=schema), "claude", host=host,
                                run_log=False) as s:
            valid = await s.run('ANSWER:{"answer": 7}')
            invalid = await s.run("SCENARIO:prose")
    assert valid.status.value == "success" and valid.structured_output == {"answer": 7}
    assert invalid.status.value == "failed" and invalid.error is not None
    assert invalid.error.code == "invalid_structured_output"
