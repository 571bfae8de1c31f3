"""Live sessions, budgets and structured output with the real pinned Claude Code against the scripted Messages
backend on 127.0.0.1 (`replay_each_prompt`: every turn plays the scenario again).

Marked `real_cli` (skipped with a reason without the binary; a failure under HARNESS_REQUIRE_REAL_CLIS=1).
asyncio only: trio is covered by the fake tests.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_helpers import CLAUDE, kill_tree, needs_real_claude
from harness_core import AgentRunSpec, ApprovalDecision, HarnessEvent, Session, SessionSpec, open_run, open_session
from harness_core.errors import SessionClosedError
from harness_core.plugins import PluginHost
from harness_core.scripted.backends import ScriptedBackend
from harness_core.scripted.scenarios import RunCommand, Say, Scenario

from harness_claude.provider import ClaudeProvider

pytestmark = [*needs_real_claude, pytest.mark.anyio, pytest.mark.usefixtures("no_leftovers")]

SAY = Scenario("say", (Say("answered."),))
TOUCH = Scenario("touch", (RunCommand("touch touched.txt"), Say("after the command")))
SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def backend_for(tmp_path: Path, scenario: Scenario) -> tuple[ScriptedBackend, Path, dict[str, str]]:
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir(exist_ok=True)
    state.mkdir(exist_ok=True)
    setup = ClaudeProvider().offline_setup(scenario, ws, state)
    backend = setup.backend
    assert backend is not None
    backend.replay_each_prompt = True
    return backend, ws, setup.env


def options(**extra: Any) -> dict[str, Any]:
    return {"claude_bin": CLAUDE, "max_retries": 0, "setting_sources": "", **extra}


@asynccontextmanager
async def session(
    tmp_path: Path, host: PluginHost, scenario: Scenario, **kw: Any
) -> AsyncIterator[tuple[Session, ScriptedBackend, Path]]:
    backend, ws, env = backend_for(tmp_path, scenario)
    approver = kw.pop("approver", None)
    spec = SessionSpec(cwd=ws, env=env, provider_options=options(), **kw)
    with backend, anyio.fail_after(90):
        async with open_session(spec, "claude", host=host, run_log=False, approver=approver) as s:
            yield s, backend, ws


async def events_of(s: Session, prompt: str, **kw: Any) -> tuple[list[HarnessEvent], Any]:
    events: list[HarnessEvent] = []
    async with s.turn(prompt, **kw) as live:
        async for event in live:
            events.append(event)
        return events, await live.wait()


def _texts(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else json.dumps(content)


async def test_three_turns_on_one_process_keep_context_and_model_overrides(tmp_path: Path, host: PluginHost) -> None:
    async with session(tmp_path, host, SAY, model="claude-sonnet-4-5") as (s, backend, _):
        first = await s.run("first prompt")
        pid = s.pid
        second = await s.run("second prompt", model="claude-haiku-4-5")
        assert s.pid == pid
        third = await s.run("third prompt")
        assert s.pid == pid and s.turns == 3
    assert [r.status.value for r in (first, second, third)] == ["success"] * 3
    assert [b["model"] for b in backend.requests] == ["claude-sonnet-4-5", "claude-haiku-4-5", "claude-sonnet-4-5"]
    assert "first prompt" in " ".join(_texts(m) for m in backend.requests[1]["messages"])
    assert "second prompt" in " ".join(_texts(m) for m in backend.requests[2]["messages"])
    assert first.session_id == second.session_id == third.session_id
    # Claude Code's total_cost_usd is the process's; each turn reports its own cost
    costs = [r.usage.cost_usd for r in (first, second, third)]
    assert all(c is not None and 0 < c < 0.01 for c in costs)
    assert s.usage.cost_usd == pytest.approx(sum(c for c in costs if c is not None))
    assert third.usage.input_tokens < first.usage.input_tokens + second.usage.input_tokens + third.usage.input_tokens


async def test_approval_changes_between_turns(tmp_path: Path, host: PluginHost) -> None:
    asked: list[str] = []

    def deny(request: Any) -> ApprovalDecision:
        asked.append(request.display.command or "")
        return ApprovalDecision.DENY

    async with session(tmp_path, host, TOUCH, approver=deny) as (s, _, ws):
        never, _ = await events_of(s, "first")
        assert (ws / "touched.txt").exists()  # workspace-write + never: Bash runs without asking
        (ws / "touched.txt").unlink()
        # untrusted: mode default, asked (acceptEdits, as on-request has it, lets `touch` in the cwd through)
        asking, result = await events_of(s, "second", approval="untrusted")
        assert [e.type for e in asking].count("approval_requested") == 1 and asked == ["touch touched.txt"]
        assert not (ws / "touched.txt").exists() and result.status.value == "success"
        declined = [e for e in asking if e.type == "tool_result"]
        assert declined and declined[0].display.status.value == "declined"
        back, _ = await events_of(s, "third")
        assert (ws / "touched.txt").exists() and not [e for e in back if e.type == "approval_requested"]
    assert [e.type for e in never].count("approval_requested") == 0


async def test_interrupted_turn_then_the_next_turn_runs(tmp_path: Path, host: PluginHost) -> None:
    slow = Scenario("slow", (RunCommand("echo waiting; sleep 3", output="waiting\n"), Say("done")))
    async with session(tmp_path, host, slow) as (s, _, _ws):
        first = await s.run("one")
        async with s.turn("two") as live:
            async for event in live:
                if event.type == "tool_use":
                    live.interrupt()
            second = await live.wait()
        third = await s.run("three")
        assert s.closed is None
    assert (first.status.value, second.status.value, third.status.value) == ("success", "interrupted", "success")
    assert third.final_text == "done"


async def test_process_killed_between_turns(tmp_path: Path, host: PluginHost) -> None:
    async with session(tmp_path, host, SAY) as (s, _, _ws):
        assert (await s.run("one")).status.value == "success"
        assert s.pid is not None
        await kill_tree(s.pid)
        second = await s.run("two")
        assert second.error is not None and second.error.code == "process_exited"
        assert s.closed is not None
        with pytest.raises(SessionClosedError):
            await s.run("three")


async def test_steer_is_injected_into_the_running_turn(tmp_path: Path, host: PluginHost) -> None:
    """Observed: a user message sent while a tool runs reaches the turn's next model call (one result)."""
    slow = Scenario("slow", (RunCommand("echo waiting; sleep 2", output="waiting\n"), Say("done")))
    async with session(tmp_path, host, slow) as (s, backend, _ws):
        async with s.turn("one") as live:
            steered = None
            async for event in live:
                if event.type == "tool_use" and steered is None:
                    steered = await live.steer("STEER: mention bananas")
            result = await live.wait()
        assert steered is True and result.status.value == "success" and result.final_text == "done"
        assert s.turns == 1
        second_call = json.dumps(backend.requests[1]["messages"])
        assert "STEER: mention bananas" in second_call
        assert (await s.run("two")).final_text == "done"  # nothing left queued from the steer


