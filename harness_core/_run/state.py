"""What the runner knows about one run while it lives, and the result it ends with.

Layer: core runtime (the runner's bookkeeping). Knows events and results; knows nothing of the stream, the
log, providers or cancel scopes. The pipe feeds it (`track`) and pauses its idle clock while someone other than
the agent is slow; the run object reads it to spot a silent agent and to build the final `done`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType

from harness_core._run.budget import Budget
from harness_core.errors import BudgetExceededError, InterruptedRunError
from harness_core.events import (
    ContextUsage,
    ErrorEvent,
    ErrorInfo,
    HarnessEvent,
    HarnessResult,
    RunStatus,
    SessionStarted,
    ToolResult,
    ToolStatus,
    ToolUse,
    Usage,
)

__all__ = ["TRACKED", "RunState"]

TRACKED = frozenset({ToolUse, ToolResult, SessionStarted, ContextUsage, ErrorEvent})
"""The event types `RunState.track` learns from (the pipe skips the call for every other type)."""

_monotonic = time.monotonic


class RunState:
    """One run's bookkeeping: tools still open, the session, the last usage, the errors shown, the idle clock.

    The idle clock is `last_event` (monotonic): the time of the last event, restarted whenever a pause ends.
    It is paused while an approval waits on a human (`pending_approvals`) and while the consumer is the slow
    one (`waiting_for_consumer`: a full stream, or an `on_event` callback running): only a silent agent trips
    the idle timeout. `closing` is set once the provider is done and the runner emits the final events.
    """

    def __init__(self, run_id: str, provider: str, budget: Budget | None = None,
                 on_over_budget: Callable[[], None] | None = None) -> None:
        self.run_id = run_id
        self.provider = provider
        self.open_tools: dict[str, ToolUse] = {}
        self.session_id: str | None = None
        self.last_usage: Usage | None = None
        self.error_codes: set[str] = set()
        self.last_event = _monotonic()
        self.pending_approvals = 0
        self.waiting_for_consumer = 0
        self.idle_fired = False
        self.closing = False
        self.budget = budget
        self.over_budget: BudgetExceededError | None = None
        """The first budget limit the run's usage went past (the run object then interrupts the run)."""
        self._on_over_budget = on_over_budget

    def track(self, event: HarnessEvent) -> None:
        """Learn from one event of a `TRACKED` type (called by the pipe, after stamping, for those only)."""
        if isinstance(event, ErrorEvent):
            self.error_codes.add(event.error.code)
        elif isinstance(event, ToolUse):
            self.open_tools[event.tool_id] = event
        elif isinstance(event, ToolResult):
            self.open_tools.pop(event.tool_id, None)
        elif isinstance(event, SessionStarted):
            self.session_id = event.session_id
        elif isinstance(event, ContextUsage) and not event.cumulative:
            self.last_usage = event.usage
            if self.budget is not None and self.over_budget is None:
                self.over_budget = self.budget.over(event.usage)
                if self.over_budget is not None and self._on_over_budget is not None:
                    self._on_over_budget()

    # --- the idle clock ------------------------------------------------------------------------------------

    def consumer_wait(self) -> IdlePause:
        """`with state.consumer_wait():` around time that is the consumer's, not the agent's silence."""
        return IdlePause(self, approval=False)

    def approval_wait(self) -> IdlePause:
        """`with state.approval_wait():` around an approval request, from emitting it to its resolution."""
        return IdlePause(self, approval=True)

    def idle_for(self, idle_seconds: float) -> float | None:
        """Seconds left before `idle_seconds` of silence (≤ 0: the agent is idle); None while paused."""
        if self.pending_approvals or self.waiting_for_consumer:
            return None
        return self.last_event + idle_seconds - _monotonic()

    # --- the end -------------------------------------------------------------------------------------------

    def closing_results(self, status: RunStatus, *, stopped: bool = False) -> list[ToolResult]:
        """A result for every tool still open, so every `tool_use` gets its `tool_result`: `interrupted` when
        the run was asked to stop (`stopped`: an interrupt, a budget, the idle timeout), else `failed`."""
        closed = []
        for use in self.open_tools.values():
            display = use.display.model_copy(update={
                "status": ToolStatus.INTERRUPTED if stopped else ToolStatus.FAILED,
                "summary": f"the run ended ({status.value}) before it finished",
            })
            closed.append(ToolResult(tool_id=use.tool_id, name=use.name, display=display, is_error=True))
        return closed

    def result(self, provider_result: HarnessResult | None, error: ErrorInfo | None, *, idle_fired: bool,
               interrupt_requested: bool, duration_ms: int) -> HarnessResult:
        """The run's final result: the provider's own (completed with what the runner knows) when it returned
        one and nothing went wrong, else one built from `error` and the state. A run that went over its budget
        (while it ran, or by the provider's final figures) is `failed` with `budget_exceeded`, whatever it
        returned, its answer and usage kept."""
        over = self.over_budget
        if over is None and self.budget is not None and provider_result is not None:
            over = self.budget.over(provider_result.usage)
        if over is not None and (error is None or error.code == InterruptedRunError.code):
            kept = provider_result or HarnessResult(status=RunStatus.FAILED, usage=self.last_usage or Usage())
            return kept.model_copy(update={
                "status": RunStatus.FAILED, "error": over.to_info(), "run_id": self.run_id, "provider": self.provider,
                "duration_ms": duration_ms, "session_id": kept.session_id or self.session_id,
            })
        if provider_result is not None and error is None:
            return provider_result.model_copy(update={
                "run_id": self.run_id, "provider": self.provider, "duration_ms": duration_ms,
                "session_id": provider_result.session_id or self.session_id,
                "error": _interrupted_error(provider_result),
            })
        if error is None:  # cancelled from outside (the owner's scope), not by the runner
            error = InterruptedRunError("the run was cancelled by its caller").to_info()
        # A budget stop is a failure even though the runner interrupted the run for it (the provider may raise it).
        interrupted = not idle_fired and error.code != BudgetExceededError.code and (
            error.code == "interrupted" or interrupt_requested)
        return HarnessResult(
            status=RunStatus.INTERRUPTED if interrupted else RunStatus.FAILED,
            session_id=self.session_id,
            usage=self.last_usage or Usage(),
            duration_ms=duration_ms,
            error=error,
            run_id=self.run_id,
            provider=self.provider,
        )


def _interrupted_error(result: HarnessResult) -> ErrorInfo | None:
    """The error of a result the provider returned: an `interrupted` one always carries code `interrupted`
    (`stopped_by="provider"`: it ended the turn itself; the runner's hard stop says `stopped_by="runner"`)."""
    error = result.error
    if result.status is not RunStatus.INTERRUPTED or (error is not None and error.code == "interrupted"):
        return error
    if error is None:
        return InterruptedRunError("the run was interrupted; the provider ended the turn",
                                   stopped_by="provider").to_info()
    details = {**error.details, "stopped_by": "provider", "provider_code": error.code}  # no clash with arguments
    return ErrorInfo(code=InterruptedRunError.code, message=error.message, retryable=error.retryable, details=details)


class IdlePause:
    """A pause of the idle clock (nestable); the clock restarts from zero when it ends."""

    __slots__ = ("_approval", "_state")

    def __init__(self, state: RunState, *, approval: bool) -> None:
        self._state = state
        self._approval = approval

    def __enter__(self) -> None:
        if self._approval:
            self._state.pending_approvals += 1
        else:
            self._state.waiting_for_consumer += 1

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        state = self._state
        if self._approval:
            state.pending_approvals -= 1
        else:
            state.waiting_for_consumer -= 1
        state.last_event = _monotonic()
