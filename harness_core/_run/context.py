"""The `RunContext` a provider gets for one run: emit, approvals, the interrupt flag, its child, the wire log.

Layer: core runtime (the provider-facing edge of the runner). Thin on purpose: it composes the event pipe, the
approval broker and the run's logs, and adds only the provider's side of them. Knows nothing of any concrete
provider, of the consumer or of cancel scopes. The wire log's records are `wirelog.WireWriter`'s.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

import anyio

from harness_core._logging import BoundLogger
from harness_core._provider_interface import CliInfo
from harness_core._run.approvals import ApprovalBroker
from harness_core._run.pipe import EventPipe
from harness_core._run.run_files import RunLogs
from harness_core.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    Done,
    HarnessEvent,
    RunStarted,
    ToolResult,
    ToolStatus,
)
from harness_core.spec import AgentRunSpec
from harness_core.transport import ChildProcess

__all__ = ["ProviderContext", "cut_short"]

_CHECKED = frozenset({RunStarted, Done, ApprovalResolved})
"""Event types a provider may not emit as they are (checked off the hot path)."""


class ProviderContext:
    """The runner's `RunContext` implementation (see `harness_core.provider.RunContext` for the contract)."""

    def __init__(self, *, run_id: str, spec: AgentRunSpec, cli: CliInfo, pipe: EventPipe, broker: ApprovalBroker,
                 logs: RunLogs, interrupt: anyio.Event, log: BoundLogger, provider: str = "",
                 trace_context: Callable[[], dict[str, str]] | None = None) -> None:
        self._run_id = run_id
        self._trace_context = trace_context
        self._provider = provider
        self._returned = False
        self._spec = spec
        self._cli = cli
        self._record = pipe.record
        self._deliver = pipe.deliver
        self._broker = broker
        self._wire = logs.recorder
        self._interrupt = interrupt
        self._log = log
        self._pipe = pipe
        self._interrupts: set[str] = set()  # the `interrupt` records written (one per kind)
        self._stopping = False  # an interrupt or stop was asked for: a tool result from now on was cut short

    @property
    def run_id(self) -> str:
        return self._run_id

    @property
    def log(self) -> BoundLogger:
        return self._log

    @property
    def cli(self) -> CliInfo:
        return self._cli

    @property
    def interrupt_requested(self) -> anyio.Event:
        return self._interrupt

    async def emit(self, event: HarnessEvent) -> None:
        pending = self.emit_now(event)
        if pending is not None:
            await pending

    def emit_now(self, event: HarnessEvent) -> Awaitable[None] | None:
        if self._returned:
            self._refuse_late(event.type)
        if event.seq != -1:  # the provider emitted this object before: stamp a copy, never the queued original
            event = event.model_copy()
        if type(event) in _CHECKED:
            admitted = self._admit(event)
            if admitted is None:
                return None
            event = admitted
        if self._stopping and event.__class__ is ToolResult:
            event = cut_short(event)
        if self._record(event):
            return None
        return self._deliver(event)

    async def request_approval(self, request: ApprovalRequested) -> ApprovalDecision:
        return await self._request_approval(request, harness_own=False)

    async def request_tool_approval(self, request: ApprovalRequested) -> ApprovalDecision:
        """A request Harness makes itself, for a Python tool with `requires_approval` (`ToolHost`): decided by the
        operation's approver, never approved by the runner for a raised policy."""
        return await self._request_approval(request, harness_own=True)

    async def _request_approval(self, request: ApprovalRequested, *, harness_own: bool) -> ApprovalDecision:
        if self._returned:
            self._refuse_late(request.type)
        resolved = await self._broker.request(request, harness_own=harness_own)
        if self._wire is not None:
            self._wire.record({"dir": "approval", "request_id": request.request_id, "shown_as": resolved.request_id,
                                "decision": resolved.decision.value, "decided_by": resolved.decided_by,
                                "reason": resolved.reason})
        return resolved.decision

    async def withdraw_approval(self, request_id: str, reason: str) -> None:
        if self._returned:
            self._refuse_late("approval_resolved")
        await self._broker.withdraw(request_id, reason)

    def clock(self) -> float:
        now = time.monotonic()
        if self._wire is not None:
            self._wire.record({"dir": "clock", "value": now})
        return now

    async def read_side_input(self, name: str, read: Callable[[], bytes | None]) -> bytes | None:
        data = await anyio.to_thread.run_sync(read)
        if self._wire is not None:
            text = None if data is None else data.decode("utf-8", "replace")
            self._wire.record({"dir": "file", "name": name, "data": text})
        return data

    def record_file_read(self, name: str, data: str) -> None:
        """The runner read a file of the workspace (the change tracker): a `file` record, so a replay reads the
        same (a no-op without a wire log)."""
        if self._wire is not None:
            self._wire.record({"dir": "file", "name": name, "data": data})

    def record_interrupt(self, how: str) -> None:
        """The runner was asked to interrupt the turn (`how="interrupt"`) or stop the run (`"stop"`): the first
        time, an `interrupt` record with the seq of the last event published so far (a no-op without a wire log),
        so a replay interrupts where the recorded run was interrupted. From then on every tool result is
        `cut_short`."""
        self._stopping = True
        if self._wire is None or how in self._interrupts:
            return
        self._interrupts.add(how)
        # The pipe's next seq (EventPipe has no public accessor for it yet).
        self._wire.record({"dir": "interrupt", "how": how, "after_seq": self._pipe.last_seq})

    def provider_returned(self) -> None:
        """The provider's `run` returned (or raised, or was stopped): from now on `emit` refuses (the runner's
        final events and `done` do not go through this context)."""
        self._returned = True

    def _refuse_late(self, kind: str) -> NoReturn:
        """An event from a provider whose `run` already returned (a task it left running): never logged, never
        delivered — the run's `done` is, or is about to be, the last event. Logged at error level, and raised
        into the task that emitted it."""
        self._log.error("provider emitted an event after its run returned; refused", type=kind,
                        refused="emitted_after_return")
        raise RuntimeError(
            f"provider {self._provider!r} emitted a {kind!r} event after its run returned; refused (the run is "
            "over: its `done` is the last event). This is a bug in the provider: wait for every task that emits "
            "before `run` returns.")

    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
              **options: Any) -> ChildProcess:
        if env is None:
            env = {**os.environ, **self._spec.env}
        cwd = self._spec.cwd if cwd is None else cwd
        if self._wire is None:  # no per-line call without a wire log
            return ChildProcess(argv, env=env, cwd=cwd, **options)
        recorder = self._wire.child()
        return ChildProcess(argv, env=env, cwd=cwd, on_line=recorder.line, on_record=recorder.record, **options)

    def trace_context(self) -> dict[str, str]:
        return self._trace_context() if self._trace_context is not None else {}

    def record_wire(self, direction: str, line: bytes | str) -> None:
        if self._wire is None:
            return
        self._wire.record({"dir": direction, "line": line.decode("utf-8", "replace") if isinstance(line, bytes)
                            else line})

    def _admit(self, event: HarnessEvent) -> HarnessEvent | None:
        """The rare events a provider may not emit as they are: `run_started` and `done` are the runner's (None:
        dropped), and an approval is resolved once, under the id the run shows (a provider withdraws one with
        `withdraw_approval`; an `approval_resolved` it emits, as providers once did, is still taken once)."""
        if isinstance(event, (RunStarted, Done)):
            self._log.warning("provider emitted a runner-owned event; ignored", type=event.type)
            return None
        if isinstance(event, ApprovalResolved):
            warnings.warn("a provider emitted approval_resolved, which the runner writes: withdraw a waiting request "
                          "with `await ctx.withdraw_approval(request_id, reason)` instead (emitting it is deprecated "
                          "and goes in the next release)", DeprecationWarning, stacklevel=4)
            return self._broker.provider_resolution(event)
        return event


def cut_short(event: ToolResult) -> ToolResult:
    """A tool result that came after the run was asked to stop, as every provider's is shown: status
    `interrupted` (the tool was cut short or never ran), whatever the agent said — a failure, a rejected use, or
    "completed" with a note that the command was cancelled — as an ACP client marks every unfinished call
    cancelled when it cancels. A declined tool stays declined; output and exit status are the agent's."""
    if event.display.status in (ToolStatus.DECLINED, ToolStatus.INTERRUPTED):
        return event
    return event.model_copy(update={"display": event.display.model_copy(update={"status": ToolStatus.INTERRUPTED})})
