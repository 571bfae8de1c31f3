"""The session fixes of the issue-12 review: a turn the runner cut short (over budget, gone silent) closes its live
session while one the provider ended keeps it; an idle timeout interrupts before it stops hard; a close from another
task leaves the turn's stream to its consumer; the caller's cancelled scope does not take the process from under
the turn; a provider session that says its process can no longer be trusted (`broken`) is closed after that turn;
`Session.spec` read-only, `Session.overridable`, a repeat of the session's value is no override; budget
messages that say how to go on.

Layer: tests. Knows the public session API and the provider interface; the helpers are `test_session`'s.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest

import harness_core.testing.scripted as scripted
from harness_core import SessionSpec, open_session
from harness_core.capabilities import ProviderInfo
from harness_core.errors import BudgetExceededError, SessionClosedError, UnsupportedFeatureError
from harness_core.events import (
    ContextUsage,
    Done,
    HarnessEvent,
    HarnessResult,
    RunStarted,
    RunStatus,
    SessionStarted,
    TextDelta,
    Usage,
)
from harness_core.plugins import PluginHost
from harness_core.provider import ProviderSession, RunContext, SessionContext
from harness_core.spec import AgentRunSpec, ApprovalPolicy, SandboxMode
from harness_core.transport import ChildProcess, proctree
from tests.run.test_session import FewOverrides, NotLive, _info, host_with, play_turn, settings

pytestmark = pytest.mark.anyio

_DEADLINE = 20.0
_GRACE = 0.3

# What a `Moody` turn does, by its prompt (any other prompt: answered with itself).
_STOPS_WHEN_ASKED = "go silent; stop when interrupted"
_DEAF = "go silent; ignore the interrupt"
_OVERSPENDS = "write 80 tokens, then ignore the interrupt"
_BREAKS = "answer, then say the process can no longer be trusted"
_BROKEN = "the agent did not confirm an interrupt: continue in a new session with --resume moody-session"


# --- providers ---------------------------------------------------------------------------------------------

class Moody(scripted.ScriptedProvider):
    """A live session whose turns do what their prompt says, noting in `seen` how each silent turn ended."""

    info: ClassVar[ProviderInfo] = _info("moody")
    seen: ClassVar[list[str]] = []

    @asynccontextmanager
    async def open_session(self, spec: Any, options: scripted.ScriptedOptions,
                           ctx: SessionContext) -> AsyncIterator[ProviderSession]:
        yield _MoodySession(self.seen)


class _MoodySession(ProviderSession):
    def __init__(self, seen: list[str]) -> None:
        self._seen = seen

    async def turn(self, spec: AgentRunSpec, ctx: RunContext) -> HarnessResult:
        await ctx.emit(SessionStarted(session_id="moody-session", resumed=False))
        if spec.prompt == _STOPS_WHEN_ASKED:
            with anyio.fail_after(_DEADLINE):
                await ctx.interrupt_requested.wait()
            self._seen.append("ended the turn itself")
            return HarnessResult(status=RunStatus.INTERRUPTED, session_id="moody-session")
        if spec.prompt in (_DEAF, _OVERSPENDS):
            if spec.prompt == _OVERSPENDS:
                await ctx.emit(ContextUsage(usage=Usage(output_tokens=80, cost_usd=0.8)))
            try:
                await anyio.sleep(_DEADLINE)  # deaf: only the runner's hard stop ends this
            finally:
                self._seen.append(f"stopped hard, interrupt asked first: {ctx.interrupt_requested.is_set()}")
            raise AssertionError("the runner never stopped a turn that ignored its interrupt")
        if spec.prompt == _BREAKS:
            self.broken = _BROKEN
        await ctx.emit(TextDelta(text=spec.prompt))
        return HarnessResult(status=RunStatus.SUCCESS, final_text=spec.prompt, session_id="moody-session")


# The agent of `Piped`: streams "chunk" lines after "turn"; after "stop" it takes 0.3 s, then says "stopped"; it
# exits as soon as its input closes (as an agent CLI does).
_AGENT = """
import os, sys, threading, time
stop = threading.Event()
def stream():
    while not stop.wait(0.05):
        print("chunk", flush=True)
    time.sleep(0.3)
    print("stopped", flush=True)
for line in sys.stdin:
    if line.strip() == "turn":
        stop.clear()
        threading.Thread(target=stream, daemon=True).start()
    elif line.strip() == "stop":
        stop.set()
