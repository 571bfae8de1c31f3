"""Replay: a recorded wire log fed back through the provider's real `run` under the real runner.

Layer: core runtime (an owner of a `LiveRun`, like `api.open_run`). Knows the runner's parts (`LiveRun`, the
context, the approval broker) and the wire log as `wirelog` reads it; knows nothing of any concrete provider.

The seam is the child process: every provider reaches its CLI through `RunContext.spawn`, so replay gives it a
`ReplayProcess` instead, which plays the recorded child: its stdout lines in their recorded order, each held back
until the provider has sent as many lines as it had when the child printed it (an answer never overtakes its
question), the end of its stdout, its stderr and its exit status. Nothing sleeps the recorded gaps. Side inputs
(`read_side_input`) are answered from their `file` records, approvals as they were decided (the run log beside the
wire log, else the wire's `approval` records, else denied with a warning), the spec is the recorded (redacted) one
and the probe's `CliInfo` the recorded one: the real CLI is never run. So `run_started`, `done` and every event in
between come out as recorded, timestamps (`ts`) and the run's `duration_ms` aside.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio

from harness_core._run.approvals import ApprovalBroker, DecidedBy
from harness_core._run.context import ProviderContext
from harness_core._run.live import LiveRun
from harness_core._run.logs import RunLogs
from harness_core._run.pipe import EventCallback
from harness_core._run.wirelog import ChildScript, ScriptItem, WireLog, load_wire, method_and_id
from harness_core.errors import InvalidSpecError, MessageTooLargeError, ProcessExitedError
from harness_core.events import ApprovalDecision, ApprovalRequested, HarnessResult
from harness_core.plugins import PluginHost, get_host
from harness_core.spec import AgentRunSpec
from harness_core.transport import ChildProcess
from harness_core.transport.process import _describe_status

__all__ = ["ReplayProcess", "WireLog", "load_wire", "open_replay", "replay"]

_EOF_SETTLE = 1.0  # as the real child: the end of stdout waits this long for the exit
_STALL = 3.0
"""How long a run may go on once its recording is played out before the replay interrupts it (a recorded run
that was interrupted, whose trigger is not on the wire), beyond the spec's idle timeout."""


