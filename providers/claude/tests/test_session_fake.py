"""Live sessions against the fake claude (fast, no Node, no model; asyncio and trio): one process for the
turns, overrides by control request and back, interrupt, native budgets, structured output, a process that
dies between turns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_helpers import kill_tree
from harness_core import (
    ApprovalPolicy,
    HarnessEvent,
    SandboxMode,
    Session,
    SessionSpec,
    UnsupportedFeatureError,
    open_session,
)
from harness_core.errors import SessionClosedError
from harness_core.plugins import PluginHost

from harness_claude import turn as turn_module
from harness_claude.testing.fake import IGNORE_ENV, LOG_ENV

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
            await kill_tree(s.pid)
            second = await s.run("SCENARIO:say")
            assert second.error is not None and second.error.code == "process_exited"
            assert s.closed is not None
            with pytest.raises(SessionClosedError):
                await s.run("SCENARIO:say")


async def test_native_budget_covers_the_process(tmp_path: Path, fake_bin: Path, host: PluginHost) -> None:
    """The fake's model call costs 0.0004 USD: a 0.0006 budget lets one turn through, not two. The stopped turn
    still reports what it cost, and the runner's own budget check (which interrupts right after that `result`)
    sends nothing to the process."""
    with anyio.fail_after(30):
        async with open_session(spec(tmp_path, fake_bin, max_cost_usd=0.0006), "claude", host=host,
                                run_log=False) as s:
            first = await s.run("SCENARIO:say")
            second = await s.run("SCENARIO:say")
            total = s.usage.cost_usd
    assert first.status.value == "success"
    assert second.status.value == "failed" and second.error is not None
    assert second.error.code == "budget_exceeded" and second.error.details["scope"] == "session"
    assert "maximum budget" in second.error.details["said"]  # Claude Code's own stop, not the runner's
    assert second.usage.cost_usd == pytest.approx(0.0004) and total == pytest.approx(0.0008)
    assert not [c for c in controls(tmp_path) if c["subtype"] == "interrupt"]


async def test_max_turns_with_a_tool_step(tmp_path: Path, fake_bin: Path, host: PluginHost) -> None:
    with anyio.fail_after(30):
        async with open_session(spec(tmp_path, fake_bin, max_turns=1), "claude", host=host, run_log=False) as s:
            result = await s.run("SCENARIO:tools")
    assert result.status.value == "failed" and result.error is not None
    assert result.error.code == "budget_exceeded" and result.error.details["budget"] == "max_turns"
    # --max-turns bounds each turn of the live process: raise it, no need for a new session
    assert result.error.details["scope"] == "run" and "new session" not in result.error.message


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


async def test_a_resumed_session_gets_its_own_model_back_after_an_override(
    tmp_path: Path, fake_bin: Path, host: PluginHost
) -> None:
    """No session model: the model put back is the one the process started with (its first system/init), not
    `set_model` without a model (Claude Code's default, not the resumed conversation's)."""
    resume = "0b6b4c4e-8f6a-4d6e-9b0e-3f1c2a4d5e6f"
    with anyio.fail_after(30):
        async with open_session(spec(tmp_path, fake_bin, resume_session=resume), "claude", host=host,
                                run_log=False) as s:
            await s.run("SCENARIO:say")
            await s.run("SCENARIO:say", model="claude-haiku-4-5")
            third, _ = await turn_events(s, "SCENARIO:say")
            fourth = await s.run("SCENARIO:say")
    started = next(e for e in third if e.type == "session_started")
    assert controls(tmp_path) == [
        {"subtype": "set_model", "model": "claude-haiku-4-5"},
        {"subtype": "set_model", "model": started.model},
    ]
    assert started.model != "claude-haiku-4-5" and fourth.status.value == "success"


async def test_an_interrupt_never_confirmed_closes_the_session(
    tmp_path: Path, fake_bin: Path, host: PluginHost
) -> None:
    """A CLI that ignores the interrupt: after the provider's grace the turn ends interrupted, and the session
    is closed (its process may still be playing that turn), naming why."""
    live_spec = spec(tmp_path, fake_bin)
    live_spec = live_spec.model_copy(update={
        "env": {**live_spec.env, IGNORE_ENV: "interrupt"},
        "provider_options": {**live_spec.provider_options, "interrupt_grace": 1.0},
    })
    with anyio.fail_after(40):
        async with open_session(live_spec, "claude", host=host, run_log=False, interrupt_grace=10) as s:
            async with s.turn("SCENARIO:slow_command") as live:
                async for event in live:
                    if event.type == "tool_use":
                        live.interrupt()
                result = await live.wait()
            assert result.status.value == "interrupted"
            assert s.closed is not None and "did not confirm the interrupt" in s.closed
            with pytest.raises(SessionClosedError, match="did not confirm the interrupt"):
                await s.run("SCENARIO:say")


async def test_a_control_request_never_answered_fails_the_turn_and_closes_the_session(
    tmp_path: Path, fake_bin: Path, host: PluginHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(turn_module, "CONTROL_ANSWER_WAIT", 1.0)
    live_spec = spec(tmp_path, fake_bin)
    live_spec = live_spec.model_copy(update={"env": {**live_spec.env, IGNORE_ENV: "set_model"}})
    with anyio.fail_after(30):
        async with open_session(live_spec, "claude", host=host, run_log=False) as s:
            first = await s.run("SCENARIO:say")
            second = await s.run("SCENARIO:say", model="claude-haiku-4-5")
            assert s.closed is not None and "did not answer set_model" in s.closed
    assert first.status.value == "success"
    assert second.status.value == "failed" and second.error is not None
    assert second.error.code == "protocol_error" and "did not answer set_model within 1 s" in second.error.message
    assert not [c for c in controls(tmp_path) if c["subtype"] != "set_model"]


async def test_a_never_turn_denies_a_write_outside_the_workspace(
    tmp_path: Path, fake_bin: Path, host: PluginHost
) -> None:
    """workspace-write + never: acceptEdits lets edits inside the cwd through; one outside asks, and the
    provider answers it itself: declined, nothing written."""
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside.txt"
    live_spec = spec(tmp_path, fake_bin, sandbox=SandboxMode.WORKSPACE_WRITE, approval=ApprovalPolicy.NEVER)
    live_spec = live_spec.model_copy(update={"cwd": ws})
    with anyio.fail_after(30):
        async with open_session(live_spec, "claude", host=host, run_log=False) as s:
            events, result = await turn_events(s, f"WRITE:{outside}")
            inside, _ = await turn_events(s, "WRITE:inside.txt")
    declined = [e for e in events if e.type == "tool_result"]
    assert [e.display.status.value for e in declined] == ["declined"] and not outside.exists()
    assert "denied automatically" in (declined[0].output or "") and result.status.value == "success"
    assert not [e for e in events if e.type == "approval_requested"]
    assert [e.display.status.value for e in inside if e.type == "tool_result"] == ["completed"]
    assert (ws / "inside.txt").read_text() == "written\n"
