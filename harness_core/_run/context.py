"""The `RunContext` a provider gets for one run: emit, approvals, the interrupt flag, its child, the wire log.

Layer: core runtime (the provider-facing edge of the runner). Thin on purpose: it composes the event pipe,
the approval broker and the run's logs, and adds only what is the provider's side of them — the events a
provider may not emit as they are, and the child process with wire recording wired in. Knows nothing of any
concrete provider, of the consumer or of cancel scopes.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

import anyio

from harness_core._logging import BoundLogger
from harness_core._provider import CliInfo
from harness_core._run.approvals import ApprovalBroker
from harness_core._run.logs import RunLogs
from harness_core._run.pipe import EventPipe
from harness_core.events import ApprovalDecision, ApprovalRequested, ApprovalResolved, Done, HarnessEvent, RunStarted
from harness_core.spec import AgentRunSpec
from harness_core.transport import ChildProcess

__all__ = ["ProviderContext"]

_CHECKED = frozenset({RunStarted, Done, ApprovalResolved})
"""Event types a provider may not emit as they are (checked off the hot path)."""


class ProviderContext:
    """The runner's `RunContext` implementation (see `harness_core.provider.RunContext` for the contract)."""

    def __init__(self, *, run_id: str, spec: AgentRunSpec, cli: CliInfo, pipe: EventPipe, broker: ApprovalBroker,
                 logs: RunLogs, interrupt: anyio.Event, log: BoundLogger, provider: str = "") -> None:
        self._run_id = run_id
        self._provider = provider
        self._returned = False
        self._spec = spec
        self._cli = cli
        self._record = pipe.record
        self._deliver = pipe.deliver
        self._broker = broker
        self._wire = logs.wire
        self._interrupt = interrupt
        self._log = log
        self._secrets = logs.secrets

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
        if self._returned:
            self._refuse_late(event.type)
        if event.seq != -1:  # the provider emitted this object before: stamp a copy, never the queued original
            event = event.model_copy()
        if type(event) in _CHECKED and not self._admit(event):
            return
        if not self._record(event):
            await self._deliver(event)

    async def request_approval(self, request: ApprovalRequested) -> ApprovalDecision:
        if self._returned:
            self._refuse_late(request.type)
        return await self._broker.request(request)

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
        on_line = self.record_wire if self._wire is not None else None  # no per-line call without a wire log
        if env is None:
            env = {**os.environ, **self._spec.env}
        return ChildProcess(argv, env=env, cwd=self._spec.cwd if cwd is None else cwd, on_line=on_line, **options)

    def record_wire(self, direction: str, line: bytes | str) -> None:
        if self._wire is None:
            return
        raw = self._secrets.text(line.decode("utf-8", "replace") if isinstance(line, bytes) else line)
        record = {"dir": direction, "t": round(time.time(), 6), "line": raw}
        self._wire.write_line(json.dumps(record, ensure_ascii=False).encode())

    def _admit(self, event: HarnessEvent) -> bool:
        """The rare events a provider may not emit as they are: `run_started` and `done` are the runner's, and
        an approval is resolved once (the provider may settle one itself: a request its CLI withdrew)."""
        if isinstance(event, (RunStarted, Done)):
            self._log.warning("provider emitted a runner-owned event; ignored", type=event.type)
            return False
        if isinstance(event, ApprovalResolved):
            return self._broker.first_resolution(event)
        return True
