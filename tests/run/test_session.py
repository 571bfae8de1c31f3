"""Sessions (`open_session`): several turns, each a run of its own, one at a time, with per-turn overrides, on
the in-process scripted provider and small variations of it (defined here, used by the other session tests).

Layer: tests. Knows the public session API and the provider interface.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest

import harness_core.testing.scripted as scripted
from harness_core import SessionSpec, open_session
from harness_core.capabilities import Capability, ProviderInfo
from harness_core.errors import (
    CliNotFoundError,
    InvalidSpecError,
    ProcessExitedError,
    SessionBusyError,
    UnsupportedFeatureError,
)
from harness_core.events import Done, HarnessEvent, HarnessResult, RunStarted, RunStatus, SessionStarted, TextDelta
from harness_core.hookspecs import hookimpl
from harness_core.plugins import PluginHost
from harness_core.provider import ProviderSession, RunContext, SessionContext
from harness_core.spec import AgentRunSpec
from harness_core.store import read_events

pytestmark = pytest.mark.anyio

_ALL = frozenset(Capability)
_DEADLINE = 20.0


# --- providers: the scripted one with one property changed -------------------------------------------------

def _info(name: str, capabilities: frozenset[Capability] = _ALL, **fields: Any) -> ProviderInfo:
    return ProviderInfo(name=name, version="1", capabilities=capabilities, **fields)


class Echo(scripted.ScriptedProvider):
    """Answers each turn with its prompt (a test chooses the final answer), live sessions included."""

    info: ClassVar[ProviderInfo] = _info("echo")

    async def run(self, spec: AgentRunSpec, options: scripted.ScriptedOptions, ctx: RunContext) -> HarnessResult:
        session = spec.resume_session or f"echo-{ctx.run_id}"
        await ctx.emit(SessionStarted(session_id=session, resumed=spec.resume_session is not None))
        await ctx.emit(TextDelta(text=spec.prompt))
        return HarnessResult(status=RunStatus.SUCCESS, final_text=spec.prompt, session_id=session)


class NotLive(scripted.ScriptedProvider):
    """`session` without `live_session`: each turn is a run resuming the previous turn's session."""

    info: ClassVar[ProviderInfo] = _info("not-live", _ALL - {Capability.LIVE_SESSION, Capability.STEER})


class FewOverrides(scripted.ScriptedProvider):
    """A live provider that can change only the model between turns."""

    info: ClassVar[ProviderInfo] = _info("few-overrides", session_overrides=frozenset({"model"}))


class Limited(scripted.ScriptedProvider):
    """Live sessions and nothing else (no structured output, no effort, no cost, no approvals)."""

    info: ClassVar[ProviderInfo] = _info("limited", frozenset({Capability.SESSION, Capability.LIVE_SESSION}))


class WontStart(scripted.ScriptedProvider):
    """Its live session's process cannot start: `open_session` raises before it yields."""

    info: ClassVar[ProviderInfo] = _info("wont-start")

    @asynccontextmanager
    async def open_session(self, spec: Any, options: scripted.ScriptedOptions,
                           ctx: SessionContext) -> AsyncIterator[ProviderSession]:
        raise CliNotFoundError("the agent CLI 'wont-start' is not installed; install it or set wont_start_bin")
        yield  # pragma: no cover - makes this an async generator


class _DyingSession(ProviderSession):
    def __init__(self, inner: ProviderSession) -> None:
        self._inner = inner
        self.turns = 0

    async def turn(self, spec: AgentRunSpec, ctx: RunContext) -> HarnessResult:
        self.turns += 1
        if self.turns == 2:
            raise ProcessExitedError("the agent exited during the turn (killed by signal 9)", exit_code=-9)
        return await self._inner.turn(spec, ctx)


class Dies(scripted.ScriptedProvider):
    """A live session whose process exits during its second turn."""

    info: ClassVar[ProviderInfo] = _info("dies")

    @asynccontextmanager
    async def open_session(self, spec: Any, options: scripted.ScriptedOptions,
                           ctx: SessionContext) -> AsyncIterator[ProviderSession]:
        async with super().open_session(spec, options, ctx) as inner:
            yield _DyingSession(inner)


class _ChildSession(ProviderSession):
    def __init__(self, provider: scripted.ScriptedProvider, options: scripted.ScriptedOptions) -> None:
        self._provider = provider
        self._options = options

    async def turn(self, spec: AgentRunSpec, ctx: RunContext) -> HarnessResult:
        return await self._provider.run(spec, self._options, ctx)


