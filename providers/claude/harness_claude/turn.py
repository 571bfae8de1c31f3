"""One turn of Claude Code on a live child: the reader loop, approvals, interrupt, steering.

Layer: provider (lifecycle). Shared by a one-shot run (`ClaudeProvider.run`) and a live session's turns
(`harness_claude.session`). Knows the stream-json control protocol and `ClaudeMapper`; knows nothing of how the
process was started, of rendering or of how approvals are decided. When a steered turn ends: its README.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import anyio
from anyio.abc import TaskGroup
from harness_core import (
    AgentRunSpec,
    ApprovalDecision,
    HarnessError,
    HarnessEvent,
    HarnessResult,
    InvalidSpecError,
    ProtocolError,
    Usage,
)
from harness_core.provider import ChildProcess, RunContext

from harness_claude._json import obj, string
from harness_claude.changes import read_current
from harness_claude.mapping import ClaudeMapper, approval_request
from harness_claude.options import ClaudeOptions
from harness_claude.outcome import with_earlier
from harness_claude.permissions import PermissionPlan, auto_answer
from harness_claude.stdin import control_request, control_response, user_message
from harness_claude.toolconfig import content_blocks

__all__ = ["CONTROL_ANSWER_WAIT", "STEER_START_WAIT", "Batches", "Turn"]

Batches = AsyncIterator[list[dict[str, Any]]]
"""What a turn reads: the parsed messages, in order, a chunk's worth at a time (never an empty list), as
`harness_core.provider.json_batches` gives them from the child's lines."""

CONTROL_ANSWER_WAIT = 20.0
"""Seconds a control request (`set_model`, `set_permission_mode`) waits for Claude Code's answer."""

STEER_START_WAIT = 10.0
"""Seconds a turn whose `result` arrived waits for a queued steer to start before it ends anyway."""
_STEER_ACK_WAIT = 10.0
"""Seconds `steer` waits for Claude Code to acknowledge the message (`command_lifecycle` `queued`)."""
_PROMPT_WAIT = 2 * CONTROL_ANSWER_WAIT + 5.0
"""Seconds `steer` waits for the turn's prompt to be sent (after the control requests before it)."""
_GONE = frozenset({"cancelled", "discarded", "refused", "dropped"})
"""`command_lifecycle` states after which a steer will never start."""

Applied = Callable[[dict[str, Any]], None]