class ReplayProcess(ChildProcess):
    """A `ChildProcess` that plays a recorded child (`ChildScript`) instead of running one."""

    def __init__(self, script: ChildScript, argv: Sequence[str], warnings: list[str], played: Callable[[], None],
                 *, stdin: bool = True, stderr_tail_bytes: int = 64 * 1024, **_options: Any) -> None:
        super().__init__(argv, env={}, stdin=stdin, stderr_tail_bytes=stderr_tail_bytes, supervise=False)
        self._script = script
        self._warnings = warnings
        self._played = played
        self._sent = 0
        self._input_closed = False
        self._changed = anyio.Event()
        self._code: int | None = None
        self._next = 0
        self._exit = next((item for item in script.items if item.kind == "exit"), None)

    async def __aenter__(self) -> ReplayProcess:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    @property
    def pid(self) -> int:
        return 0

    @property
    def returncode(self) -> int | None:
        if self._code is None and self._exit is not None and self._released(self._exit):
            self._code = self._exit.code
        return self._code

    def _released(self, item: ScriptItem) -> bool:
        return item.after_outs <= self._sent and (self._input_closed or not item.after_close)

    async def _until_released(self, item: ScriptItem) -> None:
        while not self._released(item):
            changed = self._changed
            await changed.wait()

    def _bump(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def send_line(self, data: bytes | str) -> None:
        raw = data.encode() if isinstance(data, str) else data
        if b"\n" in raw:
            raise ValueError("send_line data must not contain a newline")
        if not self._want_stdin:
            raise RuntimeError("this ChildProcess was started with stdin=False")
        outs = self._script.outs
        if self._input_closed or (self._sent >= len(outs) and self.returncode is not None):
            raise self.exit_error("the child closed its input")
        if self._sent < len(outs):
            sent, recorded = method_and_id(raw.decode("utf-8", "replace")), outs[self._sent]
            if sent != recorded:
                self._warnings.append(f"line {self._sent + 1} sent to the child differs from the recording: "
                                      f"method/id {sent} instead of {recorded}")
        self._sent += 1
        self._bump()

    async def close_stdin(self) -> None:
        self._input_closed = True
        self._bump()

    def lines(self) -> _ReplayLines:  # type: ignore[override]  # the same async iterator of lines
        return _ReplayLines(self)

    async def _next_line(self) -> bytes | None:
        """The next recorded stdout line once it is due, or None at the end of stdout."""
        items = self._script.items
        while self._next < len(items):
            item = items[self._next]
            if item.kind == "exit":
                self._next += 1
                continue
            await self._until_released(item)
            self._next += 1
            if item.kind == "in":
                return item.line
            self._played()
            with anyio.move_on_after(_EOF_SETTLE):
                await self.wait()
            return None
        self._played()
        await anyio.sleep_forever()  # the recorded stdout never ended: it was stopped
        return None  # pragma: no cover

    async def remember_descendants(self) -> None:
        return

    def stderr_tail(self) -> str:
        return self._script.stderr.encode()[-self._stderr_tail_bytes:].decode("utf-8", "replace")

    async def wait(self) -> int:
        if self._exit is None:
            await anyio.sleep_forever()  # the recording ends before the child did
        assert self._exit is not None
        await self._until_released(self._exit)
        self._code = self._exit.code
        return self._code

    def exit_error(self, what: str) -> ProcessExitedError:
        code = self.returncode
        status = "still running" if code is None else _describe_status(code)
        return ProcessExitedError(f"{self.argv[0]}: {what} ({status})", exit_code=code,
                                  stderr_tail=self.stderr_tail())

    async def aclose(self) -> None:
        self._input_closed = True
        self._bump()
        if self._code is None and self._exit is not None:
            self._code = self._exit.code  # stopped at the end, as the recorded child was


class _ReplayLines:
    def __init__(self, process: ReplayProcess) -> None:
        self._process = process

    def __aiter__(self) -> _ReplayLines:
        return self

    async def __anext__(self) -> bytes | MessageTooLargeError:
        line = await self._process._next_line()
        if line is None:
            raise StopAsyncIteration
        return line


class _ReplayContext(ProviderContext):
    """The runner's context with the child, the side inputs and the wire log taken from the recording."""

    def __init__(self, wire: WireLog, played: Callable[[], None], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._recording = wire
        self._played = played
        self._spawned = 0
        self._warned_outside = False

    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
              **options: Any) -> ChildProcess:
        children = self._recording.children
        script = children[self._spawned] if self._spawned < len(children) else ChildScript()
        if self._spawned >= len(children):
            self._recording.warnings.append(f"the provider started child {self._spawned + 1}; the recording "
                                            f"has {len(children)}")
        self._spawned += 1
        return ReplayProcess(script, argv, self._recording.warnings, self._played, **options)

    def record_wire(self, direction: str, line: bytes | str) -> None:
        if direction in ("in", "out") and not self._warned_outside:
            self._warned_outside = True
            self._recording.warnings.append(
                "the provider exchanged lines outside a spawned child (its own `record_wire`): a replay plays only "
                "a child started with `ctx.spawn`, so it talked to the real thing again")

    async def read_side_input(self, name: str, read: Callable[[], bytes | None]) -> bytes | None:
        recorded = self._recording.side_inputs.get(name)
        if not recorded:
            self._recording.warnings.append(f"the provider read {name!r}, which the recording does not have")
            return None
        return recorded.popleft()


class _RecordedBroker(ApprovalBroker):
    """Decides each approval request as the recorded run did."""

    def __init__(self, wire: WireLog, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._recording = wire

    async def _decide(self, request: ApprovalRequested) -> tuple[ApprovalDecision, DecidedBy, str | None]:
        resolutions = self._recording.resolutions.get(request.request_id)
        if resolutions:
            resolved = resolutions.popleft()
            if resolved.decided_by == "runner":  # never decided: withdrawn, or the run ended first
                await anyio.sleep_forever()
            return resolved.decision, resolved.decided_by, resolved.reason
        decisions = self._recording.wire_decisions.get(request.request_id)
        if decisions:
            return ApprovalDecision(decisions.popleft()), "callback", None
        self._recording.warnings.append(f"no recorded decision for approval request {request.request_id}; denied")
        return ApprovalDecision.DENY, "default", "replay: the recording has no decision for this request"


@asynccontextmanager
async def open_replay(wire: WireLog | str | Path, provider: str | None = None, *, host: PluginHost | None = None,
                      on_event: EventCallback | None = None) -> AsyncIterator[LiveRun]:
    """Replay a recorded run (a `WireLog`, or the path of its `.wire.jsonl`) and give it to the caller live, as
    `open_run` does; `wire.warnings` then says what differed. No log is written and no CLI is run.

    Raises (before anything runs): InvalidSpecError (an unreadable wire log or recorded spec),
    ProviderNotFoundError, UnsupportedFeatureError.
    """
    from harness_core._run.api import ProbedProvider, preflight

    recording = wire if isinstance(wire, WireLog) else load_wire(wire, provider)
    name = provider or recording.provider
    host = host or get_host()
    fields = {k: v for k, v in recording.spec.items() if k != "harness_version"}
    try:
        spec = AgentRunSpec.model_validate(fields)
    except ValueError as exc:
        raise InvalidSpecError(f"the spec recorded in {recording.path} does not validate ({exc}); replay it with "
                               "the Harness version that recorded it") from None
    registered, instance, options = preflight(spec, name, host)
    probed = ProbedProvider(registered, instance, options, recording.cli)
    played = anyio.Event()
    live = LiveRun(spec, probed, host=host, run_id=recording.run_id, logs=RunLogs(), on_event=on_event)
    broker = _RecordedBroker(recording, spec=spec, host=host, approver=None, pipe=live._pipe, state=live._state,
                             log=live._log)
    live._ctx = _ReplayContext(recording, played.set, run_id=recording.run_id, spec=spec, cli=recording.cli,
                               pipe=live._pipe, broker=broker, logs=RunLogs(), interrupt=live._interrupt,
                               log=live._log, provider=registered.name)

    stall = _STALL + (spec.idle_timeout or 0.0)  # a recorded idle timeout fires first, as it did

    async def unstick() -> None:
        await played.wait()
        with anyio.move_on_after(stall):
            await live.finished.wait()
        if not live.finished.is_set():
            recording.warnings.append(f"the run went on {stall:g} s after its recording ended; interrupted it")
            live.interrupt()

    async with anyio.create_task_group() as tg:
        tg.start_soon(live.drive)
        tg.start_soon(unstick)
        try:
            yield live
        finally:
            await live.aclose()
            tg.cancel_scope.cancel()


async def replay(wire: WireLog | str | Path, provider: str | None = None, **kwargs: Any) -> HarnessResult:
    """Replay a recorded run to its end and return its result (keyword arguments as for `open_replay`)."""
    async with open_replay(wire, provider, **kwargs) as live:
        return await live.wait()
