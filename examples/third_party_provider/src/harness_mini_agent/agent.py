"""One run of mini-agent: the request → stream → tools → request loop, its approvals and interrupts.

Layer: provider logic. Knows the run context (events, approvals, interrupts) and when tools run; must not know
HTTP (`client`), the stream → event mapping (`mapping`), the patch format (`patch`) or spawning (`tools`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from harness_core import (
    AgentRunSpec,
    ApprovalDecision,
    ApprovalPolicy,
    ApprovalRequested,
    HarnessError,
    HarnessResult,
    HarnessToolDetails,
    InterruptedRunError,
    ModelError,
    RunStatus,
    ToolKind,
    ToolResult,
    ToolStatus,
    ToolUse,
)
from harness_core.provider import RunContext, bounded_head, bounded_tail

from harness_mini_agent import tools, wire
from harness_mini_agent.client import ResponsesClient
from harness_mini_agent.mapping import Response, ResponsesMapper
from harness_mini_agent.options import MiniAgentOptions

__all__ = ["Agent", "InterruptWatch"]

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
        self.mapper = ResponsesMapper(self.model, spec.resume_session)
        self.stop_reason = "the run was interrupted; resume it with its session id, if any"

    async def play(self, client: ResponsesClient) -> HarnessResult:
        for event in self.mapper.start():
            await self.ctx.emit(event)
        items: list[dict[str, Any]] = [wire.user_message(self.spec.prompt)]
        previous = self.spec.resume_session
        for _ in range(self.options.max_turns):
            body = wire.request_body(
                self.model, items, previous, self.instructions, self.options.reasoning_summary
            )
            response = await self._respond(client, body)
            if not response.completed:
                return self._result(RunStatus.INTERRUPTED)
            previous = response.id
            if not response.calls:
                return self._result(RunStatus.SUCCESS)
            items = []
            for call in response.calls:
                output = await self._tool(call)
                if output is None:
                    return self._result(RunStatus.INTERRUPTED)
                items.append(wire.tool_output_item(call, output))
        raise ModelError(
            f"the model still called tools after {self.options.max_turns} requests; raise "
            "-o max_turns=N or narrow the task",
            max_turns=self.options.max_turns,
        )

    def _result(self, status: RunStatus) -> HarnessResult:
        error = InterruptedRunError(self.stop_reason) if status is RunStatus.INTERRUPTED else None
        return self.mapper.result(status, error)

    # -- one response ---------------------------------------------------------------------------------

    async def _respond(self, client: ResponsesClient, body: dict[str, Any]) -> Response:
        mapper, emit = self.mapper, self.ctx.emit
        response = mapper.start_response()
        with self.watch.section():
            async with client.stream(body) as events:
                while True:
                    with self.watch.section():
                        event = await events.next()
                    if self.watch.fired:
                        break
                    if event is None:
                        raise ModelError("the model API ended the stream before `response.completed`; retry")
                    for harness_event in mapper.feed(event):
                        await emit(harness_event)
                    if response.error is not None:
                        raise response.error
                    if response.completed:
                        break
        return response

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
            decision: ApprovalDecision | None = None
            with self.watch.section():  # an interrupt withdraws the question (the runner settles it)
                decision = await self.ctx.request_approval(
                    ApprovalRequested(
                        request_id=f"approve-{call.call_id}",
                        tool_id=call.call_id,
                        display=display,
                        reason=f"approval policy {self.spec.approval.value!r}: each command and edit is "
                        "asked",
                    )
                )
            if decision is None:
                await self._finish(call, display, ToolStatus.FAILED, "interrupted while waiting for approval")
                return None
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
                output=bounded_head(outcome.output),
                is_error=outcome.is_error,
            )
        )
        return outcome.output

    async def _finish(
        self, call: wire.ToolCall, display: HarnessToolDetails, status: ToolStatus, message: str
    ) -> str:
        final = display.model_copy(update={"status": status, "summary": bounded_tail(message)})
        await self.ctx.emit(
            ToolResult(tool_id=call.call_id, name=call.name, display=final, output=message, is_error=True)
        )
        return message
