"""The `RunContext` a provider gets for one run: emit, approvals, the interrupt flag, its child, the wire log.

Layer: core runtime (the provider-facing edge of the runner). Thin on purpose: it composes the event pipe,
the approval broker and the run's logs, and adds only what is the provider's side of them — the events a
provider may not emit as they are, and the child process with wire recording wired in. Knows nothing of any
concrete provider, of the consumer or of cancel scopes.

The wire log (`<run_id>.wire.jsonl`, written only with `record_wire`) has one JSON record per line, each with
`dir` and `t` (seconds since the epoch): a `header` first (`write_wire_header`); for each child, `spawn`, then
`out` / `in` (a line to / from it, `line`), `err` (a chunk of its stderr, `line`), `close` (its stdin closed),
`eof` (its stdout ended) and `exit` (`code`); and `file` (a side input the provider read: `name`, `data`, null
when there was none) and `approval` (`request_id`, `decision`). A provider's own `record_wire` calls add `in` /
`out` records outside any child. Every record is scrubbed by the run's `RunSecrets`. `harness replay`
(`harness_core._run.replay`) plays it back.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

import anyio

from harness_core import __version__
from harness_core._logging import BoundLogger
from harness_core._provider import CliInfo
from harness_core._run.approvals import ApprovalBroker
from harness_core._run.logs import RunLogs
from harness_core._run.pipe import EventPipe
from harness_core.events import ApprovalDecision, ApprovalRequested, ApprovalResolved, Done, HarnessEvent, RunStarted
from harness_core.spec import AgentRunSpec
from harness_core.transport import ChildProcess

__all__ = ["WIRE_FORMAT", "ProviderContext", "write_wire_header"]

WIRE_FORMAT = 2
"""The wire log's format: 2 has the header and the `spawn`/`err`/`close`/`eof`/`exit`/`file`/`approval` records; a
file without a header (format 1) has only `in` and `out`."""

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
        decision = await self._broker.request(request)
        if self._wire is not None:
            self._write_record({"dir": "approval", "request_id": request.request_id, "decision": decision.value})
        return decision

    async def read_side_input(self, name: str, read: Callable[[], bytes | None]) -> bytes | None:
        data = await anyio.to_thread.run_sync(read)
        if self._wire is not None:
            text = None if data is None else data.decode("utf-8", "replace")
            self._write_record({"dir": "file", "name": name, "data": text})
        return data

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
        on_record = self._record_child if self._wire is not None else None
        if self._wire is not None:
            self._write_record({"dir": "spawn"})  # what follows, up to its `exit`, is this child's
        return ChildProcess(argv, env=env, cwd=self._spec.cwd if cwd is None else cwd, on_line=on_line,
                            on_record=on_record, **options)

    def record_wire(self, direction: str, line: bytes | str) -> None:
        if self._wire is None:
            return
        raw = self._secrets.text(line.decode("utf-8", "replace") if isinstance(line, bytes) else line)
        record = {"dir": direction, "t": round(time.time(), 6), "line": raw}
        self._wire.write_line(json.dumps(record, ensure_ascii=False).encode())

    def _record_child(self, kind: str, data: bytes) -> None:
        """The child's other wire facts (`ChildProcess(on_record=...)`): its stderr, its stdin closed, the end of
        its stdout, its exit status."""
        if kind == "err":
            self.record_wire("err", data)
        elif kind == "exit":
            self._write_record({"dir": "exit", "code": int(data)})
        else:
            self._write_record({"dir": kind})

    def _write_record(self, record: dict[str, Any]) -> None:
        assert self._wire is not None
        line = json.dumps({"dir": record["dir"], "t": round(time.time(), 6), **record}, ensure_ascii=False)
        self._wire.write_line(self._secrets.text(line).encode())

    def _admit(self, event: HarnessEvent) -> bool:
        """The rare events a provider may not emit as they are: `run_started` and `done` are the runner's, and
        an approval is resolved once (the provider may settle one itself: a request its CLI withdrew)."""
        if isinstance(event, (RunStarted, Done)):
            self._log.warning("provider emitted a runner-owned event; ignored", type=event.type)
            return False
        if isinstance(event, ApprovalResolved):
            return self._broker.first_resolution(event)
        return True


def write_wire_header(logs: RunLogs, *, run_id: str, provider: str, provider_version: str, cli: CliInfo,
                      spec: dict[str, Any]) -> None:
    """The wire log's first record (a no-op without one): who ran, with which CLI, and the spec as `run_started`
    logs it (already redacted), so `harness replay` needs nothing else."""
    if logs.wire is None:
        return
    record = {"dir": "header", "t": round(time.time(), 6), "format": WIRE_FORMAT, "run_id": run_id,
              "provider": provider, "provider_version": provider_version, "harness_version": __version__,
              "cli": cli.model_dump(mode="json"), "spec": spec}
    logs.wire.write_line(logs.secrets.text(json.dumps(record, ensure_ascii=False)).encode())
