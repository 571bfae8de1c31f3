"""Live sessions of codex-appserver against the fake app-server: many turns on one process and one thread.

Through `harness_core.open_session` and the real runner. The fake records what each `turn/start` asked for and
the settings the turn ran with (`turns_asked`), with the app-server's sticky overrides, so these tests check what
the provider sent, turn by turn. The same behaviours against the real codex are in `test_session_real.py`; the
server misbehaving (an interrupt never confirmed, a turn completed early that plays on, a steer answered after its
turn ended) only the fake can play (`HARNESS_FAKE_INTERRUPT`, `HARNESS_FAKE_STEER`).
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from appserver_helpers import ANSWER_SCHEMA
from harness_core import (
    AgentRunSpec,
    ApprovalDecision,
    ApprovalRequested,
    BudgetExceededError,
    HarnessEvent,
    Session,
    SessionClosedError,
    SessionSpec,
    UnsupportedFeatureError,
    open_run,
    open_session,
)
from harness_core.plugins import PluginHost
from harness_core.scripted.scenarios import RunCommand, Say, Scenario

from harness_codex_appserver.testing import steps_env, turns_asked, write_fake_codex

pytestmark = pytest.mark.anyio

@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _steps(*steps: Any) -> dict[str, str]:
    return steps_env(Scenario("custom", tuple(steps)))


@asynccontextmanager
async def _session(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost, scenario: str = "say", *,
    env: dict[str, str] | None = None, approver: Any = None, interrupt_timeout: float | None = None, **fields: Any,
) -> AsyncIterator[Session]:
    codex = write_fake_codex(tmp_path, scenario=scenario)
    options: dict[str, Any] = {"codex_bin": str(codex), "codex_home": str(codex_home)}
    if interrupt_timeout is not None:
        options["interrupt_timeout"] = interrupt_timeout
    spec = SessionSpec(cwd=workspace, env=env or {}, provider_options=options, **fields)
    async with open_session(spec, "codex-appserver", host=host, run_log=False, approver=approver) as session:
        yield session


async def _turn(session: Session, prompt: str, **overrides: Any) -> tuple[list[HarnessEvent], Any]:
    with anyio.fail_after(20):
        async with session.turn(prompt, **overrides) as live:
            events = [event async for event in live]
            return events, await live.wait()


async def test_three_turns_on_one_process_and_one_thread(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    async with _session(tmp_path, workspace, codex_home, host) as session:
        pid = session.pid
        played = [await _turn(session, f"prompt {i}") for i in range(3)]
        assert session.pid == pid and pid is not None
    results = [result for _, result in played]
    assert [r.status.value for r in results] == ["success"] * 3
    assert all(r.final_text == "Hello from the scripted model." for r in results)
    started = [next(e for e in events if e.type == "session_started") for events, _ in played]
    assert len({s.session_id for s in started}) == 1 and results[2].session_id == started[0].session_id
    assert [s.resumed for s in started] == [False, True, True]
    assert [r.usage.input_tokens for r in results] == [10, 10, 10]  # each turn's own, not the thread's total
    asked = turns_asked(codex_home)
    assert [a["text"] for a in asked] == ["prompt 0", "prompt 1", "prompt 2"]
    assert session.closed == "closed by its owner"


async def test_a_model_override_is_for_its_turn_only(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    async with _session(tmp_path, workspace, codex_home, host, model="gpt-5.5") as session:
        await _turn(session, "one")
        await _turn(session, "two", model="gpt-other")
        await _turn(session, "three")
    assert [a["model"] for a in turns_asked(codex_home)] == ["gpt-5.5", "gpt-other", "gpt-5.5"]


async def test_without_a_session_model_the_threads_own_model_comes_back(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    async with _session(tmp_path, workspace, codex_home, host) as session:
        await _turn(session, "one", model="gpt-other")
        await _turn(session, "two")
    assert [a["model"] for a in turns_asked(codex_home)] == ["gpt-other", "gpt-5.5"]


async def test_approval_and_sandbox_change_between_turns(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    asked: list[ApprovalRequested] = []

    def approver(request: ApprovalRequested) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.DENY

    (workspace / "notes.txt").write_text("alpha\n")
    async with _session(tmp_path, workspace, codex_home, host, "tools", approver=approver) as session:
        await _turn(session, "one")
        assert asked == []
        _, second = await _turn(session, "two", approval="untrusted", sandbox="read-only")
        assert len(asked) == 4 and second.status.value == "success"
        await _turn(session, "three")
        assert len(asked) == 4
    settings = [(a["approvalPolicy"], a["sandbox"]) for a in turns_asked(codex_home)]
    assert settings == [("never", "workspace-write"), ("untrusted", "read-only"), ("never", "workspace-write")]


async def test_effort_override_and_the_models_default_effort_back(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    async with _session(tmp_path, workspace, codex_home, host) as session:
        await _turn(session, "one")
        await _turn(session, "two", effort="high")
        await _turn(session, "three")
        _, bad = await _turn(session, "four", effort="bogus")
        _, after = await _turn(session, "five")
    assert [a["effort"] for a in turns_asked(codex_home)] == [None, "high", "medium", "medium"]
    assert bad.status.value == "failed" and bad.error.code == "invalid_spec"
    assert "'bogus'" in bad.error.message and "low, medium, high, xhigh" in bad.error.message
    assert after.status.value == "success"


async def test_interrupt_of_turn_two_then_turn_three_succeeds(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    env = _steps(Say("a slow answer " * 4, chunks=4, delay=0.3))
    async with _session(tmp_path, workspace, codex_home, host, env=env) as session:
        _, first = await _turn(session, "one")
        with anyio.fail_after(20):
            async with session.turn("two") as live:
                async for event in live:
                    if event.type == "text_delta":
                        live.interrupt()
                second = await live.wait()
        _, third = await _turn(session, "three")
    assert first.status.value == "success"
    assert second.status.value == "interrupted" and second.error.details.get("stopped_by") == "provider"
    assert third.status.value == "success" and third.final_text == "a slow answer " * 4


async def test_steer_reaches_the_running_turn(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    env = _steps(RunCommand("echo waiting; sleep 1", output="waiting\n"), Say("done"))
    steered: list[bool] = []
    async with _session(tmp_path, workspace, codex_home, host, env=env) as session:
        with anyio.fail_after(20):
            async with session.turn("one") as live:
                async for event in live:
                    if event.type == "tool_use":
                        steered.append(await live.steer("also say goodbye"))
                result = await live.wait()
        assert await live.steer("too late") is False
    assert steered == [True] and result.status.value == "success"
    asked = turns_asked(codex_home)
    assert [(a["method"], a["text"]) for a in asked] == [("turn/start", "one"), ("steer", "also say goodbye")]
    assert asked[1]["turnId"] == asked[0]["turnId"]


async def test_a_steer_answered_after_its_turn_ended_is_accepted_without_a_late_event(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    """The fake accepts the steer but answers only when the next turn/start arrives: by then the steered turn's
    run has returned, and its context refuses events."""
    env = {**_steps(RunCommand("echo waiting; sleep 1", output="waiting\n"), Say("done")), "HARNESS_FAKE_STEER": "late"}
    steered: list[bool] = []
    async with _session(tmp_path, workspace, codex_home, host, env=env) as session:

        async def steer(live: Any) -> None:
            steered.append(await live.steer("also say goodbye"))

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                async with session.turn("one") as live:
                    async for event in live:
                        if event.type == "tool_use":
                            tg.start_soon(steer, live)
                    first = await live.wait()
                assert steered == [], "the fake answered the steer before the next turn/start"
                _, second = await _turn(session, "two")
    assert steered == [True], "Codex accepted the steer: steer() says so, and raises nothing"
    assert first.status.value == "success" and second.status.value == "success"
    asked = turns_asked(codex_home)
    assert [(a["method"], a["text"]) for a in asked] == [("turn/start", "one"), ("steer", "also say goodbye"),
                                                         ("turn/start", "two")]


async def test_an_interrupt_codex_never_confirms_closes_the_session_after_the_turn(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    env = {**_steps(RunCommand("sleep 30", output="")), "HARNESS_FAKE_INTERRUPT": "ignore"}
    async with _session(tmp_path, workspace, codex_home, host, env=env, interrupt_timeout=0.5) as session:
        with anyio.fail_after(20):
            async with session.turn("one") as live:
                events = []
                async for event in live:
                    events.append(event)
                    if event.type == "tool_use":
                        live.interrupt()
                result = await live.wait()
        thread = result.session_id
        assert result.status.value == "interrupted" and result.error.details.get("stopped_by") == "provider"
        assert session.closed is not None and "did not confirm the interrupt within 0.5s" in session.closed
        assert f"--resume {thread}" in session.closed
        notices = [e for e in events if e.type == "notice" and e.code == "interrupt_unconfirmed"]
        assert len(notices) == 1 and notices[0].message == session.closed
        with pytest.raises(SessionClosedError, match="did not confirm the interrupt"):
            await _turn(session, "two")
    assert [a["text"] for a in turns_asked(codex_home)] == ["one"], "a second prompt reached the running turn"


async def test_a_turn_start_answered_with_the_previous_turns_id_is_refused(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    """The fake says the interrupted turn completed but plays on: the next turn/start steers into it and answers
    with its id."""
    env = {**_steps(RunCommand("sleep 30", output="")), "HARNESS_FAKE_INTERRUPT": "early"}
    async with _session(tmp_path, workspace, codex_home, host, env=env) as session:
        with anyio.fail_after(20):
            async with session.turn("one") as live:
                async for event in live:
                    if event.type == "tool_use":
                        live.interrupt()
                first = await live.wait()
        assert first.status.value == "interrupted" and session.closed is None
        _, second = await _turn(session, "two")
        assert second.status.value == "failed" and second.error.code == "protocol_error"
        assert "previous turn's id" in second.error.message and f"--resume {first.session_id}" in second.error.message
        assert session.closed == second.error.message
        with pytest.raises(SessionClosedError, match="previous turn's id"):
            await _turn(session, "three")
    asked = turns_asked(codex_home)
    assert [(a["method"], a["text"]) for a in asked] == [("turn/start", "one"), ("steer", "two")]


async def test_session_started_names_the_model_each_turn_runs_with(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    async with _session(tmp_path, workspace, codex_home, host) as session:
        played = [await _turn(session, "one"), await _turn(session, "two", model="gpt-other"),
                  await _turn(session, "three")]
    models = [next(e for e in events if e.type == "session_started").model for events, _ in played]
    assert models == ["gpt-5.5", "gpt-other", "gpt-5.5"]


async def test_steer_of_a_one_shot_run_is_refused(tmp_path: Path, workspace: Path, codex_home: Path,
                                                  host: PluginHost) -> None:
    codex = write_fake_codex(tmp_path, scenario="say")
    spec = AgentRunSpec(prompt="hi", cwd=workspace, provider_options={"codex_bin": str(codex),
                                                                      "codex_home": str(codex_home)})
    with anyio.fail_after(20):
        async with open_run(spec, "codex-appserver", host=host, run_log=False) as live:
            with pytest.raises(UnsupportedFeatureError, match="steer"):
                await live.steer("left")
            await live.wait()


async def test_structured_output_valid_and_invalid(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    good = _steps(Say('{"answer": 42}'))
    async with _session(tmp_path, workspace, codex_home, host, env=good) as session:
        _, valid = await _turn(session, "json please", output_schema=ANSWER_SCHEMA)
        _, plain = await _turn(session, "no schema")
    assert valid.status.value == "success" and valid.structured_output == {"answer": 42}
    assert plain.status.value == "success" and plain.structured_output is None
    assert [a["outputSchema"] for a in turns_asked(codex_home)] == [ANSWER_SCHEMA, None]

    home = tmp_path / "home2"
    async with _session(tmp_path, workspace, home, host, env=_steps(Say("not json at all"))) as session:
        _, invalid = await _turn(session, "json please", output_schema=ANSWER_SCHEMA)
    assert invalid.status.value == "failed" and invalid.error.code == "invalid_structured_output"


async def test_a_one_shot_run_sends_output_schema_and_effort(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    codex = write_fake_codex(tmp_path)
    spec = AgentRunSpec(prompt="json please", cwd=workspace, env=_steps(Say('{"answer": 7}')), effort="low",
                        output_schema=ANSWER_SCHEMA,
                        provider_options={"codex_bin": str(codex), "codex_home": str(codex_home)})
    with anyio.fail_after(20):
        async with open_run(spec, "codex-appserver", host=host, run_log=False) as live:
            result = await live.wait()
    assert result.status.value == "success" and result.structured_output == {"answer": 7}
    assert [(a["effort"], a["outputSchema"]) for a in turns_asked(codex_home)] == [("low", ANSWER_SCHEMA)]


async def test_max_output_tokens_over_the_session(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    """The fake's model calls write 5 tokens each: a budget of 12 lets the first two turns through (10) and
    stops the third in its only call (15); nothing is left for a fourth."""
    async with _session(tmp_path, workspace, codex_home, host, max_output_tokens=12) as session:
        results = [(await _turn(session, f"turn {i}"))[1] for i in range(3)]
        with pytest.raises(BudgetExceededError):
            await _turn(session, "turn 3")
    assert [r.status.value for r in results] == ["success", "success", "failed"]
    error = results[2].error
    assert error.code == "budget_exceeded" and error.details["budget"] == "max_output_tokens"
    assert error.details["used"] == 15


async def test_process_killed_between_turns(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    async with _session(tmp_path, workspace, codex_home, host) as session:
        _, first = await _turn(session, "one")
        assert first.status.value == "success" and session.pid is not None
        os.kill(session.pid, signal.SIGKILL)
        _, second = await _turn(session, "two")
        assert second.status.value == "failed" and second.error.code == "process_exited"
        assert "SIGKILL" in second.error.message
        assert session.closed is not None and "exited" in session.closed
        with pytest.raises(SessionClosedError):
            await _turn(session, "three")



async def test_usage_after_a_resumed_session_is_the_turns_own(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    async with _session(tmp_path, workspace, codex_home, host, "tools") as session:
        _, first = await _turn(session, "one")
    thread = first.session_id
    async with _session(tmp_path, workspace, codex_home, host, "think", resume_session=thread) as session:
        events, resumed = await _turn(session, "two")
        _, again = await _turn(session, "three")
    assert next(e for e in events if e.type == "session_started").resumed
    assert resumed.session_id == thread == again.session_id
    assert first.usage.input_tokens == 50 and resumed.usage.input_tokens == 10 and again.usage.input_tokens == 10
