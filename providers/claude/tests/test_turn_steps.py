"""`turn.Turn` on a stub child, line by line (asyncio and trio): where a steer may go and where a turn ends.

Sequences as observed with the real 2.1.328 (tests/test_session_real.py plays them end to end): a steer taken
after the last model call plays as a queued turn (`queued`, the turn's `result`, `started`, a new `init` and its
own `result`), one taken earlier is injected (`queued`, `started`, `completed`, then the one `result`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.streams.memory import MemoryObjectSendStream
from harness_core import AgentRunSpec, HarnessEvent, HarnessResult
from harness_core._logging import get_logger

from harness_claude.mapping import ClaudeMapper
from harness_claude.options import ClaudeOptions
from harness_claude.turn import Turn

pytestmark = pytest.mark.anyio

SID = "5f0c7a52-4a3e-4c38-9d1e-0a6f0c1d2e3f"


class StubChild:
    """What `Turn` uses of a `ChildProcess`: the lines it was sent."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.wrote = anyio.Event()

    async def send_line(self, text: str) -> None:
        self.sent.append(json.loads(text))
        self.wrote.set()
        self.wrote = anyio.Event()

    async def close_stdin(self) -> None:
        pass

    async def wait(self) -> int:
        return 0

    def exit_error(self, what: str) -> Exception:
        return RuntimeError(what)

    def users(self) -> list[dict[str, Any]]:
        return [m for m in self.sent if m["type"] == "user"]


class StubContext:
    """What `Turn` uses of a `RunContext`; `on_emit` sees each event as the reader emits it."""

    def __init__(self) -> None:
        self.events: list[HarnessEvent] = []
        self.interrupt_requested = anyio.Event()
        self.log = get_logger("test.turn")
        self.on_emit: Callable[[HarnessEvent], Awaitable[None]] | None = None

    async def emit(self, event: HarnessEvent) -> None:
        pending = self.emit_now(event)
        if pending is not None:
            await pending

    def emit_now(self, event: HarnessEvent) -> Awaitable[None] | None:
        self.events.append(event)
        return self.on_emit(event) if self.on_emit is not None else None


def init() -> dict[str, Any]:
    return {"type": "system", "subtype": "init", "session_id": SID, "model": "claude-sonnet-4-5", "tools": []}


def assistant(text: str) -> dict[str, Any]:
    message = {"id": f"msg_{text}", "role": "assistant", "content": [{"type": "text", "text": text}]}
    return {"type": "assistant", "session_id": SID, "message": message}


def result(text: str, cost: float) -> dict[str, Any]:
    return {"type": "result", "subtype": "success", "is_error": False, "result": text, "session_id": SID,
            "usage": {"input_tokens": 10, "output_tokens": 5}, "total_cost_usd": cost,
            "model_usage_since_last_result": {"claude-sonnet-4-5": {"outputTokens": 5, "inputTokens": 10,
                                                                    "costUSD": 0.001}}}


def lifecycle(command: str, state: str) -> dict[str, Any]:
    return {"type": "command_lifecycle", "command_uuid": command, "state": state}


def make_turn(tmp_path: Path) -> tuple[Turn, StubChild, StubContext]:
    child, ctx = StubChild(), StubContext()
    spec = AgentRunSpec(prompt="go", cwd=tmp_path)
    turn = Turn(spec, ClaudeOptions(), ctx, child, mapper=ClaudeMapper(str(tmp_path)), one_shot=False)  # type: ignore[arg-type]
    return turn, child, ctx


async def lines() -> tuple[MemoryObjectSendStream[dict[str, Any]], AsyncIterator[list[dict[str, Any]]]]:
    """What the test sends, line by line, and the turn's side of it: each line a batch of its own."""
    send, receive = anyio.create_memory_object_stream[dict[str, Any]](100)

    async def batches() -> AsyncIterator[list[dict[str, Any]]]:
        async for msg in receive:
            yield [msg]

    return send, batches()


async def until(check: Callable[[], bool]) -> None:
    with anyio.fail_after(5):
        while not check():  # noqa: ASYNC110 - polls state the turn keeps without an event for it
            await anyio.sleep(0.01)


async def test_a_steer_landing_as_the_turn_ends_is_not_sent(tmp_path: Path) -> None:
    """A steer that arrives while the turn's `result` is being emitted finds the turn over: nothing is written
    (a user message then would play as a turn nobody reads, its lines landing in the next Harness turn)."""
    turn, child, ctx = make_turn(tmp_path)
    send, messages = await lines()
    steered: list[bool] = []
    outcome: list[HarnessResult] = []
    async with anyio.create_task_group() as tg:

        async def steer_at_result(event: HarnessEvent) -> None:
            if event.type == "context_usage" and not steered:
                steered.append(False)
                tg.start_soon(lambda: _steer_into(turn, steered))

        ctx.on_emit = steer_at_result

        async def play() -> None:
            outcome.append(await turn.play(messages))

        tg.start_soon(play)
        await until(lambda: bool(child.users()))
        for msg in (init(), assistant("hi"), result("hi", 0.001)):
            await send.send(msg)
    assert steered == [False, False] and [u.get("uuid") for u in child.users()] == [None]
    assert outcome[0].final_text == "hi"