async def test_a_late_steer_plays_inside_the_steered_turn(tmp_path: Path, host: PluginHost) -> None:
    """Observed: a steer sent while the turn's last answer streams is played as a queued turn (`started` after
    the turn's `result`, then a new `system/init` and its own `result`); it stays in the steered Harness turn,
    so the next turn gets the answer to its own prompt."""
    slow = Scenario("slow", (Say("a slow final answer " * 3, chunks=6, delay=0.4),))
    async with session(tmp_path, host, slow) as (s, backend, _ws):
        async with s.turn("one") as live:
            steered = None
            async for event in live:
                if event.type == "text_delta" and steered is None:
                    steered = await live.steer("STEER: one more thing")
            first = await live.wait()
        assert steered is True and first.status.value == "success" and len(backend.requests) == 2
        assert "STEER: one more thing" in json.dumps(backend.requests[1]["messages"][-1])
        second = await s.run("two")
        assert len(backend.requests) == 3 and "two" in json.dumps(backend.requests[2]["messages"][-1])
    assert second.status.value == "success" and first.usage.cost_usd is not None
    assert s.usage.cost_usd == pytest.approx(first.usage.cost_usd + (second.usage.cost_usd or 0))


# --- one-shot runs: structured output and native budgets ---------------------------------------------------


