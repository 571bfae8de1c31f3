"""One run of mini-agent: the request → stream → tools → request loop, mapped onto Harness events.

Layer: provider logic. Knows the Harness run context (events, approvals, interrupts), the Responses events it
reacts to and when tools run; must not know HTTP details (`client`), the patch format (`patch`) or how a
command is spawned (`tools`). Events are emitted from the task that reads the stream (backpressure); only
the network read and the running command are cancelled by an interrupt, never an `emit`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from harness_core.errors import HarnessError, InterruptedRunError, ModelError, truncate
from harness_core.events import (
    ApprovalDecision,
    ApprovalRequested,
    ContextUsage,
    HarnessResult,
    HarnessToolDetails,
    ProviderRaw,
    ReasoningDelta,
    RunStatus,
    SessionStarted,
    TextDelta,
    ToolKind,
    ToolResult,
    ToolStatus,
    ToolUse,
    Usage,
)
from harness_core.provider import RunContext
from harness_core.spec import AgentRunSpec, ApprovalPolicy

from harness_mini_agent import tools, wire
from harness_mini_agent.client import ResponsesClient
from harness_mini_agent.options import MiniAgentOptions

__all__ = ["Agent", "InterruptWatch"]

_EVENT_OUTPUT = 4000
"""Characters of tool output carried in a `tool_result` event (the model gets more)."""
_DECLINED = "declined by the operator: this action was not run. Do not retry it; continue without it."


class InterruptWatch:
    """Cancels the current `section()` when `ctx.interrupt_requested` is set; run `watch()` in a task."""

    def __init__(self, event: anyio.Event) -> None:
        self._event = event
        self._scope: anyio.CancelScope | None = None

    @property
    def fired(self) -> bool:
        return self._event.is_set()

    async def watch(self) -> None:
        await self._event.wait()
        if self._scope is not None:
            self._scope.cancel()

    @contextmanager
    def section(self) -> Iterator[anyio.CancelScope]:
        with anyio.CancelScope() as scope:
            self._scope = scope
            if self._event.is_set():
                scope.cancel()
            try:
                yield scope
            finally:
                self._scope = None


@dataclass
class _Turn:
    """What one response left behind."""

    response_id: str | None = None
    calls: list[wire.ToolCall] = field(default_factory=list)
    completed: bool = False


class Agent:
    def __init__(
        self,
        spec: AgentRunSpec,
        options: MiniAgentOptions,
        ctx: RunContext,
        watch: InterruptWatch,
        api_key_env: str,
    ) -> None:
        self.spec, self.options, self.ctx, self.watch = spec, options, ctx, watch
        self.model = spec.model or options.model
        self.instructions = wire.INSTRUCTIONS + (f"\n\n{spec.system_prompt}" if spec.system_prompt else "")
        self.command_env = tools.command_env(spec.env, api_key_env)
        self.session_id: str | None = spec.resume_session
        """The last response with no unanswered tool call: the one a later run can continue from."""
        self.text: list[str] = []
        self.usage = Usage()
        self._announced = spec.resume_session is not None
        self.stop_reason = "the run was interrupted; resume it with its session id, if any"

    async def play(self, client: ResponsesClient) -> HarnessResult:
        if self.spec.resume_session:
            await self.ctx.emit(
                SessionStarted(session_id=self.spec.resume_session, resumed=True, model=self.model)
            )
        items: list[dict[str, Any]] = [wire.user_message(self.spec.prompt)]
        previous = self.spec.resume_session
        for _ in range(self.options.max_turns):
            body = wire.request_body(
                self.model, items, previous, self.instructions, self.options.reasoning_summary
            )
            turn = await self._respond(client, body)
            if not turn.completed:
                return self._result(RunStatus.INTERRUPTED)
            previous = turn.response_id
            if not turn.calls:
                self.session_id = turn.response_id
                return self._result(RunStatus.SUCCESS)
            items = []
            for call in turn.calls:
                output = await self._tool(call)
                if output is None:
                    return self._result(RunStatus.INTERRUPTED)
                items.append(wire.tool_output_item(call, output))
        raise ModelError(
            f"the model still called tools after {self.options.max_turns} requests; raise "
            "-o max_turns=N or narrow the task",
            max_turns=self.options.max_turns,
        )

    def _result(self, status: RunStatus, error: HarnessError | None = None) -> HarnessResult:
        if status is RunStatus.INTERRUPTED and error is None:
            error = InterruptedRunError(self.stop_reason)
        return HarnessResult(
            status=status,
            final_text="".join(self.text),
            session_id=self.session_id,
            usage=self.usage,
            error=error.to_info() if error else None,
        )

    # -- one response ---------------------------------------------------------------------------------

    async def _respond(self, client: ResponsesClient, body: dict[str, Any]) -> _Turn:
        turn = _Turn()
        streamed: set[str] = set()
        with self.watch.section():
            async with client.stream(body) as events:
                while True:
                    with self.watch.section():
                        event = await events.next()
                    if self.watch.fired:
                        break
                    if event is None:
                        raise ModelError("the model API ended the stream before `response.completed`; retry")
                    await self._on_event(event, turn, streamed)
                    if turn.completed:
                        break
        return turn

    async def _on_event(self, event: dict[str, Any], turn: _Turn, streamed: set[str]) -> None:
        kind = event.get("type")
        if kind == "response.created":
            turn.response_id = str(event["response"]["id"])
            if not self._announced:
                self._announced = True
                await self.ctx.emit(
                    SessionStarted(
                        session_id=turn.response_id, model=event["response"].get("model") or self.model
                    )
                )
        elif kind == "response.output_text.delta" and event.get("delta"):
            streamed.add(str(event.get("item_id")))
            self.text.append(event["delta"])
            await self.ctx.emit(TextDelta(text=event["delta"], item_id=event.get("item_id")))
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            if event.get("delta"):
                await self.ctx.emit(ReasoningDelta(text=event["delta"], item_id=event.get("item_id")))
        elif kind == "response.output_item.done":
            await self._on_item(event.get("item") or {}, turn, streamed)
        elif kind in ("response.completed", "response.incomplete"):
            response = event.get("response") or {}
            if response.get("id"):
                turn.response_id = str(response["id"])
            usage = wire.parse_usage(response.get("usage"))
            self.usage = wire.add_usage(self.usage, usage)
            await self.ctx.emit(ContextUsage(usage=usage))
            turn.completed = True
        elif kind in ("response.failed", "error"):
            raise wire.stream_error(event)

    async def _on_item(self, item: dict[str, Any], turn: _Turn, streamed: set[str]) -> None:
        call = wire.tool_call(item)
        if call is not None:
            turn.calls.append(call)
        elif item.get("type") == "message" and str(item.get("id")) not in streamed:
            text = "".join(
                p.get("text", "") for p in item.get("content") or [] if p.get("type") == "output_text"
            )
            if text:  # a server that does not stream deltas: the whole message at once
                self.text.append(text)
                await self.ctx.emit(TextDelta(text=text, item_id=item.get("id")))
        elif item.get("type") not in ("message", "reasoning"):
            await self.ctx.emit(ProviderRaw(method=str(item.get("type")), payload=item))

    # -- one tool call ----------------------------------------------------------------------------------

    async def _tool(self, call: wire.ToolCall) -> str | None:
        """Run one tool call; its output for the model, or None when the run must end interrupted."""
        cwd = self.spec.cwd
        if call.kind == "exec":
            display, raw_input = tools.command_display(call.cmd, cwd), {"cmd": call.cmd}
        elif call.kind == "patch":
            display, raw_input = tools.patch_display(call.patch, cwd), {"patch": call.patch}
        else:
            display, raw_input = HarnessToolDetails(kind=ToolKind.UNKNOWN, title=f"Calling {call.name}"), None
        await self.ctx.emit(ToolUse(tool_id=call.call_id, name=call.name, display=display, input=raw_input))
        if call.problem:
            return await self._finish(call, display, ToolStatus.FAILED, call.problem)
        if self.spec.approval is not ApprovalPolicy.NEVER:
            decision = await self.ctx.request_approval(
                ApprovalRequested(
                    request_id=f"approve-{call.call_id}",
                    tool_id=call.call_id,
                    display=display,
                    reason=f"approval policy {self.spec.approval.value!r}: each command and edit is asked",
                )
            )
            if decision is not ApprovalDecision.APPROVE:
                await self._finish(call, display, ToolStatus.DECLINED, _DECLINED)
                if decision is ApprovalDecision.ABORT:
                    self.stop_reason = f"the operator aborted the run at {display.title.lower()}"
                    return None
                return _DECLINED
        if self.watch.fired:
            await self._finish(call, display, ToolStatus.FAILED, "interrupted before it ran")
            return None
        try:
            if call.kind == "patch":
                outcome = tools.run_patch(call.patch, cwd, self.spec.sandbox)
            else:
                with self.watch.section():
                    outcome = await tools.run_command(
                        call.cmd, cwd, self.command_env, login=self.options.login_shell
                    )
                if self.watch.fired:
                    await self._finish(
                        call, display, ToolStatus.FAILED, "interrupted: the command was killed"
                    )
                    return None
        except HarnessError as exc:
            await self._finish(call, display, ToolStatus.FAILED, exc.message)
            raise
        await self.ctx.emit(
            ToolResult(
                tool_id=call.call_id,
                name=call.name,
                display=outcome.display,
                output=truncate(outcome.output, _EVENT_OUTPUT),
                is_error=outcome.is_error,
            )
        )
        return outcome.output

    async def _finish(
        self, call: wire.ToolCall, display: HarnessToolDetails, status: ToolStatus, message: str
    ) -> str:
        final = display.model_copy(update={"status": status, "summary": truncate(message, 200)})
        await self.ctx.emit(
            ToolResult(tool_id=call.call_id, name=call.name, display=final, output=message, is_error=True)
        )
        return message