async def _steer_into(turn: Turn, into: list[bool]) -> None:
    into.append(await turn.steer("too late"))


async def test_a_steer_during_the_control_requests_waits_for_the_prompt(tmp_path: Path) -> None:
    turn, child, _ = make_turn(tmp_path)
    send, messages = await lines()
    steered: list[bool] = []
    async with anyio.create_task_group() as tg:

        async def play() -> None:
            await turn.play(messages, prelude=[{"subtype": "set_model", "model": "claude-haiku-4-5"}])

        tg.start_soon(play)
        await until(lambda: bool(child.sent))
        tg.start_soon(_steer_into, turn, steered)
        await anyio.sleep(0.1)
        assert not child.users()  # the steer did not become the prompt
        request = child.sent[0]
        await send.send({"type": "control_response", "response": {
            "subtype": "success", "request_id": request["request_id"], "response": {"model": "claude-haiku-4-5"}}})
        await until(lambda: len(child.users()) == 2)
        command = child.users()[1]["uuid"]
        for msg in (lifecycle(command, "queued"), init(), lifecycle(command, "started"),
                    lifecycle(command, "completed"), assistant("ok"), result("ok", 0.001)):
            await send.send(msg)
    assert steered == [True]
    assert [u["message"]["content"] for u in child.users()] == ["go", "too late"]


async def test_a_late_steer_keeps_its_queued_turn_in_the_steered_turn(tmp_path: Path) -> None:
    """The real sequence of a steer taken after the last model call: the turn ends at the queued turn's
    `result`, not at the new `init` after `started` (the next Harness turn would get the queued turn's result)."""
    turn, child, ctx = make_turn(tmp_path)
    send, messages = await lines()
    outcome: list[HarnessResult] = []
    steered: list[bool] = []
    async with anyio.create_task_group() as tg:

        async def play() -> None:
            outcome.append(await turn.play(messages))

        tg.start_soon(play)
        await until(lambda: bool(child.users()))
        await send.send(init())
        tg.start_soon(_steer_into, turn, steered)
        await until(lambda: len(child.users()) == 2)
        command = child.users()[1]["uuid"]
        for msg in (lifecycle(command, "queued"), assistant("first"), result("first", 0.001),
                    lifecycle(command, "started"), init()):
            await send.send(msg)
        await until(lambda: steered == [True])
        await anyio.sleep(0.1)
        assert not outcome and not turn.over.is_set()  # still playing the queued turn
        turn.ctx.interrupt_requested.set()  # an interrupt now reaches the queued turn
        await until(lambda: any(m["type"] == "control_request" for m in child.sent))
        for msg in (assistant("second"), result("second", 0.002)):
            await send.send(msg)
    assert outcome[0].final_text == "second" and outcome[0].usage.cost_usd == pytest.approx(0.002)
    usage = [e for e in ctx.events if e.type == "context_usage"]
    assert usage[-1].usage.cost_usd == pytest.approx(0.002)  # the whole turn's, both results


async def test_no_interrupt_is_sent_after_the_turn_ended(tmp_path: Path) -> None:
    """The runner's budget check interrupts right after a `result` over budget: that must not reach the process
    (it would stop the next turn)."""
    turn, child, ctx = make_turn(tmp_path)
    send, messages = await lines()

    async def interrupt_at_result(event: HarnessEvent) -> None:
        if event.type == "context_usage":
            ctx.interrupt_requested.set()
            await anyio.sleep(0.05)  # let the interrupt task run

    ctx.on_emit = interrupt_at_result
    async with anyio.create_task_group() as tg:
        tg.start_soon(turn.play, messages)
        await until(lambda: bool(child.users()))
        for msg in (init(), assistant("hi"), result("hi", 0.001)):
            await send.send(msg)
    assert [m["type"] for m in child.sent] == ["user"] and turn.broken is None


async def test_a_chunk_is_played_up_to_the_turns_end(tmp_path: Path) -> None:
    """One chunk holds the whole turn and more: its text deltas stream (through the hot path, a consumer behind
    or not), the turn ends at its `result`, and what follows in the chunk is not played into it."""
    turn, child, ctx = make_turn(tmp_path)
    behind: list[str] = []

    async def slow(event: HarnessEvent) -> None:  # `emit_now` hands back an awaitable: the reader awaits it
        behind.append(event.type)

    ctx.on_emit = slow

    def delta(text: str) -> dict[str, Any]:
        event = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}
        return {"type": "stream_event", "event": event, "session_id": SID, "parent_tool_use_id": None,
                "api_message_id": "msg_hi"}

    async def one_chunk() -> AsyncIterator[list[dict[str, Any]]]:
        await until(lambda: bool(child.users()))
        yield [init(), delta("h"), delta("i"), assistant("hi"), result("hi", 0.001), assistant("next turn's")]

    out = await turn.play(one_chunk())
    assert isinstance(out, HarnessResult) and out.final_text == "hi"
    texts = [e.text for e in ctx.events if e.type == "text_delta"]
    assert texts == ["h", "i"] and behind[-1] == "context_usage"
    assert [e.item_id for e in ctx.events if e.type == "text_delta"] == ["msg_hi:0"] * 2
