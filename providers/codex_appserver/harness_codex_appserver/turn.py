"""One turn on an app-server thread: `turn/start`, its notifications mapped to events, approvals, interrupt.

Layer: provider lifecycle. Knows the order of a turn, `turn/interrupt`, the approval requests and their wire
decisions, and the rollout side input for patches Codex refused without an item. Events go to the turn's own
`RunContext`; the process is the thread's. Knows nothing of rendering, run logs or how approvals are decided.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

import anyio
from harness_codex_common import Reconnects, model_api_url, refused_events
from harness_codex_common.rollout import read_finished_tail, turn_records
from harness_core import (
    AgentRunSpec,
    ApprovalDecision,
    ApprovalRequested,
    ErrorEvent,
    HarnessError,
    HarnessEvent,
    HarnessResult,
    HarnessToolDetails,
    Notice,
    ProtocolError,
    RunStatus,
    SessionStarted,
    ToolKind,
    Usage,
)
from harness_core.provider import ChildProcess, JsonRpcError, JsonRpcPeer, RunContext

from harness_codex_appserver.items import tool_calls
from harness_codex_appserver.mapping import TEXT_DELTA, TurnMapper
from harness_codex_appserver.options import CodexAppServerOptions
from harness_codex_appserver.params import Sticky

__all__ = ["APPROVALS", "Thread", "Turn"]

APPROVALS = ("item/commandExecution/requestApproval", "item/fileChange/requestApproval")
_WIRE_DECISION = {
    ApprovalDecision.APPROVE: "accept",
    ApprovalDecision.DENY: "decline",
    ApprovalDecision.ABORT: "cancel",
}


class Thread(Protocol):
    """What a turn uses of its thread (`thread.AppThread` is one): the process, its peer and the thread's state,
    read; `broken` and `last_turn_id` written back. The turn knows nothing else of the thread."""

    opts: CodexAppServerOptions
    child: ChildProcess
    peer: JsonRpcPeer
    thread_id: str | None
    rollout: Path | None
    sticky: Sticky
    total: Usage | None
    closed: bool
    broken: str | None
    last_turn_id: str | None

    async def request(self, method: str, params: dict[str, Any], timeout: float,  # noqa: ASYNC109
                      trace: Mapping[str, str] | None = None) -> dict[str, Any]: ...

    async def params_for(self, spec: AgentRunSpec, ctx: RunContext, *, live: bool) -> dict[str, Any]: ...


class Turn:
    """The state of one turn: its context, its mapper, pending approvals, and how it ended. `ready` is set once
    the turn's id is known (or the turn is over)."""

    def __init__(self, thread: Thread, spec: AgentRunSpec, ctx: RunContext, *, live: bool, resumed: bool) -> None:
        self.thread, self.spec, self.ctx, self.live, self.resumed = thread, spec, ctx, live, resumed
        opts = thread.opts
        base_url = model_api_url(opts.config, spec.env, opts.codex_home)
        # A live session's later turns start from the thread's last total: their usage is their own.
        baseline = thread.total if live else None
        self.mapper = TurnMapper(reconnects=Reconnects(opts.max_reconnects, base_url), baseline=baseline)
        self.stop = anyio.Event()
        self.ready = anyio.Event()
        self.stopping = anyio.Event()  # interrupt the turn: the user asked, or Codex kept reconnecting
        self.interrupt_sent = False
        self.starting = False  # turn/start sent: the turn will run, whatever happens to our wait for its answer
        self.startup = anyio.CancelScope()
        self.approvals: dict[str, anyio.CancelScope] = {}

    async def play(self, prelude: Callable[[], Awaitable[None]] | None) -> HarnessResult:
        result: HarnessResult | None = None
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._forward_interrupt)
            tg.start_soon(self._watch_interrupt)
            try:
                result = await self._turn(prelude)
            finally:
                self.ready.set()
                with anyio.CancelScope(shield=True):
                    await self._settle_approvals("the run ended before a decision was made")
                tg.cancel_scope.cancel()
        assert result is not None  # _turn returns or raises
        return result

    async def _turn(self, prelude: Callable[[], Awaitable[None]] | None) -> HarnessResult:
        thread, mapper = self.thread, self.mapper
        with self.startup:
            if thread.closed:  # died between turns
                raise await self._exited("codex app-server exited before the turn started")
            if prelude is not None:
                await prelude()
            mapper.thread_id = thread.thread_id
            if self.live:
                await self.ctx.emit(
                    SessionStarted(session_id=str(thread.thread_id), resumed=self.resumed,
                                   model=thread.sticky.model_for(self.spec))
                )
            params = await thread.params_for(self.spec, self.ctx, live=self.live)
            self.starting = True
            turn = await thread.request("turn/start", params, thread.opts.request_timeout, self.ctx.trace_context())
            mapper.start_turn(self._new_turn_id(turn))
            self.ready.set()
        if self.startup.cancelled_caught:  # interrupted before the turn began
            return HarnessResult(status=RunStatus.INTERRUPTED, session_id=thread.thread_id)
        await self.stop.wait()
        outcome = mapper.outcome
        if outcome is None and self.interrupt_sent and not thread.closed:
            if self.live:  # the process lives on, and so may the turn: the next turn/start would steer into it
                thread.broken = (f"codex did not confirm the interrupt within {thread.opts.interrupt_timeout:g}s; "
                                 "its turn may still be running: continue in a new session with --resume "
                                 f"{thread.thread_id}")
                await self.ctx.emit(Notice(level="warning", code="interrupt_unconfirmed", message=thread.broken))
            gave_up = mapper.gave_up
            return HarnessResult(
                status=RunStatus.INTERRUPTED if gave_up is None else RunStatus.FAILED,
                session_id=thread.thread_id,
                usage=mapper.usage,
                error=None if gave_up is None else gave_up.to_info(),
            )
        if outcome is None:
            raise await self._exited("codex app-server exited in the middle of the turn")
        return outcome

    def _new_turn_id(self, answer: dict[str, Any]) -> str:
        """The id `turn/start` answered with, refused when it is the previous turn's: Codex was still playing that
        one, took the prompt as input for it, and the thread is no longer in step with the session.

        Raises:
            ProtocolError: the id is the previous turn's (the thread is then `broken`).
        """
        thread = self.thread
        raw = (answer.get("turn") or {}).get("id")
        turn_id = str(raw)
        if raw is not None and turn_id == thread.last_turn_id:
            thread.broken = (f"codex app-server answered turn/start with the previous turn's id {turn_id}: that turn "
                             "was still running and took this prompt instead of starting a new turn; continue in a "
                             f"new session with --resume {thread.thread_id}")
            raise ProtocolError(thread.broken, method="turn/start", turn_id=turn_id)
        thread.last_turn_id = turn_id
        return turn_id

    async def _exited(self, what: str) -> HarnessError:
        with anyio.move_on_after(2.0):
            await self.thread.child.wait()
        return self.thread.child.exit_error(what)

    async def _forward_interrupt(self) -> None:
        await self.ctx.interrupt_requested.wait()
        self.stopping.set()

    async def _watch_interrupt(self) -> None:
        await self.stopping.wait()
        thread = self.thread
        if self.live and self.starting:  # the process lives on: let the turn start, then interrupt it
            with anyio.move_on_after(thread.opts.request_timeout):
                await self.ready.wait()
        turn_id = self.mapper.turn_id
        if turn_id is None or thread.thread_id is None:
            self.startup.cancel()
            return
        self.interrupt_sent = True
        try:
            await thread.peer.request(
                "turn/interrupt",
                {"threadId": thread.thread_id, "turnId": turn_id},
                timeout=thread.opts.request_timeout,
            )
        except (JsonRpcError, TimeoutError, HarnessError) as exc:  # e.g. the turn just ended
            self.ctx.log.debug("turn_interrupt_failed", error=str(exc))
        with anyio.move_on_after(thread.opts.interrupt_timeout):
            await self.stop.wait()
        self.stop.set()

    # -- wire callbacks (from the thread's peer) -----------------------------------------------------------

    def on_notification(self, method: str, params: Any, msg: dict[str, Any]) -> Awaitable[None] | None:
        # A `NotificationHandler` (the hot-path contract), deliberately not a coroutine function: one event or
        # none, the turn not over, goes through `emit_now` and its answer is passed on.
        if method == "serverRequest/resolved" and isinstance(params, dict):
            return self._settle_then_map(msg, params)
        mapper = self.mapper
        events = mapper.feed(msg)
        if mapper.gave_up is not None:
            self.stopping.set()
        if mapper.outcome is None:
            if len(events) == 1:
                return self.ctx.emit_now(events[0])
            if not events:
                return None
        return self._emit_all(events)

    def on_text_delta(self, params: dict[str, Any], msg: dict[str, Any]) -> Awaitable[None] | None:
        """`on_notification` for `item/agentMessage/delta` (one per streamed token): the mapper's plain case
        straight to `emit_now`, else the general path."""
        event = self.mapper.text_delta(params)
        if event is None:
            return self.on_notification(TEXT_DELTA, params, msg)
        return self.ctx.emit_now(event)

    async def _settle_then_map(self, msg: dict[str, Any], params: dict[str, Any]) -> None:
        await self._settle_approval(str(params.get("requestId")), "codex withdrew the request")
        await self._emit_all(self.mapper.feed(msg))

    async def _emit_all(self, events: list[HarnessEvent]) -> None:
        for event in events:
            await self.ctx.emit(event)
        if self.mapper.finished and not self.stop.is_set():  # once the turn's last events are out
            for event in await self._refused():
                await self.ctx.emit(event)
            self.stop.set()

    async def _refused(self) -> list[HarnessEvent]:
        """The tool calls Codex refused without an item (a patch in a read-only sandbox), from the rollout
        (see `harness_codex_common.rollout`), once its `task_complete` is in the file (Codex writes it
        asynchronously: at most a second's wait)."""
        rollout, thread_id = self.thread.rollout, self.thread.thread_id
        if rollout is None:
            return []
        tail = await self.ctx.read_side_input(f"rollout:{thread_id}", lambda: read_finished_tail(rollout))
        return refused_events(turn_records(tail), str(self.spec.cwd), self.mapper.tool_ids)

    async def on_error(self, err: HarnessError) -> None:
        await self.ctx.emit(ErrorEvent(error=err.to_info()))

    async def on_approval(self, method: str, params: dict[str, Any], msg: dict[str, Any]) -> Any:
        request = self._approval_request(method, params, str(msg.get("id")))
        decision = ApprovalDecision.ABORT
        with anyio.CancelScope() as scope:
            self.approvals[request.request_id] = scope
            try:
                decision = await self.ctx.request_approval(request)
            finally:
                self.approvals.pop(request.request_id, None)
        return {
            "decision": _WIRE_DECISION[decision if not scope.cancelled_caught else ApprovalDecision.ABORT]
        }

    def _approval_request(self, method: str, params: dict[str, Any], request_id: str) -> ApprovalRequested:
        item_id = str(params.get("itemId") or "")
        if method == "item/commandExecution/requestApproval":
            item = {
                "type": "commandExecution",
                "id": item_id,
                "command": params.get("command") or "",
                "cwd": params.get("cwd"),
                "commandActions": params.get("commandActions") or [],
                "status": "inProgress",
            }
            display = tool_calls(item, completed=False)[0].display
        else:
            calls = self.mapper.open_calls(item_id)
            if len(calls) == 1:
                display = calls[0].display
            else:
                paths = [c.display.path for c in calls if c.display.path]
                display = HarnessToolDetails(
                    kind=ToolKind.EDIT,
                    title="Editing files",
                    summary="\n".join(paths) or None,
                    raw={"grantRoot": params.get("grantRoot")},
                    changes=tuple(change for c in calls for change in c.display.changes),
                )
        return ApprovalRequested(
            request_id=request_id, tool_id=item_id or None, display=display, reason=params.get("reason")
        )

    async def _settle_approval(self, request_id: str, reason: str) -> None:
        scope = self.approvals.pop(request_id, None)
        if scope is None:
            return
        scope.cancel()
        await self.ctx.withdraw_approval(request_id, reason)  # the runner writes its one `approval_resolved`

    async def _settle_approvals(self, reason: str) -> None:
        for request_id in list(self.approvals):
            await self._settle_approval(request_id, reason)
