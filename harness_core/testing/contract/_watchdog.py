"""The contract's watchdog over one played run: it stops a run that shows no progress for longer than its scenario
needs, so a provider that hangs (an error it swallowed, a message it waits for) fails in seconds, naming the scenario.

Layer: testing (private helper of the contract suite). Knows the scenario vocabulary, events and the scripted
backend's request record; knows no provider and nothing of the runner beyond the cancel scope it runs in.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio

from harness_core.events import ApprovalRequested, ApprovalResolved, ErrorEvent, HarnessEvent, RunStarted
from harness_core.scripted.backends import Exchange
from harness_core.scripted.scenarios import RunCommand, Say, Scenario, Stall, TakeLong, command_sleep

__all__ = ["Watchdog", "scenario_pause"]


def scenario_pause(scenario: Scenario, idle_timeout: float | None = None) -> float:
    """The longest a run of `scenario` legitimately goes without an event or a model request: a stall (cut short
    by `idle_timeout`, when the spec has one), a slow turn (`TakeLong`, consecutive ones added up), the pause
    between two chunks of a slow answer, the `sleep` of a command."""
    longest, waiting = 0.0, 0.0
    for step in scenario.steps:
        if isinstance(step, TakeLong):
            waiting += step.seconds
            longest = max(longest, waiting)
            continue
        waiting = 0.0
        if isinstance(step, Stall):
            longest = max(longest, step.seconds if idle_timeout is None else min(step.seconds, idle_timeout))
        elif isinstance(step, Say):
            longest = max(longest, step.delay)
        elif isinstance(step, RunCommand):
            longest = max(longest, command_sleep(step.command))
    return longest


class Watchdog:
    """Watches one run (`async with dog.watching():` around it; feed it `saw_event` from the consumer's loop and
    `saw_request` from the scripted backend's `on_request`). The run is stopped — and `hung` says why — when,
    before any sign of the agent (an event after `run_started`, a request to the backend), `start_within` seconds
    pass, or later `hang_within` seconds plus the scenario's own longest pause pass without any. While an approval
    waits for its decision the watchdog waits too (the approver's time is not the provider's), but no longer than
    that: the contract's approvers answer at once, so an approval still open then (a provider that emitted
    `approval_requested` itself, and hung) is a hang."""

    def __init__(self, scenario: Scenario, *, start_within: float, hang_within: float,
                 idle_timeout: float | None = None) -> None:
        self.scenario = scenario
        self.start_within = start_within
        self.pause = scenario_pause(scenario, idle_timeout)
        self.quiet_within = hang_within + self.pause
        """Seconds without a sign of progress once the agent showed one: `hang_within` plus the scenario's pause."""
        self.hung: str | None = None
        """Why the run was stopped (None: it was not)."""
        self.stop: Callable[[], None] | None = None
        """How to stop the run at once when it hangs (`LiveRun.stop`: no interrupt grace for a provider that shows
        no sign of life); without it the block is cancelled and the runner interrupts, waits its grace, stops."""
        self._began = time.monotonic()
        self._last = self._began  # a float store: safe from the backend's threads
        self._last_sign = "nothing yet"
        self._started = False
        self._approvals = 0
        self._resolved: anyio.Event | None = None

    def saw_event(self, event: HarnessEvent) -> None:
        if isinstance(event, RunStarted):
            return
        if isinstance(event, ApprovalRequested):
            self._approvals += 1
        elif isinstance(event, ApprovalResolved):
            self._approvals = max(0, self._approvals - 1)
            if self._resolved is not None:
                self._resolved.set()
        what = f"event #{event.seq} {event.type}"
        if isinstance(event, ErrorEvent):
            what += f" ({event.error.code}: {event.error.message[:120]})"
        self._mark(what)

    def saw_request(self, exchange: Exchange) -> None:
        """A request reached the scripted backend (called on the backend's handler thread)."""
        self._mark(f"{'a model' if exchange.turn else 'a side'} request {exchange.method} {exchange.path}")

    def _mark(self, what: str) -> None:
        self._started = True
        self._last_sign = f"{what}, {time.monotonic() - self._began:.1f} s into the run"
        self._last = time.monotonic()

    def _due(self) -> float:
        return self._last + (self.quiet_within if self._started else self.start_within)

    @asynccontextmanager
    async def watching(self) -> AsyncIterator[None]:
        """Run the block under the watchdog: cancelled (the `async with` then simply ends, `hung` set) when the run
        shows no progress in time. What the block raises comes out as it is, not in an exception group."""
        raised: BaseException | None = None
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._watch, tg.cancel_scope)
            try:
                yield
            except anyio.get_cancelled_exc_class():
                raise
            except BaseException as exc:  # noqa: BLE001 - re-raised below, outside the task group
                raised = exc
            finally:
                tg.cancel_scope.cancel()
        if raised is not None:
            raise raised

    async def _watch(self, scope: anyio.CancelScope) -> None:
        while True:
            if self._approvals:  # the approver's time is not the provider's, but the contract's answers at once
                self._resolved = anyio.Event()
                with anyio.move_on_after(self.quiet_within):
                    await self._resolved.wait()
                    continue
                self.hung = (f"an approval waited {self.quiet_within:g} s for its decision (the contract's approver "
                             "answers at once): approval_requested with no approval_resolved; the last sign of the "
                             f"agent was {self._last_sign}")
                self._stop(scope)
                return
            remaining = self._due() - time.monotonic()
            if remaining > 0:  # at most `quiet_within`: once the agent shows a sign the due time moves closer
                await anyio.sleep(min(remaining, self.quiet_within))
                continue
            if self._started:
                allowed = f"{self.quiet_within:g} s" + (f" ({self.pause:g} s the scenario itself waits, plus "
                                                        f"`hang_within`)" if self.pause else "")
                self.hung = (f"nothing happened for {allowed}: no event, no model request; the last sign of the "
                             f"agent was {self._last_sign}")
            else:
                self.hung = (f"the agent showed no sign of life within {self.start_within:g} s (no event after "
                             "run_started, no request to the scripted backend)")
            self._stop(scope)
            return

    def _stop(self, scope: anyio.CancelScope) -> None:
        if self.stop is not None:
            self.stop()
        scope.cancel()