class Spawning(scripted.ScriptedProvider):
    """A live session that keeps a real child (a Python reading its stdin to EOF) for all its turns."""

    info: ClassVar[ProviderInfo] = _info("spawning")

    @asynccontextmanager
    async def open_session(self, spec: Any, options: scripted.ScriptedOptions,
                           ctx: SessionContext) -> AsyncIterator[ProviderSession]:
        argv = [sys.executable, "-c", "import sys; sys.stdin.read()"]
        async with ctx.spawn(argv, term_timeout=1.0, kill_timeout=1.0):  # shut down (bounded) when the block exits
            yield _ChildSession(self, options)


def host_with(*providers: type[scripted.ScriptedProvider]) -> PluginHost:
    """A host with the scripted provider and `providers`, each under its `info.name`."""

    class Plugin:
        @hookimpl
        def harness_register_providers(self, register: Callable[[type[Any]], None]) -> None:
            for cls in providers:
                register(cls)

    return PluginHost.create(entry_points=False, plugins=[("scripted", scripted), ("session-tests", Plugin())])


def settings(scenario: str = "say", **fields: Any) -> SessionSpec:
    options = {"scenario": scenario, **fields.pop("options", {})}
    return SessionSpec(provider_options=options, **fields)


async def play_turn(session: Any, prompt: str, **overrides: Any) -> tuple[list[HarnessEvent], Any]:
    """One turn played to the end: (its events, its LiveRun)."""
    with anyio.fail_after(_DEADLINE):
        async with session.turn(prompt, **overrides) as live:
            events = [event async for event in live]
    return events, live


# --- turns -------------------------------------------------------------------------------------------------

async def test_three_turns_are_three_runs_of_one_session(host: PluginHost, runs_dir: Path) -> None:
    async with open_session(settings(), "scripted", host=host, runs_dir=runs_dir) as session:
        played = [await play_turn(session, f"turn {i}") for i in range(3)]
        assert session.turns == 3 and session.closed is None
    runs = [live for _, live in played]
    assert len({live.run_id for live in runs}) == 3 and len({live.log_path for live in runs}) == 3
    for index, (events, live) in enumerate(played):
        started = events[0]
        assert isinstance(started, RunStarted) and started.session_turn is not None
        assert (started.session_turn.session, started.session_turn.index) == (session.session_id, index)
        assert started.session_turn.live is True
        assert sum(isinstance(e, Done) for e in events) == 1 and isinstance(events[-1], Done)
        assert list(read_events(live.log_path)) == events, "each turn's run log holds exactly its events"
        assert live.result.status is RunStatus.SUCCESS, live.result.error
    ids = {live.result.session_id for live in runs}
    assert ids == {session.provider_session_id} and None not in ids, "one provider session for all turns"
    assert session.usage.output_tokens == sum(live.result.usage.output_tokens for live in runs) == 60
    assert session.closed == "closed by its owner"


async def test_run_plays_a_turn_to_its_result(host: PluginHost, runs_dir: Path) -> None:
    async with open_session(settings(), "scripted", host=host, runs_dir=runs_dir) as session:
        first = await session.run("one")
        second = await session.run("two")
    assert first.final_text == second.final_text == "Hello from the scripted model."
    assert first.run_id != second.run_id and first.session_id == second.session_id


async def test_a_second_turn_while_one_is_live_is_refused_not_queued(host: PluginHost, runs_dir: Path) -> None:
    async with open_session(settings("slow_text"), "scripted", host=host, runs_dir=runs_dir) as session:
        with anyio.fail_after(_DEADLINE):
            async with session.turn("slow one") as live:
                async for event in live:
                    if event.type == "text_delta":
                        with pytest.raises(SessionBusyError, match="one at a time"):
                            async with session.turn("too early"):
                                pytest.fail("a second turn started while the first was live")
                        live.interrupt()
        assert live.result.status is RunStatus.INTERRUPTED
        assert session.turns == 1, "the refused turn is not counted"
        with anyio.fail_after(_DEADLINE):
            async with session.turn("after it") as live:
                async for _ in live:
                    live.interrupt()
        assert live.session_turn is not None and live.session_turn.index == 1


