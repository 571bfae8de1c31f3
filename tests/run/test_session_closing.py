"""How a session ends: closed by its owner (a live turn interrupted, bounded), by the caller's own exception,
by its agent process (it would not start, it exited during a turn), and what is left behind (nothing).

Layer: tests. Knows the public session API; the providers are `test_session`'s.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
import pytest

from harness_core import open_session
from harness_core.errors import CliNotFoundError, SessionClosedError
from harness_core.events import Done, RunStatus
from harness_core.plugins import PluginHost
from harness_core.store import read_events
from harness_core.transport import proctree
from tests.run.test_session import Dies, Spawning, WontStart, host_with, play_turn, settings

pytestmark = pytest.mark.anyio

_DEADLINE = 20.0


class _Boom(Exception):
    pass


async def test_the_callers_exception_in_a_turn_propagates_unchanged_and_the_session_closes(
        host: PluginHost, runs_dir: Path) -> None:
    raised = _Boom("the caller's own failure")
    seen = None
    with anyio.fail_after(_DEADLINE), pytest.raises(_Boom) as caught:
        async with open_session(settings("slow_text"), "scripted", host=host, runs_dir=runs_dir) as session:
            seen = session
            async with session.turn("slow") as live:
                async for event in live:
                    if event.type == "text_delta":
                        raise raised
    assert caught.value is raised, "the caller's exception, not a group wrapping it"
    assert seen is not None and seen.closed is not None
    assert live.result is not None and live.result.status is RunStatus.INTERRUPTED
    logged = list(read_events(live.log_path))
    assert isinstance(logged[-1], Done), "the interrupted turn's log still ends with done"


async def test_closing_the_session_interrupts_its_live_turn(host: PluginHost, runs_dir: Path) -> None:
    started = time.monotonic()
    with anyio.fail_after(_DEADLINE):
        async with open_session(settings("slow_text"), "scripted", host=host, runs_dir=runs_dir) as session:
            seen = []
            async with anyio.create_task_group() as tg, session.turn("slow") as live:
                async for event in live:
                    seen.append(event.type)
                    if event.type == "text_delta" and seen.count("text_delta") == 1:
                        tg.start_soon(session.aclose)  # from another task, while the turn streams
                result = await live.wait()
            assert seen[-1] == "done", "the turn's consumer still reads it to its end"
            assert session.closed == "closed by its owner"
            with pytest.raises(SessionClosedError, match="closed by its owner"):
                await session.run("after the close")
    assert result.status is RunStatus.INTERRUPTED
    assert result.error is not None and result.error.details.get("stopped_by") == "provider"
    assert time.monotonic() - started < 10, "slow_text plays for 40 s: the close did not stop it"


async def test_a_cancelled_session_stops_a_turn_that_ignores_the_interrupt(host: PluginHost, runs_dir: Path) -> None:
    spec = settings("slow_text", options={"ignore_interrupt": True})
    with anyio.fail_after(_DEADLINE), anyio.move_on_after(2.0):  # the owner's scope is cancelled mid-turn
        async with (open_session(spec, "scripted", host=host, runs_dir=runs_dir, interrupt_grace=0.2) as session,
                    session.turn("slow") as live):
            async for _ in live:
                pass
    assert live.result is not None and live.result.status is RunStatus.INTERRUPTED
    assert live.result.error is not None and live.result.error.details.get("stopped_by") == "runner"
    assert session.closed is not None


async def test_a_turn_stopped_hard_closes_the_live_session(host: PluginHost, runs_dir: Path) -> None:
    spec = settings("slow_text", options={"ignore_interrupt": True})
    async with open_session(spec, "scripted", host=host, runs_dir=runs_dir, interrupt_grace=0.2) as session:
        with anyio.fail_after(_DEADLINE):
            async with session.turn("slow") as live:
                async for event in live:
                    if event.type == "text_delta":
                        live.interrupt()
        assert live.result.error is not None and live.result.error.details.get("stopped_by") == "runner"
        assert session.closed is not None and "stopped hard" in session.closed
        with pytest.raises(SessionClosedError, match="stopped hard"):
            await session.run("next")


async def test_a_process_that_will_not_start_raises_its_own_error(runs_dir: Path) -> None:
    with pytest.raises(CliNotFoundError, match="install it"):
        async with open_session(settings(), "wont-start", host=host_with(WontStart), runs_dir=runs_dir):
            pytest.fail("the session opened although its process did not start")
    assert not runs_dir.exists() or not any(runs_dir.iterdir()), "no turn ran"  # noqa: ASYNC240


async def test_a_process_that_exits_during_a_turn_closes_the_session(runs_dir: Path) -> None:
    async with open_session(settings(), "dies", host=host_with(Dies), runs_dir=runs_dir) as session:
        _, first = await play_turn(session, "one")
        assert first.result.status is RunStatus.SUCCESS and session.closed is None
        _, second = await play_turn(session, "two")
        assert second.result.status is RunStatus.FAILED
        assert second.result.error is not None and second.result.error.code == "process_exited"
        assert session.closed is not None and "exited" in session.closed
        with pytest.raises(SessionClosedError) as caught:
            await session.run("three")
        assert session.turns == 2
    message = str(caught.value)
    assert first.result.session_id and f"--resume {first.result.session_id}" in message, (
        "the error says how to continue the conversation")


async def test_a_live_session_keeps_one_process_and_leaves_none_behind(runs_dir: Path) -> None:
    async with open_session(settings(), "spawning", host=host_with(Spawning), runs_dir=runs_dir) as session:
        pid = session.pid
        assert pid is not None and pid != os.getpid()
        entry = next(e for e in proctree.descendants(os.getpid()) if e[0] == pid)
        for prompt in ("one", "two", "three"):
            _, live = await play_turn(session, prompt)
            assert live.result.status is RunStatus.SUCCESS
            assert session.pid == pid and proctree.alive([entry]), "the same process plays every turn"
    assert not proctree.alive([entry]), "closing the session shut its process down"