async def one_shot(tmp_path: Path, host: PluginHost, scenario: Scenario, **kw: Any) -> Any:
    backend, ws, env = backend_for(tmp_path, scenario)
    spec = AgentRunSpec(prompt="go", cwd=ws, env=env, provider_options=options(), **kw)
    with backend, anyio.fail_after(60):
        async with open_run(spec, "claude", host=host, run_log=False) as live:
            async for _ in live:
                pass
            return await live.wait()


async def test_structured_output_valid(tmp_path: Path, host: PluginHost) -> None:
    """The scripted model answers JSON by calling the StructuredOutput tool Claude Code offers (`offline`)."""
    result = await one_shot(tmp_path, host, Scenario("json", (Say('{"answer": 42}'),)), output_schema=SCHEMA)
    assert result.status.value == "success" and result.structured_output == {"answer": 42}


async def test_structured_output_invalid(tmp_path: Path, host: PluginHost) -> None:
    """A model that never calls StructuredOutput: Claude Code asks once more, then ends the turn with the text."""
    result = await one_shot(tmp_path, host, Scenario("prose", (Say("no json here"),)), output_schema=SCHEMA)
    assert result.status.value == "failed" and result.error.code == "invalid_structured_output"


async def test_max_cost_usd_stops_the_run(tmp_path: Path, host: PluginHost) -> None:
    result = await one_shot(tmp_path, host, TOUCH, max_cost_usd=0.0001)
    assert result.status.value == "failed" and result.error.code == "budget_exceeded"
    assert result.error.details["budget"] == "max_cost_usd" and result.error.details["used"] > 0.0001
    assert result.usage.cost_usd is not None and result.usage.cost_usd > 0.0001  # the stopped run's cost is kept


async def test_max_turns_stops_the_run(tmp_path: Path, host: PluginHost) -> None:
    result = await one_shot(tmp_path, host, TOUCH, max_turns=1)
    assert result.status.value == "failed" and result.error.code == "budget_exceeded"
    assert result.error.details["budget"] == "max_turns" and result.error.details["limit"] == 1


async def test_max_output_tokens_stops_the_run(tmp_path: Path, host: PluginHost) -> None:
    """The scripted model writes 20 tokens per message: the first message's usage is over a limit of 10."""
    result = await one_shot(tmp_path, host, TOUCH, max_output_tokens=10)
    assert result.status.value == "failed" and result.error.code == "budget_exceeded"
    assert result.error.details["budget"] == "max_output_tokens"


async def test_session_budget_covers_all_turns(tmp_path: Path, host: PluginHost) -> None:
    """--max-budget-usd covers the process: a budget the first turn leaves room in stops the second — Claude Code
    stops it (its own words in `said`), the runner did not refuse it before it started."""
    async with session(tmp_path, host, SAY, max_cost_usd=0.001) as (s, _, _ws):
        first = await s.run("one")
        second = await s.run("two")
        total = s.usage.cost_usd
    assert first.status.value == "success" and first.usage.cost_usd is not None and first.usage.cost_usd < 0.001
    assert second.status.value == "failed" and second.error is not None
    assert second.error.code == "budget_exceeded" and second.error.details["scope"] == "session"
    assert "maximum budget" in second.error.details["said"] and not second.error.details.get("before_turn")
    assert second.usage.cost_usd is not None and second.usage.cost_usd > 0
    assert total == pytest.approx(first.usage.cost_usd + second.usage.cost_usd)