class Turn:
    """One turn on a live child. `plan` is a live session turn's permission plan (None for a one-shot run,
    whose command line holds the whole policy); `one_shot` closes stdin after the `result` line."""

    def __init__(self, spec: AgentRunSpec, opts: ClaudeOptions, ctx: RunContext, child: ChildProcess, *,
                 mapper: ClaudeMapper, plan: PermissionPlan | None = None, one_shot: bool = True,
                 content: str | list[dict[str, Any]] | None = None) -> None:
        self.spec, self.opts, self.ctx, self.child = spec, opts, ctx, child
        self.content = content if content is not None else content_blocks(spec.prompt, spec.attachments)
        """The prompt's message content: built (attachments read) before the process starts where it can be."""
        self.mapper, self.plan, self.one_shot = mapper, plan, one_shot
        self.approvals: dict[str, anyio.CancelScope] = {}
        self.interrupted = anyio.Event()
        self.over = anyio.Event()
        """The turn ends: no steer and no interrupt is sent from now on."""
        self.prompt_sent = anyio.Event()
        """The turn's prompt is on Claude Code's stdin (a steer before it would become the prompt)."""
        self.broken: str | None = None
        """Why the process can no longer be trusted with a turn (an unconfirmed interrupt, an unanswered control
        request), for a live session to close itself; None while all is well."""
        self._ids = 0
        self._pending: dict[str, anyio.Event] = {}
        """Control requests sent, by id, waiting for their `control_response`."""
        self._responses: dict[str, dict[str, Any]] = {}
        self._steers: dict[str, anyio.Event] = {}
        """Steers sent and not yet started, by uuid (set when acknowledged)."""
        self._owed = 0
        """Steers that started after a `result` line (each plays as a queued turn with its own `result`)."""
        self._settled = False
        """The last `result` line owes nothing: the turn ends there once no steer is waiting to start."""
        self._failure: HarnessError | None = None
        """Why the prelude stopped the turn (a refused override)."""
        self._earlier: Usage | None = None
        """The usage of this turn's earlier `result` lines (a steer played after them)."""

    def _next_id(self) -> str:
        self._ids += 1
        return f"harness_{self._ids}"

    async def play(self, messages: Batches, *, prelude: Sequence[dict[str, Any]] = (),
                   applied: Applied | None = None) -> HarnessResult:
        """Send `prelude`'s control requests (each answered before the next; `applied` is told of each success),
        then the prompt; read `messages` (`json_batches` of the child's lines) until the turn's end."""
        outcome: HarnessResult | HarnessError | None = None
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._forward_interrupt)
                tg.start_soon(self._grace, tg.cancel_scope)
                tg.start_soon(self._prelude, prelude, applied, tg)
                outcome = await self._read(messages, tg)
                tg.cancel_scope.cancel()
        finally:
            self.over.set()
        if self._failure is not None:
            raise self._failure
        if outcome is None:  # the interrupt grace expired without a `result` line
            return self.mapper.interrupted_result()
        if isinstance(outcome, HarnessError):
            raise outcome
        return outcome

    async def _prelude(self, prelude: Sequence[dict[str, Any]], applied: Applied | None, tg: TaskGroup) -> None:
        for request in prelude:
            try:
                answer = await self.control(request)
            except ProtocolError as unanswered:
                self._failure = unanswered
                tg.cancel_scope.cancel()
                return
            if answer.get("subtype") == "error":
                self._failure = InvalidSpecError(
                    f"Claude Code refused {request.get('subtype')} ({string(answer.get('error'), 'no reason')}); "
                    "play the turn without that override, or start a new session with it"
                )
                tg.cancel_scope.cancel()
                return
            if applied is not None:
                applied(request)
        await self.child.send_line(user_message(self.content))
        self.prompt_sent.set()

    async def control(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send a control request and wait for its answer (`control_response.response`: `subtype` success or
        error). The reader delivers it; a turn that ends first answers an error.

        Raises:
            ProtocolError: no answer within `CONTROL_ANSWER_WAIT` (`broken` is then set: the process is stuck).
        """
        request_id = self._next_id()
        done = self._pending[request_id] = anyio.Event()
        await self.child.send_line(control_request(request_id, request))
        with anyio.move_on_after(CONTROL_ANSWER_WAIT):
            await done.wait()
        if not done.is_set():
            self._pending.pop(request_id, None)
            subtype = request.get("subtype")
            self.broken = (f"Claude Code did not answer {subtype} within {CONTROL_ANSWER_WAIT:g} s; its process "
                           f"looks stuck{self._resume_hint()}")
            raise ProtocolError(f"Claude Code did not answer {subtype} within {CONTROL_ANSWER_WAIT:g} s; the turn "
                                f"was not started and the session's process is no longer used{self._resume_hint()}")
        return self._responses.pop(request_id, {"subtype": "error", "error": "the turn ended first"})

    def _resume_hint(self) -> str:
        sid = self.mapper.session_id
        return f": continue in a new session with --resume {sid}" if sid else ": continue in a new session"

    async def _read(self, batches: Batches, tg: TaskGroup) -> HarnessResult | HarnessError:
        """Play the lines as they come (a chunk's worth at a time): a main-agent text delta goes straight from
        `mapper.text_delta` to `emit_now`; everything else through `_take`. Awaits only when a line needs it
        (the consumer is behind, a control request, a steer to wait for)."""
        mapper, emit_now, text_delta = self.mapper, self.ctx.emit_now, self.mapper.text_delta
        while True:
            if self._settled and not self._steers:  # an interrupt dropped the steers the turn waited for
                return await self._end()
            waiting = bool(self._steers) and self._settled
            try:
                with anyio.fail_after(STEER_START_WAIT if waiting else None):
                    batch = await batches.__anext__()
            except StopAsyncIteration:
                break
            except TimeoutError:  # a steer that never started: the turn ends with the result it has
                self.ctx.log.warning("claude_steer_never_started", waited=STEER_START_WAIT)
                return await self._end()
            for i, msg in enumerate(batch):
                if self._settled and not self._steers:  # as above, within a chunk
                    return await self._end(batch[i:])
                event = text_delta(msg)
                if event is not None:  # never the turn's end
                    pending = emit_now(event)
                    if pending is not None:
                        await pending
                    continue
                pending = self._take(msg, tg)
                if pending is not None:
                    await pending
                if self.over.is_set():
                    return await self._end(batch[i + 1 :])
        self.over.set()
        if mapper.finished:  # a steer was still waiting when the CLI exited
            return await self._end()
        # EOF without a `result` line
        if mapper.interrupt_sent:
            return mapper.interrupted_result()
        with anyio.move_on_after(2.0):
            await self.child.wait()
        what = "before finishing the turn" if self.one_shot or mapper.session_id else "before the turn started"
        return self.child.exit_error(f"Claude Code exited {what}")

    def _take(self, msg: dict[str, Any], tg: TaskGroup) -> Awaitable[None] | None:
        """Any line but a main-agent text delta: a control line, or what `mapper.feed` makes of it, under the
        hot-path contract (`harness_core.provider.NotificationHandler`)."""
        kind = msg.get("type")
        if kind == "control_request":
            return self._control_request(msg, tg)
        if kind == "control_response":
            self._answered(obj(msg.get("response")))
            return None
        if kind == "control_cancel_request":
            scope = self.approvals.get(str(msg.get("request_id")))
            if scope is not None:
                scope.cancel()
            return None
        if kind == "command_lifecycle":
            self._lifecycle(msg)
            return None
        mapper = self.mapper
        if kind == "result" and mapper.result is not None:
            self._earlier = mapper.result.usage if self._earlier is None else self._earlier + mapper.result.usage
        events = mapper.feed(msg)
        if kind == "result" and mapper.finished:
            self._owed = max(self._owed - 1, 0)
            self._settled = not self._owed
            if self._settled and not self._steers:
                self.over.set()  # before any await: a steer or interrupt from now on is not sent
            events = [with_earlier(e, self._earlier) for e in events]
        if len(events) == 1:
            return self.ctx.emit_now(events[0])
        return self._emit_all(events) if events else None

    async def _emit_all(self, events: list[HarnessEvent]) -> None:
        for event in events:
            await self.ctx.emit(event)

    async def _end(self, unread: Sequence[dict[str, Any]] = ()) -> HarnessResult | HarnessError:
        self.over.set()
        for msg in () if self.one_shot else unread:  # a session's lines read with the end: dropped, as it drops them
            self.ctx.log.debug("claude_line_after_turn", type=msg.get("type"))
        outcome = self.mapper.outcome
        assert outcome is not None
        if self.one_shot:
            await self.child.close_stdin()  # one turn per run: let the CLI exit
        if isinstance(outcome, HarnessResult) and self._earlier is not None:
            outcome = outcome.model_copy(update={"usage": self._earlier + outcome.usage})
        return outcome

    def _answered(self, response: dict[str, Any]) -> None:
        request_id = str(response.get("request_id"))
        done = self._pending.pop(request_id, None)
        if done is not None:
            self._responses[request_id] = response
            done.set()

    def _lifecycle(self, msg: dict[str, Any]) -> None:
        command, state = str(msg.get("command_uuid")), msg.get("state")
        acked = self._steers.get(command)
        if acked is None:
            return
        acked.set()
        if state == "started" and self.mapper.finished:  # after a `result`: it plays as a queued turn
            self._owed += 1
            self._settled = False
        if state == "started" or state in _GONE:
            del self._steers[command]

    # --- steering -----------------------------------------------------------------------------------

    async def steer(self, text: str) -> bool:
        """Send `text` into the running turn; True once Claude Code took it (queued for this turn), False when
        the turn is over, its prompt was not sent in time, or the CLI did not acknowledge it in time."""
        if not self.prompt_sent.is_set():  # still in the control requests: a steer now would become the prompt
            with anyio.move_on_after(_PROMPT_WAIT):
                await _first(self.prompt_sent, self.over)
            if not self.prompt_sent.is_set():
                self.ctx.log.warning("claude_steer_before_prompt", waited=_PROMPT_WAIT)
                return False
        if self.over.is_set() or self.mapper.interrupt_sent:  # no await from here to registering the steer
            return False
        command = str(uuid.uuid4())
        acked = self._steers[command] = anyio.Event()
        await self.child.send_line(user_message(text, command))
        with anyio.move_on_after(_STEER_ACK_WAIT):
            await acked.wait()
        if not acked.is_set():
            self._steers.pop(command, None)
            self.ctx.log.warning("claude_steer_not_acknowledged", waited=_STEER_ACK_WAIT)
        return acked.is_set()

    # --- control protocol ---------------------------------------------------------------------------

    async def _control_request(self, msg: dict[str, Any], tg: TaskGroup) -> None:
        request_id = str(msg.get("request_id"))
        request = obj(msg.get("request"))
        if request.get("subtype") == "can_use_tool":
            if self.plan is not None and not self.plan.asks:
                await self._auto_answer(request_id, request)
                return
            tg.start_soon(self._approve, request_id, request)
            return
        await self._respond_error(request_id, f"harness does not handle {request.get('subtype')!r} requests")

    async def _respond(self, request_id: str, response: dict[str, Any]) -> None:
        await self.child.send_line(control_response(request_id, response))

    async def _respond_error(self, request_id: str, error: str) -> None:
        await self.child.send_line(control_response(request_id, error=error))

    async def _auto_answer(self, request_id: str, request: dict[str, Any]) -> None:
        """A live turn with approval `never`: what the one-shot command line would allow, else denied."""
        assert self.plan is not None
        name = string(request.get("tool_name"), "tool")
        if auto_answer(self.plan, name):
            await self._respond(request_id, {"behavior": "allow", "updatedInput": obj(request.get("input"))})
            return
        message = f"Permission to use {name} was denied automatically: this turn's approval policy is never"
        await self._respond(request_id, {"behavior": "deny", "message": message})

    async def _approve(self, request_id: str, request: dict[str, Any]) -> None:
        cwd = str(self.spec.cwd)
        event = approval_request(request_id, request, cwd, await read_current(self.ctx, request, cwd))
        decision: ApprovalDecision | None = None
        with anyio.CancelScope() as scope:
            self.approvals[request_id] = scope
            try:
                decision = await self.ctx.request_approval(event)
            finally:
                self.approvals.pop(request_id, None)
        if decision is None:  # cancelled (the run ended, the CLI withdrew it): the runner settled it `abort`
            return
        if decision is ApprovalDecision.APPROVE:
            tool_input = obj(request.get("input"))
            await self._respond(request_id, {"behavior": "allow", "updatedInput": tool_input})
            return
        abort = decision is ApprovalDecision.ABORT
        message = "the operation refused this action" + ("; stop the turn" if abort else "")
        await self._respond(request_id, {"behavior": "deny", "message": message, "interrupt": abort})
        if abort:
            await self._interrupt()

    async def _interrupt(self) -> None:
        if self.mapper.interrupt_sent or self.over.is_set():  # after the turn's end it would hit the next turn
            return
        self.mapper.interrupt_sent = True
        self.interrupted.set()
        self._steers.clear()  # `cancel_queued`: a steer not yet started goes with the stopped turn
        request: dict[str, Any] = {"subtype": "interrupt"}
        if not self.one_shot:
            request["cancel_queued"] = True
        try:
            await self.child.send_line(control_request(self._next_id(), request))
        except Exception:  # noqa: BLE001 - the child is already gone; EOF ends the turn
            self.ctx.log.debug("interrupt_send_failed")

    async def _forward_interrupt(self) -> None:
        await self.ctx.interrupt_requested.wait()
        await self._interrupt()

    async def _grace(self, scope: anyio.CancelScope) -> None:
        await self.interrupted.wait()
        await anyio.sleep(self.opts.interrupt_grace)
        self.ctx.log.warning("claude_interrupt_grace_expired", grace=self.opts.interrupt_grace)
        self.broken = (f"Claude Code did not confirm the interrupt within {self.opts.interrupt_grace:g} s; its turn "
                       f"may still be running{self._resume_hint()}")
        scope.cancel()  # `play` then returns an interrupted result; the transport (or the session) stops the child


async def _first(*events: anyio.Event) -> None:
    """Return once any of `events` is set (the caller bounds the wait)."""
    async with anyio.create_task_group() as tg:

        async def one(event: anyio.Event) -> None:
            await event.wait()
            tg.cancel_scope.cancel()

        for event in events:
            tg.start_soon(one, event)
