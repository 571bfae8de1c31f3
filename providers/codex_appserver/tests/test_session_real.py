"""Live sessions on the real pinned codex app-server, offline against the scripted Responses backend.

The backend replays its scenario for each new user prompt (`replay_each_prompt`), so every turn of a session
gets an answer, and records every model request: what each turn sent (its input, model, effort, output format)
is checked there. Skipped without the real binary (scripts/install-clis.sh); the autouse leak check asserts no
process is left behind.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from appserver_helpers import ANSWER_SCHEMA, MISSING_CODEX, real_codex
from harness_codex_common import offline_setup
from harness_core import (
    ApprovalDecision,
    ApprovalRequested,
    HarnessEvent,
    Session,
    SessionClosedError,
    SessionSpec,
    open_session,
)
from harness_core.offline import SCENARIOS, seed_workspace
from harness_core.plugins import PluginHost
from harness_core.scripted.backends import ResponsesBackend
from harness_core.scripted.scenarios import RunCommand, Say, Scenario, WriteFile

CODEX = real_codex()
pytestmark = [
    pytest.mark.real_cli,
    pytest.mark.anyio,
    pytest.mark.skipif(CODEX is None, reason=MISSING_CODEX),
]

@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def _session(
    scenario: Scenario, workspace: Path, tmp_path: Path, host: PluginHost, *, approver: Any = None, **fields: Any
) -> AsyncIterator[tuple[Session, ResponsesBackend]]:
    assert CODEX is not None
    seed_workspace(scenario, workspace)
    setup = offline_setup(scenario, workspace, tmp_path / "state")
    backend = setup.backend
    assert isinstance(backend, ResponsesBackend)
    backend.replay_each_prompt = True
    spec = SessionSpec(cwd=workspace, env=setup.env,
                       provider_options={**setup.provider_options, "codex_bin": str(CODEX)}, **fields)
    with backend:
        async with open_session(spec, "codex-appserver", host=host, run_log=False, approver=approver) as session:
            yield session, backend


async def _turn(session: Session, prompt: str, **overrides: Any) -> tuple[list[HarnessEvent], Any]:
    with anyio.fail_after(60):
        async with session.turn(prompt, **overrides) as live:
            events = [event async for event in live]
            return events, await live.wait()


def _input_text(body: dict[str, Any]) -> str:
    return json.dumps(body.get("input"))


async def test_three_turns_one_process_context_kept_and_model_back(
    workspace: Path, tmp_path: Path, host: PluginHost
) -> None:
    async with _session(SCENARIOS["say"], workspace, tmp_path, host) as (session, backend):
        pid = session.pid
        played = [await _turn(session, "remember the word pelican")]
        asked = len(backend.requests)
        played.append(await _turn(session, "which word was it?", model="gpt-5.4"))
        turn_two = backend.requests[asked]
        asked = len(backend.requests)
        played.append(await _turn(session, "and once more"))
        turn_three = backend.requests[asked]
        assert session.pid == pid
    first, second, third = (result for _, result in played)
    started = [next(e for e in events if e.type == "session_started") for events, _ in played]
    assert [s.model for s in started] == ["gpt-5.5", "gpt-5.4", "gpt-5.5"]  # the model each turn ran with
    assert [r.status.value for r in (first, second, third)] == ["success"] * 3
    assert first.session_id == second.session_id == third.session_id
    assert "remember the word pelican" in _input_text(turn_two)  # the thread kept turn 1
    assert [backend.requests[0]["model"], turn_two["model"], turn_three["model"]] == ["gpt-5.5", "gpt-5.4", "gpt-5.5"]
    assert 0 < second.usage.output_tokens <= 20 and 0 < third.usage.output_tokens <= 20  # each turn's own


async def test_effort_per_turn_and_the_models_default_back(workspace: Path, tmp_path: Path, host: PluginHost) -> None:
    async with _session(SCENARIOS["say"], workspace, tmp_path, host) as (session, backend):
        await _turn(session, "one", effort="high")
        await _turn(session, "two")
        _, bad = await _turn(session, "three", effort="bogus")
    efforts = [(r.get("reasoning") or {}).get("effort") for r in backend.requests]
    assert efforts == ["high", "medium"]
    assert bad.error.code == "invalid_spec" and "low, medium, high, xhigh" in bad.error.message


async def test_approval_policy_changed_between_turns(workspace: Path, tmp_path: Path, host: PluginHost) -> None:
    asked: list[ApprovalRequested] = []

    def approver(request: ApprovalRequested) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.APPROVE

    async with _session(SCENARIOS["tools"], workspace, tmp_path, host, approver=approver) as (session, _):
        _, first = await _turn(session, "one")
        assert asked == [] and first.status.value == "success"
        (workspace / "notes.txt").write_text("alpha\n")
        _, second = await _turn(session, "two", approval="untrusted")
        assert second.status.value == "success" and asked and asked[0].display.command == "echo harness-ok"
        count = len(asked)
        (workspace / "notes.txt").write_text("alpha\n")
        _, third = await _turn(session, "three")
        assert third.status.value == "success" and len(asked) == count


async def test_read_only_sandbox_for_one_turn(workspace: Path, tmp_path: Path, host: PluginHost) -> None:
    write = Scenario("write", (WriteFile("made.txt", content="made\n"), Say("written")))
    async with _session(write, workspace, tmp_path, host) as (session, _):
        events, _ = await _turn(session, "one", sandbox="read-only")
        refused = [e.display.status.value for e in events if e.type == "tool_result"]
        blocked = not (workspace / "made.txt").exists()
        await _turn(session, "two")
        made = (workspace / "made.txt").read_text() == "made\n"
    assert refused == ["declined"] and blocked and made


async def test_interrupt_of_turn_two_then_turn_three(workspace: Path, tmp_path: Path, host: PluginHost) -> None:
    scenario = Scenario("slowish", (Say("a slow answer " * 6, chunks=6, delay=0.4),))
    async with _session(scenario, workspace, tmp_path, host) as (session, _):
        _, first = await _turn(session, "one")
        with anyio.fail_after(60):
            async with session.turn("two") as live:
                async for event in live:
                    if event.type == "text_delta":
                        live.interrupt()
                second = await live.wait()
        _, third = await _turn(session, "three")
    assert first.status.value == "success"
    assert second.status.value == "interrupted" and second.error.details.get("stopped_by") == "provider"
    assert third.status.value == "success" and third.final_text == "a slow answer " * 6


async def test_steer_during_a_turn(workspace: Path, tmp_path: Path, host: PluginHost) -> None:
    scenario = Scenario("steer", (RunCommand("echo waiting; sleep 2", output="waiting\n"), Say("done")))
    steered: list[bool] = []
    async with _session(scenario, workspace, tmp_path, host) as (session, backend):
        with anyio.fail_after(60):
            async with session.turn("one") as live:
                async for event in live:
                    if event.type == "tool_use" and not steered:
                        steered.append(await live.steer("STEER: also say goodbye"))
                result = await live.wait()
    assert steered == [True] and result.status.value == "success"
    assert "STEER: also say goodbye" not in _input_text(backend.requests[0])
    assert any("STEER: also say goodbye" in _input_text(r) for r in backend.requests[1:])


async def test_structured_output_valid_and_invalid(workspace: Path, tmp_path: Path, host: PluginHost) -> None:
    scenario = Scenario("json", (Say('{"answer": 42}'),))
    async with _session(scenario, workspace, tmp_path, host) as (session, backend):
        _, valid = await _turn(session, "json please", output_schema=ANSWER_SCHEMA)
        _, plain = await _turn(session, "no schema now")
    assert valid.status.value == "success" and valid.structured_output == {"answer": 42}
    formats = [(r.get("text") or {}).get("format") for r in backend.requests]
    assert formats[0] == {"type": "json_schema", "strict": True, "schema": ANSWER_SCHEMA, "name": "codex_output_schema"}
    assert formats[1] is None and plain.structured_output is None  # outputSchema is for its turn only

    other = tmp_path / "other"
    other.mkdir()
    async with _session(SCENARIOS["say"], other, other, host) as (session, _):
        _, invalid = await _turn(session, "json please", output_schema=ANSWER_SCHEMA)
    assert invalid.status.value == "failed" and invalid.error.code == "invalid_structured_output"


async def test_max_output_tokens_stops_the_turn(workspace: Path, tmp_path: Path, host: PluginHost) -> None:
    """The backend's responses write 20 output tokens each; `tools` takes five: a budget of 50 stops it."""
    async with _session(SCENARIOS["tools"], workspace, tmp_path, host, max_output_tokens=50) as (session, _):
        _, result = await _turn(session, "one")
    assert result.status.value == "failed" and result.error.code == "budget_exceeded"
    assert result.error.details["budget"] == "max_output_tokens" and result.error.details["used"] > 50


async def test_process_killed_between_turns(workspace: Path, tmp_path: Path, host: PluginHost) -> None:
    async with _session(SCENARIOS["say"], workspace, tmp_path, host) as (session, _):
        _, first = await _turn(session, "one")
        assert first.status.value == "success" and session.pid is not None
        os.kill(session.pid, signal.SIGKILL)
        _, second = await _turn(session, "two")
        assert second.status.value == "failed" and second.error.code == "process_exited"
        assert session.closed is not None
        with pytest.raises(SessionClosedError):
            await _turn(session, "three")