os._exit(0)
"""


class Piped(scripted.ScriptedProvider):
    """A live session on a real child that plays each turn over its stdio, like an agent CLI: the turn is
    interrupted on the wire (and ends when the agent says so); the child gone mid-turn is `process_exited`."""

    info: ClassVar[ProviderInfo] = _info("piped")

    @asynccontextmanager
    async def open_session(self, spec: Any, options: scripted.ScriptedOptions,
                           ctx: SessionContext) -> AsyncIterator[ProviderSession]:
        async with ctx.spawn([sys.executable, "-c", _AGENT], term_timeout=1.0, kill_timeout=1.0) as child:
            yield _PipedSession(child)


class _PipedSession(ProviderSession):
    def __init__(self, child: ChildProcess) -> None:
        self._child = child

    async def turn(self, spec: AgentRunSpec, ctx: RunContext) -> HarnessResult:
        await ctx.emit(SessionStarted(session_id="piped-session", resumed=False))
        await self._child.send_line("turn")
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._stop_when_interrupted, ctx)
            async for line in self._child.lines():
                if line == b"chunk":
                    await ctx.emit(TextDelta(text="."))
                elif line == b"stopped":
                    tg.cancel_scope.cancel()
                    return HarnessResult(status=RunStatus.INTERRUPTED, session_id="piped-session")
            raise self._child.exit_error("the agent exited during the turn")
        raise AssertionError("unreachable: the turn ends in its loop")  # pragma: no cover

    async def _stop_when_interrupted(self, ctx: RunContext) -> None:
        await ctx.interrupt_requested.wait()
        await self._child.send_line("stop")


@pytest.fixture
def moody() -> PluginHost:
    Moody.seen.clear()
    return host_with(Moody)


# --- 1, 2: a turn the runner cut short closes the live session; one the provider ended keeps it -------------

async def test_a_turn_over_budget_that_ignores_the_interrupt_closes_the_session(moody: PluginHost,
                                                                                 runs_dir: Path) -> None:
    async with open_session(settings(max_output_tokens=50), "moody", host=moody, runs_dir=runs_dir,
                            interrupt_grace=_GRACE) as session:
        _, live = await play_turn(session, _OVERSPENDS)
        result = live.result
        assert result.status is RunStatus.FAILED and result.error is not None
        assert result.error.code == "budget_exceeded", result.error
        assert Moody.seen == ["stopped hard, interrupt asked first: True"], "interrupted, then stopped after the grace"
        assert session.closed is not None and "stopped hard" in session.closed, (
            "the agent may still be playing a turn the runner stopped hard: the session must not send it another")
        with pytest.raises(SessionClosedError, match="stopped hard"):
            await session.run("answer")
        assert session.turns == 1


async def test_an_idle_turn_the_provider_stops_when_interrupted_leaves_the_session_usable(moody: PluginHost,
                                                                                            runs_dir: Path) -> None:
    async with open_session(settings(idle_timeout=0.3), "moody", host=moody, runs_dir=runs_dir,
                            interrupt_grace=_DEADLINE) as session:
        _, silent = await play_turn(session, _STOPS_WHEN_ASKED)
        assert Moody.seen == ["ended the turn itself"], "an idle live turn is interrupted first, not stopped hard"
        assert silent.result.status is RunStatus.FAILED and silent.result.error is not None
        assert silent.result.error.code == "idle_timeout", silent.result.error
        assert session.closed is None, f"a turn its provider ended closed the session: {session.closed}"
        after = await session.run("answer")
    assert after.status is RunStatus.SUCCESS and after.final_text == "answer"


async def test_an_idle_turn_that_ignores_the_interrupt_is_stopped_hard_and_closes_the_session(
        moody: PluginHost, runs_dir: Path) -> None:
    async with open_session(settings(idle_timeout=0.3), "moody", host=moody, runs_dir=runs_dir,
                            interrupt_grace=_GRACE) as session:
        _, silent = await play_turn(session, _DEAF)
        assert Moody.seen == ["stopped hard, interrupt asked first: True"]
        assert silent.result.status is RunStatus.FAILED and silent.result.error is not None
        assert silent.result.error.code == "idle_timeout", silent.result.error
        assert session.closed is not None and "went silent" in session.closed, session.closed
        with pytest.raises(SessionClosedError, match="went silent"):
            await session.run("answer")


async def test_a_provider_session_that_breaks_during_a_turn_closes_after_it(moody: PluginHost,
                                                                            runs_dir: Path) -> None:
    async with open_session(settings(), "moody", host=moody, runs_dir=runs_dir) as session:
        first = await session.run("answer")
        assert session.closed is None
        events, broke = await play_turn(session, _BREAKS)
        result = broke.result
        assert result.status is RunStatus.SUCCESS and result.final_text == _BREAKS, "the turn's own result is kept"
        assert sum(isinstance(e, Done) for e in events) == 1
        assert session.closed == _BROKEN, session.closed
        with pytest.raises(SessionClosedError, match="did not confirm an interrupt") as refused:
            await session.run("answer")
        assert refused.value.details.get("reason") == _BROKEN
        assert session.turns == 2
    assert first.status is RunStatus.SUCCESS


# --- 3, 4: closing and cancelling while a turn plays ---------------------------------------------------------

async def test_a_close_from_another_task_leaves_a_slow_consumer_every_event(host: PluginHost, runs_dir: Path) -> None:
    events: list[HarnessEvent] = []
    closed = anyio.Event()
    async with open_session(settings("slow_text"), "scripted", host=host, runs_dir=runs_dir) as session:

        async def close() -> None:
            await session.aclose()
            assert live.finished.is_set(), "the close returned before the turn ended"
            closed.set()

        with anyio.fail_after(_DEADLINE):
            async with anyio.create_task_group() as tg, session.turn("slow") as live:
                async for event in live:
                    events.append(event)
                    if len(events) == 3:  # run_started, session_started, the first text_delta
                        tg.start_soon(close)
                        await closed.wait()  # the consumer reads on only once the close is over
    held = 3
    assert closed.is_set() and len(events) > held, "nothing reached the consumer after the close"
    assert isinstance(events[-1], Done) and sum(isinstance(e, Done) for e in events) == 1, (
        f"the consumer did not read the turn to its done: {[e.type for e in events[held:]]}")
    assert events[-1].result.status is RunStatus.INTERRUPTED


async def test_cancelling_the_callers_scope_interrupts_the_turn_before_the_process_goes(runs_dir: Path) -> None:
    host = host_with(Piped)
    entry = None
    with anyio.fail_after(_DEADLINE), anyio.CancelScope() as scope:
        async with open_session(settings(), "piped", host=host, runs_dir=runs_dir) as session:
            entry = next(e for e in proctree.descendants(os.getpid()) if e[0] == session.pid)
            async with session.turn("stream") as live:
                async for event in live:
                    if event.type == "text_delta":
                        scope.cancel()  # the owner gives up mid-turn
    assert scope.cancelled_caught
    result = live.result
    assert result is not None and result.status is RunStatus.INTERRUPTED, result
    error = result.error
    assert error is not None and error.code == "interrupted" and error.details.get("stopped_by") == "provider", (
        f"the caller's cancelled scope took the process from under the turn before it was interrupted: {error}")
    assert entry is not None and not proctree.alive([entry]), "the session's process outlived the session"


# --- 5: the session's surface --------------------------------------------------------------------------------

async def test_the_sessions_spec_is_read_only_and_says_what_a_turn_may_override(runs_dir: Path) -> None:
    host = host_with(FewOverrides, NotLive)
    async with open_session(settings(), "few-overrides", host=host, runs_dir=runs_dir) as session:
        with pytest.raises(AttributeError):
            session.spec = SessionSpec(model="swapped")  # type: ignore[misc]
        assert session.spec.model is None
        assert session.overridable == frozenset({"model"})
    async with open_session(settings(), "not-live", host=host, runs_dir=runs_dir) as session:
        assert session.overridable == frozenset({"model", "approval", "sandbox", "effort", "output_schema"})


@pytest.mark.parametrize("same", [{"sandbox": "read-only"}, {"sandbox": SandboxMode.READ_ONLY},
                                  {"approval": ApprovalPolicy.NEVER}, {"model": "m", "sandbox": "read-only"}])
async def test_repeating_the_sessions_own_value_is_no_override(same: dict[str, Any], runs_dir: Path) -> None:
    spec = settings(sandbox="read-only", approval="never")
    async with open_session(spec, "few-overrides", host=host_with(FewOverrides), runs_dir=runs_dir) as session:
        events, live = await play_turn(session, "same as the session", **same)
        assert live.result.status is RunStatus.SUCCESS, live.result.error
        started = events[0]
        assert isinstance(started, RunStarted) and started.spec["sandbox"] == "read-only"
        with pytest.raises(UnsupportedFeatureError, match="per-turn sandbox"):
            await session.run("a real change", sandbox="workspace-write")


async def test_budget_messages_say_how_to_go_on(host: PluginHost, runs_dir: Path) -> None:
    spec = settings(max_cost_usd=0.5, options={"cost_usd": 0.3})
    async with open_session(spec, "scripted", host=host, runs_dir=runs_dir) as session:
        under, over = await session.run("one"), await session.run("two")
        with pytest.raises(BudgetExceededError) as refused:
            await session.run("three")
    assert under.status is RunStatus.SUCCESS and over.error is not None
    during = over.error.message
    assert "this turn was stopped" in during and "no turn was started" not in during, during
    before = str(refused.value)
    assert "has used its whole budget" in before and "no turn was started" in before, before
    for message in (during, before):
        assert "max_cost_usd = 0.5" in message and "used 0.6" in message, message
        assert "new session" in message and "resume_session=" in message and "--resume" in message, message
        assert "--max-cost-usd" in message, message
    one_shot = BudgetExceededError("max_output_tokens", 10, 20)
    assert "the run went over its budget" in str(one_shot) and "--max-output-tokens" in str(one_shot)
