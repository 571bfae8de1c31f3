"""One ACP prompt turn: `session/prompt`, its updates mapped to events, permission requests, and interrupt.

Layer: provider lifecycle. Knows the order of a prompt turn, `session/cancel` and the rule that every pending
permission request is then answered `cancelled`. Events go to the turn's own `RunContext`; the process and its
peer are the connection's. Knows nothing of rendering or run logs. Interrupt: providers/acp/README.md.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any, Protocol

import anyio
from harness_core import (
    AgentRunSpec,
    ApprovalDecision,
    ApprovalRequested,
    Attachment,
    ErrorEvent,
    HarnessError,
    HarnessEvent,
    HarnessResult,
    ModelError,
    Notice,
    ProtocolError,
    RunStatus,
)
from harness_core.provider import ChildProcess, JsonRpcError, JsonRpcPeer, RunContext

from harness_acp.mapping import STOP_REASONS, AcpMapper, unknown_display
from harness_acp.options import AcpOptions
from harness_acp.policy import Outcome, auto_answer, outcome_for, outcome_of_decision, refuses

__all__ = ["Connection", "PromptTurn", "attachment_block", "prompt_blocks"]


class Connection(Protocol):
    """What a prompt turn uses of its connection (`connection.AcpConnection` is one): the process, its peer and the
    session, read; `broken` and `cost` written back. The turn knows nothing else of the connection."""

    agent: str
    opts: AcpOptions
    child: ChildProcess
    peer: JsonRpcPeer
    handles: frozenset[str]
    warnings: re.Pattern[str] | None
    session_id: str | None
    closed: bool
    broken: str | None
    cost: float | None

    def prompt_failed(self, exc: JsonRpcError) -> HarnessError: ...


def prompt_blocks(spec: AgentRunSpec, *, system_prompt: bool = True) -> list[dict[str, Any]]:
    """The prompt's content blocks. ACP has no system prompt: `system_prompt` goes first, as its own text block
    (unless the agent took it at launch or in `session/new`'s `_meta`: `system_prompt=False`). The attachments
    follow the prompt (`attachment_block`: the runner left only those the agent takes)."""
    blocks = [{"type": "text", "text": spec.prompt}]
    if spec.system_prompt and system_prompt:
        blocks.insert(0, {"type": "text", "text": spec.system_prompt})
    return [*blocks, *(attachment_block(a) for a in spec.attachments)]


def attachment_block(attachment: Attachment) -> dict[str, Any]:
    """An image as an `image` block (`promptCapabilities.image`); a file as an embedded `resource`
    (`promptCapabilities.embeddedContext`): its text when it is text, else its bytes (`blob`)."""
    data = attachment.read()
    if attachment.kind == "image":
        block: dict[str, Any] = {"type": "image", "mimeType": attachment.mime_type,
                                 "data": base64.b64encode(data).decode("ascii")}
        if attachment.path is not None:
            block["uri"] = attachment.path.as_uri()
        return block
    uri = attachment.path.as_uri() if attachment.path is not None else f"attachment:///{attachment.name}"
    resource: dict[str, Any] = {"uri": uri, "mimeType": attachment.mime_type}
    try:
        text = data.decode("utf-8") if attachment.mime_type.startswith("text/") else None
    except UnicodeDecodeError:
        text = None
    if text is not None:
        resource["text"] = text
    else:
        resource["blob"] = base64.b64encode(data).decode("ascii")
    return {"type": "resource", "resource": resource}


TRAILING_UPDATES = 5.0
"""Seconds a turn that answered with tool calls still open reads on for their last updates (codex-acp's trailed its
answer by more than a second on a loaded machine; a turn waits only while a call it ran is open)."""

class PromptTurn:
    """The state of one prompt turn: its context, mapper, pending permission requests, and how it ended."""

    def __init__(self, conn: Connection, spec: AgentRunSpec, ctx: RunContext) -> None:
        self.conn, self.spec, self.ctx = conn, spec, ctx
        self.mapper = AcpMapper(str(spec.cwd), cost_before=conn.cost, warnings=conn.warnings,
                                servers=tuple(server.name for server in spec.mcp_servers))
        self.pending: dict[str, anyio.CancelScope] = {}
        self.stopping = anyio.Event()
        self.cancel_sent = False
        self.answered = anyio.Event()
        self.prompt_scope = anyio.CancelScope()
        self.answer: Any = None  # the prompt's answer (stop reason, usage)
        self.fed: anyio.Event | None = None  # set by each update other than text while the turn reads on

    async def play(self) -> HarnessResult:
        result: HarnessResult | None = None
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._forward_interrupt)
            tg.start_soon(self._watch_stop)
            try:
                result = await self._prompt()
                if result.status is not RunStatus.INTERRUPTED and self.mapper.awaited_calls():
                    await self._trailing_updates()
                why = "the turn was interrupted" if result.status is RunStatus.INTERRUPTED else "the turn ended"
                await self._emit_all(self.mapper.close_open(f"{why} before the tool reported a result"))
            finally:
                self.answered.set()
                if self.mapper.cost_usd is not None:
                    self.conn.cost = self.mapper.cost_usd
                tg.cancel_scope.cancel()
        assert result is not None
        return result

    async def _trailing_updates(self) -> None:
        """The turn answered with tool calls still open: their last updates may trail the answer (an agent that
        sends updates and answers apart, as codex-acp does under load). Read on for them, `TRAILING_UPDATES`
        seconds at most; what is still open then is closed as unfinished."""
        with anyio.move_on_after(TRAILING_UPDATES):
            while self.mapper.awaited_calls() and not self.conn.closed:
                self.fed = anyio.Event()
                await self.fed.wait()

    async def _prompt(self) -> HarnessResult:
        conn, mapper = self.conn, self.mapper
        if conn.closed:
            raise await self._exited("exited before the turn started")
        own_system = "system_prompt" not in conn.handles
        blocks = prompt_blocks(self.spec, system_prompt=own_system) if not self.spec.attachments else \
            await anyio.to_thread.run_sync(lambda: prompt_blocks(self.spec, system_prompt=own_system))  # file reads
        params: dict[str, Any] = {"sessionId": conn.session_id, "prompt": blocks}
        if meta := trace_meta(self.ctx.trace_context()):  # this turn's, asked now: ACP's `_meta` trace keys
            params["_meta"] = meta
        answer: Any = None
        with self.prompt_scope:
            try:
                answer = await conn.peer.request("session/prompt", params, timeout=None)
            except JsonRpcError as exc:
                if self.cancel_sent:  # some agents fail the cancelled prompt instead of answering `cancelled`
                    return self._result(RunStatus.INTERRUPTED)
                raise conn.prompt_failed(exc) from None
            except HarnessError:
                if conn.closed:
                    raise await self._exited("exited in the middle of the turn") from None
                raise
        if self.prompt_scope.cancelled_caught:  # cancelled, and the agent never answered the prompt
            conn.broken = (f"{conn.agent} did not answer the cancelled prompt within "
                           f"{conn.opts.interrupt_timeout:g}s; its turn may still be running")
            await self.ctx.emit(Notice(level="warning", code="interrupt_unconfirmed", message=conn.broken))
            return self._result(RunStatus.INTERRUPTED)
        reason = answer.get("stopReason") if isinstance(answer, dict) else None
        status, failure = STOP_REASONS.get(str(reason), ("failed", f"unknown stop reason {reason!r}"))
        self.answer = answer
        if status == "interrupted" and not self.cancel_sent and mapper.declined:
            # The agent ended its turn when an action was refused (codex-acp does): it stopped, nobody interrupted.
            await self.ctx.emit(Notice(level="info", code="turn_ended_on_refusal", message=(
                f"{conn.agent} ended its turn when an action was refused")))
            return self._result(RunStatus.SUCCESS, text=mapper.final_text)
        if status == "interrupted" or (self.cancel_sent and status == "success"):
            return self._result(RunStatus.INTERRUPTED)
        if status == "failed":
            if reason in STOP_REASONS:
                raise ModelError(f"{conn.agent}: {failure}", stop_reason=reason)
            raise ProtocolError(f"{conn.agent}: {failure}", stop_reason=reason)
        return self._result(RunStatus.SUCCESS, text=mapper.final_text)

    def _result(self, status: RunStatus, *, text: str = "") -> HarnessResult:
        return HarnessResult(status=status, final_text=text or (self.mapper.final_text if status is not
                             RunStatus.SUCCESS else ""), session_id=self.conn.session_id,
                             usage=self.mapper.result_usage(self.answer))

    async def _exited(self, what: str) -> HarnessError:
        with anyio.move_on_after(2.0):
            await self.conn.child.wait()
        return self.conn.child.exit_error(f"{self.conn.agent} {what}")

    def connection_closed(self) -> None:
        """The agent's stdout ended: the pending prompt request fails at once (the peer does it)."""
        for scope in self.pending.values():
            scope.cancel()
        if self.fed is not None:
            self.fed.set()

    # -- interrupt ------------------------------------------------------------------------------------------

    async def _forward_interrupt(self) -> None:
        await self.ctx.interrupt_requested.wait()
        self.stopping.set()

    async def _watch_stop(self) -> None:
        await self.stopping.wait()
        conn = self.conn
        self.cancel_sent = True
        try:  # first, so that the agent reads the `cancelled` answers below as the cancel's, not as refusals
            await conn.peer.notify("session/cancel", {"sessionId": conn.session_id})
        except HarnessError as exc:  # the process is gone: the prompt request fails by itself
            self.ctx.log.debug("acp_cancel_failed", error=str(exc))
        for scope in list(self.pending.values()):  # answered `cancelled`, as the protocol requires
            scope.cancel()
        with anyio.move_on_after(conn.opts.interrupt_timeout):
            await self.answered.wait()
        if not self.answered.is_set():
            self.prompt_scope.cancel()

    # -- wire callbacks -------------------------------------------------------------------------------------

    def on_update(self, update: Any) -> Any:
        """One `session/update`'s `update` (from the reader: may return an awaitable to await before reading on)."""
        mapper = self.mapper
        if update.__class__ is dict and update.get("sessionUpdate") == "agent_message_chunk":
            event = mapper.text_delta(update)
            if event is not None:
                return self.ctx.emit_now(event)
        events = mapper.feed(update)
        if self.fed is not None:  # the turn reads on for trailing updates: wake it once these are out
            return self._emit_then_wake(events)
        if len(events) == 1:
            return self.ctx.emit_now(events[0])
        return self._emit_all(events) if events else None

    async def _emit_all(self, events: list[HarnessEvent]) -> None:
        for event in events:
            await self.ctx.emit(event)

    async def _emit_then_wake(self, events: list[HarnessEvent]) -> None:
        await self._emit_all(events)
        if self.fed is not None:
            self.fed.set()

    async def on_error(self, err: HarnessError) -> None:
        await self.ctx.emit(ErrorEvent(error=err.to_info()))

    async def on_permission(self, params: dict[str, Any], request_id: str) -> dict[str, Any]:
        """Answer one `session/request_permission` (in its own task): by the policy, or by asking the operation."""
        raw_options, raw_call = params.get("options"), params.get("toolCall")
        options: list[Any] = raw_options if isinstance(raw_options, list) else []
        call: dict[str, Any] = raw_call if isinstance(raw_call, dict) else {}
        call_id = str(call.get("toolCallId") or "")
        if self.cancel_sent:
            return Outcome(None).to_wire()
        mapper = self.mapper
        await self._emit_all(mapper.asked(call))  # a call not announced yet (or held for its input) is now
        merged = {**mapper.calls.get(call_id, {}), **{k: v for k, v in call.items() if v is not None}}
        spec = self.spec
        answer = auto_answer(merged, sandbox=spec.sandbox, approval=spec.approval, cwd=str(spec.cwd))
        if answer != "ask":
            if answer == "reject":
                mapper.decline(call_id)
                await self.ctx.emit(Notice(level="info", code="permission_refused", message=(
                    f"{merged.get('title') or 'a tool call'}: refused, the {spec.sandbox.value} sandbox does not "
                    "allow it"), details={"tool_id": call_id}))
            return outcome_for(options, answer).to_wire()
        display = mapper.tool_display(call_id, merged) if call_id else unknown_display(str(call.get("title") or ""))
        request = ApprovalRequested(request_id=request_id, tool_id=call_id or None, display=display,
                                    reason=str(merged.get("title") or "") or None)
        decision = ApprovalDecision.ABORT
        with anyio.CancelScope() as scope:
            self.pending[request_id] = scope
            try:
                decision = await self.ctx.request_approval(request)
            finally:
                self.pending.pop(request_id, None)
        if scope.cancelled_caught:
            return Outcome(None).to_wire()
        if refuses(decision):
            mapper.decline(call_id)
        if decision is ApprovalDecision.ABORT:
            self.stopping.set()
        return outcome_of_decision(options, decision).to_wire()


def trace_meta(carrier: Mapping[str, str] | None) -> dict[str, str]:
    """A W3C carrier (`ctx.trace_context()`) as ACP's `_meta` trace-context keys (root keys `traceparent`,
    `tracestate`, reserved for it by the protocol's extensibility rules); `{}` for none."""
    if not carrier or not carrier.get("traceparent"):
        return {}
    return {key: carrier[key] for key in ("traceparent", "tracestate") if carrier.get(key)}