async def test_overrides_apply_to_their_turn_only(host: PluginHost, runs_dir: Path) -> None:
    spec = settings(model="base-model", sandbox="workspace-write")
    async with open_session(spec, "scripted", host=host, runs_dir=runs_dir) as session:
        first, _ = await play_turn(session, "one")
        second, _ = await play_turn(session, "two", model="turn-model", sandbox="read-only", effort="high")
        third, _ = await play_turn(session, "three")
    shown = [(e[0].spec["model"], e[0].spec["sandbox"], e[0].spec["effort"]) for e in (first, second, third)]
    assert shown == [("base-model", "workspace-write", None), ("turn-model", "read-only", "high"),
                     ("base-model", "workspace-write", None)]


async def test_an_override_the_live_provider_cannot_change_is_refused_naming_who_can(runs_dir: Path) -> None:
    class Frozen(scripted.ScriptedProvider):
        info: ClassVar[ProviderInfo] = _info("frozen", session_overrides=frozenset())

    host = host_with(FewOverrides, Frozen, NotLive)
    async with open_session(settings(), "few-overrides", host=host, runs_dir=runs_dir) as session:
        assert (await session.run("one", model="other-model")).status is RunStatus.SUCCESS
        with pytest.raises(UnsupportedFeatureError) as caught:
            await session.run("two", sandbox="read-only")
        assert session.turns == 1, "the refused turn never started"
    message = str(caught.value)
    assert "'few-overrides'" in message and "per-turn sandbox" in message
    assert "scripted" in message and "not-live" in message, "the providers that can change it are named"
    assert "frozen" not in message, "a live provider that keeps the sandbox for the session cannot"
    assert len(list(runs_dir.glob("*.jsonl"))) == 1, "no run log for a refused turn"  # noqa: ASYNC240


async def test_a_turn_needing_a_capability_the_provider_lacks_is_refused_before_it_starts(runs_dir: Path) -> None:
    host = host_with(Limited)
    async with open_session(settings(), "limited", host=host, runs_dir=runs_dir) as session:
        with pytest.raises(UnsupportedFeatureError) as caught:
            await session.run("answer in JSON", output_schema={"type": "object"})
        with pytest.raises(UnsupportedFeatureError, match="'effort'"):
            await session.run("think hard", effort="high")
        assert session.turns == 0 and session.closed is None
        assert (await session.run("plain")).status is RunStatus.SUCCESS, "the session still plays turns"
    assert "'structured_output'" in str(caught.value) and "scripted" in str(caught.value)


async def test_an_invalid_turn_is_refused_before_it_starts(host: PluginHost, runs_dir: Path) -> None:
    async with open_session(settings(), "scripted", host=host, runs_dir=runs_dir) as session:
        with pytest.raises(InvalidSpecError, match="prompt"):
            await session.run("   ")
        with pytest.raises(InvalidSpecError, match="JSON Schema"):
            await session.run("x", output_schema={"type": "no-such-type"})
        assert session.turns == 0


async def test_a_provider_without_sessions_is_refused(runs_dir: Path) -> None:
    class NoSessions(scripted.ScriptedProvider):
        info: ClassVar[ProviderInfo] = _info("no-sessions", frozenset({Capability.STREAMING}))

    with pytest.raises(UnsupportedFeatureError) as caught:
        async with open_session(settings(), "no-sessions", host=host_with(NoSessions), runs_dir=runs_dir):
            pytest.fail("a session opened on a provider without `session`")
    assert "'no-sessions'" in str(caught.value) and "scripted" in str(caught.value)


async def test_a_non_live_session_resumes_the_previous_turns_session(runs_dir: Path) -> None:
    host = host_with(NotLive)
    async with open_session(settings(), "not-live", host=host, runs_dir=runs_dir) as session:
        assert session.live is False and session.pid is None
        played = [await play_turn(session, f"turn {i}") for i in range(3)]
    first_session = played[0][1].result.session_id
    assert first_session
    resumed = [events[0].spec["resume_session"] for events, _ in played]
    assert resumed == [None, first_session, first_session]
    assert [events[0].session_turn.live for events, _ in played] == [False] * 3
    assert all(live.result.session_id == first_session for _, live in played)


async def test_a_session_can_continue_a_provider_session(host: PluginHost, runs_dir: Path) -> None:
    async with open_session(settings(), "scripted", host=host, runs_dir=runs_dir) as session:
        earlier = await session.run("one")
    async with open_session(settings(resume_session=earlier.session_id), "scripted", host=host,
                            runs_dir=runs_dir) as session:
        assert session.provider_session_id == earlier.session_id
        later = await session.run("two")
    assert later.session_id == earlier.session_id
