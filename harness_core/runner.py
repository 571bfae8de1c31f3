"""The provider-neutral run: pre-flight checks, stamping, the run log, approvals, idle timeout, interrupt.

Layer: core runtime. Knows the `Provider` interface and the plugin host; knows nothing of any concrete
provider, wire protocol or rendering.

Guarantees, whatever the provider does (returns, raises, hangs, or its child dies):
- nothing is spawned unless the provider exists, its options validate, it declares every capability the spec
  needs, and its CLI probe passes (`open_run` raises the `HarnessError` instead);
- `run_started` is the first event and exactly one `done` is the last, in the stream and in the run log;
- `seq` is gap-free from 0 and every event is logged (and flushed) before anyone else sees it;
- an interrupt asks the provider to stop the turn, and after `interrupt_grace` seconds stops it hard.

Events flow provider → `emit` (stamp, log, observers) → a bounded stream → the consumer. When the consumer
is slow, `emit` waits, the provider stops reading its child's pipe, and the child blocks: memory stays bounded.
"""

from __future__ import annotations

import inspect
import json
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import structlog
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from harness_core import __version__
from harness_core.capabilities import Capability, missing_capabilities
from harness_core.errors import (
    HarnessError,
    IdleTimeoutError,
    InterruptedRunError,
    InvalidSpecError,
    ProviderCrashedError,
    SpawnFailedError,
    UnsupportedFeatureError,
)
from harness_core.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    ContextUsage,
    Done,
    ErrorEvent,
    ErrorInfo,
    HarnessEvent,
    HarnessResult,
    RunStarted,
    RunStatus,
    SessionStarted,
    ToolResult,
    ToolStatus,
    ToolUse,
    Usage,
)
from harness_core.plugins import PluginHost, RegisteredProvider, get_host
from harness_core._provider import CliInfo, Provider, ProviderOptions
from harness_core.spec import AgentRunSpec
from harness_core.transport import ChildProcess
from harness_core.store import LogWriter, log_path, new_run_id, redact, resolve_runs_dir, scrub, wire_path

__all__ = ["Approver", "EventCallback", "LiveRun", "open_run", "run", "run_sync", "preflight"]

_log = structlog.get_logger(__name__)

Approver = Callable[[ApprovalRequested], "ApprovalDecision | Awaitable[ApprovalDecision]"]
EventCallback = Callable[[HarnessEvent], "Awaitable[None] | None"]

_CAPABILITY_WHY = {
    Capability.SESSION: "the spec resumes a session",
    Capability.APPROVALS: "the spec's approval policy asks before acting",
}
_NO_APPROVER = (
    "no approver decided: pass approver= to run(), answer interactively with `harness run --approval "
    "on-request` on a terminal, install a harness_approve plugin, or use --approval never"
)
_CHECKED = frozenset({RunStarted, Done, ApprovalResolved})
_TRACKED = frozenset({ToolUse, ToolResult, SessionStarted, ContextUsage, ErrorEvent})
_FINAL_SEND_DEADLINE = 5.0
_HARD_STOP_DEADLINE = 15.0
_PROBE_DEADLINE = 30.0
_FLUSH_EVERY = 0.05
_wall_clock = time.time
_monotonic = time.monotonic


def preflight(
    spec: AgentRunSpec, provider: str | None, host: PluginHost
) -> tuple[RegisteredProvider, Provider[Any], ProviderOptions]:
    """Resolve the provider, validate its options and check capabilities; spawns nothing.

    Raises:
        ProviderNotFoundError: no provider by that name.
        UnsupportedFeatureError: the spec needs a capability the provider does not declare.
        InvalidSpecError: `provider_options` do not validate.
    """
    registered = host.get(provider)
    instance = registered.cls()
    declared = registered.cls.info.capabilities
    missing = missing_capabilities(spec.needed_capabilities(), declared)
    if missing:
        cap = missing[0]
        why = _CAPABILITY_WHY.get(cap, "the operation requires it")
        if cap is Capability.APPROVALS:
            why = f"approval policy {spec.approval.value!r} needs it"
        raise UnsupportedFeatureError(registered.name, cap.value, host.providers_with(cap), why)
    options = instance.parse_options(spec.provider_options)
    return registered, instance, options


class _Context:
    """The `RunContext` handed to the provider, and the runner's own bookkeeping for one run."""

    def __init__(
        self,
        *,
        run_id: str,
        spec: AgentRunSpec,
        provider_name: str,
        host: PluginHost,
        send: MemoryObjectSendStream[HarnessEvent],
        writer: LogWriter | None,
        wire: LogWriter | None,
        approver: Approver | None,
        on_event: EventCallback | None,
    ) -> None:
        self._run_id = run_id
        self._spec = spec
        self._host = host
        self._send = send
        self._send_nowait = send.send_nowait
        self._tracks_idle = spec.idle_timeout is not None
        self._writer = writer
        self._wire = wire
        self._approver = approver
        self._on_event = on_event
        self._observe = host.observes_events
        self._seq = 0
        self._consumer_gone = False
        self._interrupt = anyio.Event()
        self._log = structlog.get_logger("harness.run").bind(run_id=run_id, provider=provider_name)
        self.cli = CliInfo()
        self.last_event = time.monotonic()
        self.pending_approvals = 0
        self.session_id: str | None = None
        self.last_usage: Usage | None = None
        self.idle_fired = False
        self.closing = False
        self.waiting_for_consumer = 0
        self.error_codes: set[str] = set()
        self._resolved_approvals: set[str] = set()
        self._known_secrets = tuple(v for v in spec.env.values() if len(v) >= 6)
        self.open_tools: dict[str, ToolUse] = {}

    # --- RunContext protocol -----------------------------------------------------------------------------

    @property
    def run_id(self) -> str:
        return self._run_id

    @property
    def log(self) -> Any:
        return self._log

    @property
    def interrupt_requested(self) -> anyio.Event:
        return self._interrupt

    async def emit(self, event: HarnessEvent) -> None:
        if event.seq != -1:  # the provider emitted this object before: stamp a copy, never the queued original
            event = event.model_copy()
        if type(event) in _CHECKED and not self._admit(event):
            return
        if not self._record(event):
            await self._deliver(event)

    async def publish(self, event: HarnessEvent) -> None:
        """Stamp, log, observe and deliver one event (the runner's own path; `emit` is the provider's)."""
        if not self._record(event):
            await self._deliver(event)

    def _record(self, event: HarnessEvent) -> bool:
        """The hot path of every run, synchronous on purpose: stamp, log, track, observe, and hand the event
        to the consumer if there is room. Returns False when `_deliver` must finish the job (it waits)."""
        fields = event.__dict__  # stamped in place, once, before anyone else sees the event
        fields["run_id"] = self._run_id
        fields["seq"] = self._seq
        fields["ts"] = _wall_clock()
        self._seq += 1
        if self._tracks_idle:
            self.last_event = _monotonic()
        if self._writer is not None:
            self._writer.write_line(event.__pydantic_serializer__.to_json(event))
        if type(event) in _TRACKED:
            self._track(event)
        if self._observe:
            try:
                self._host.pm.hook.harness_on_event(event=event)
            except Exception:  # noqa: BLE001 - observers must not break runs
                self._log.exception("harness_on_event plugin raised; ignored")
        if self._on_event is not None:
            return False
        if self._consumer_gone:
            self.flush()
            return True
        try:
            self._send_nowait(event)
        except anyio.WouldBlock:
            return False
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self._consumer_gone = True
        return True

    async def _deliver(self, event: HarnessEvent) -> None:
        """The slow path: an `on_event` callback, or waiting for room (backpressure)."""
        if self._on_event is not None:
            self.waiting_for_consumer += 1  # the callback is the consumer's time, not the agent's silence
            try:
                with anyio.move_on_after(_FINAL_SEND_DEADLINE if self.closing else math.inf) as waited:
                    outcome = self._on_event(event)
                    if inspect.isawaitable(outcome):
                        await outcome
                if waited.cancelled_caught:
                    self._log.error("on_event callback did not return; skipped for the final events", type=event.type)
            except Exception:  # noqa: BLE001 - the caller's callback must not cost it the event, nor blame the provider
                self._log.exception("on_event callback raised; ignored", type=event.type)
            finally:
                self.waiting_for_consumer -= 1
                self.last_event = _monotonic()
        if self._consumer_gone:
            self.flush()
            return
        try:
            self._send_nowait(event)
            return
        except anyio.WouldBlock:
            pass
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self._consumer_gone = True
            return
        self.flush()  # about to wait for the consumer: the log must be current while we do
        self.waiting_for_consumer += 1  # a slow consumer is not an idle agent: the watchdog waits meanwhile
        try:
            if self.closing:  # the final events: a consumer that stopped reading must not hold the run open
                with anyio.move_on_after(_FINAL_SEND_DEADLINE) as waited:
                    await self._send.send(event)
                if waited.cancelled_caught:
                    self._consumer_gone = True
            else:
                await self._send.send(event)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self._consumer_gone = True
        finally:
            self.waiting_for_consumer -= 1
            self.last_event = _monotonic()

    def _track(self, event: HarnessEvent) -> None:
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

    def flush(self) -> None:
        """Write out buffered log lines (called whenever the run is about to wait for anything)."""
        if self._writer is not None:
            self._writer.flush()
        if self._wire is not None:
            self._wire.flush()

    async def request_approval(self, request: ApprovalRequested) -> ApprovalDecision:
        self.pending_approvals += 1
        try:
            try:
                await self.emit(request)  # logged before it may wait for room: settle it even if cut short here
                self.flush()  # a human may take a while: the request must be in the log meanwhile
                decision, by, reason = await self._decide(request)
            except BaseException:  # cancelled (interrupt, the CLI withdrew it, the run ended): settle it anyway
                with anyio.CancelScope(shield=True), anyio.move_on_after(_FINAL_SEND_DEADLINE):
                    await self.emit(ApprovalResolved(request_id=request.request_id, decision=ApprovalDecision.ABORT,
                                                     decided_by="runner", reason="the run ended before a decision"))
                raise
            await self.emit(
                ApprovalResolved(request_id=request.request_id, decision=decision, decided_by=by, reason=reason)
            )
            return decision
        finally:
            self.pending_approvals -= 1
            self.last_event = _monotonic()

    def _admit(self, event: HarnessEvent) -> bool:
        """The rare events a provider may not emit as they are (off the hot path)."""
        if isinstance(event, (RunStarted, Done)):
            self._log.warning("provider emitted a runner-owned event; ignored", type=event.type)
            return False
        if isinstance(event, ApprovalResolved):
            return self.first_resolution(event)
        return True

    def first_resolution(self, event: ApprovalResolved) -> bool:
        """Exactly one `approval_resolved` per request, whoever settles it first (callback, provider, runner)."""
        if event.request_id in self._resolved_approvals:
            self._log.debug("duplicate approval_resolved dropped", request_id=event.request_id)
            return False
        self._resolved_approvals.add(event.request_id)
        return True

    async def _decide(self, request: ApprovalRequested) -> tuple[ApprovalDecision, Any, str | None]:
        if self._approver is not None:
            try:
                outcome = self._approver(request)
                decision = await outcome if inspect.isawaitable(outcome) else outcome
                return ApprovalDecision(decision), "callback", None
            except Exception as exc:  # noqa: BLE001 - a broken approver denies, it does not crash the run
                self._log.exception("approver raised; denying")
                return ApprovalDecision.DENY, "callback", f"the approver raised {type(exc).__name__}: {exc}"
        try:
            hooked = self._host.pm.hook.harness_approve(request=request, spec=self._spec)
            if hooked is not None:
                return ApprovalDecision(hooked), "hook", None
        except Exception as exc:  # noqa: BLE001 - a broken policy plugin denies; it is not the provider's fault
            self._log.exception("harness_approve plugin failed; denying")
            return ApprovalDecision.DENY, "hook", f"a harness_approve plugin failed: {type(exc).__name__}: {exc}"
        return ApprovalDecision.DENY, "default", _NO_APPROVER

    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
              **options: Any) -> ChildProcess:
        on_line = self.record_wire if self._wire is not None else None  # no per-line call without a wire log
        return ChildProcess(argv, env=env, cwd=cwd, on_line=on_line, **options)

    def record_wire(self, direction: str, line: bytes | str) -> None:
        if self._wire is None:
            return
        raw = scrub(line.decode("utf-8", "replace") if isinstance(line, bytes) else line, self._known_secrets)
        record = {"dir": direction, "t": round(time.time(), 6), "line": raw}
        self._wire.write_line(json.dumps(record, ensure_ascii=False).encode())


class LiveRun:
    """A run in progress: iterate it for events; `interrupt()` to stop the turn; `result` once done."""

    def __init__(self, ctx: _Context, receive: MemoryObjectReceiveStream[HarnessEvent], log_file: Path | None,
                 provider: str, grace: float, tg: TaskGroup) -> None:
        self._ctx = ctx
        self._receive = receive
        self._grace = grace
        self._tg = tg
        self._hard_stop = anyio.CancelScope()  # entered by `_drive`; cancelling it first still takes effect
        self.run_id = ctx.run_id
        self.provider = provider
        self.log_path = log_file
        self.result: HarnessResult | None = None
        self.finished = anyio.Event()

    def __aiter__(self) -> AsyncIterator[HarnessEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[HarnessEvent]:
        receive = self._receive
        while True:
            try:
                event = receive.receive_nowait()
            except anyio.WouldBlock:
                self._ctx.flush()  # caught up with the provider: the log is current while we wait
                try:
                    event = await receive.receive()
                except anyio.EndOfStream:
                    return
            except anyio.EndOfStream:
                return
            yield event

    def interrupt(self) -> None:
        """Ask the provider to stop the turn; stop it hard if it has not finished after the grace period."""
        if self.finished.is_set() or self._ctx.interrupt_requested.is_set():
            return
        self._ctx.interrupt_requested.set()
        self._tg.start_soon(self._stop_after_grace)

    def stop(self) -> None:
        """Stop the run now, without the grace period (a second Ctrl-C). The child is shut down (bounded) and
        the stream still ends with its `done`, status `interrupted`."""
        self._ctx.interrupt_requested.set()
        if not self.finished.is_set():
            self._hard_stop.cancel()

    async def _stop_after_grace(self) -> None:
        with anyio.move_on_after(self._grace):
            await self.finished.wait()
        if not self.finished.is_set():
            self._hard_stop.cancel()

    async def wait(self) -> HarnessResult:
        """Drain the remaining events and return the result."""
        async for _ in self:
            pass
        await self.finished.wait()
        assert self.result is not None
        return self.result


@asynccontextmanager
async def open_run(
    spec: AgentRunSpec,
    provider: str | None = None,
    *,
    approver: Approver | None = None,
    on_event: EventCallback | None = None,
    runs_dir: str | Path | None = None,
    run_log: bool = True,
    record_wire: bool = False,
    host: PluginHost | None = None,
    run_id: str | None = None,
    buffer: int = 256,
    interrupt_grace: float = 5.0,
) -> AsyncIterator[LiveRun]:
    """Start a run and give it to the caller live.

    Raises (before anything is spawned): ProviderNotFoundError, UnsupportedFeatureError, InvalidSpecError,
    CliNotFoundError, CliVersionUnsupportedError. Everything after that ends in the `done` event's result. An
    exception raised by the caller's own block propagates unchanged (not wrapped in an exception group), after
    the run was interrupted and its log completed. Leaving the block early interrupts the run, waits
    `interrupt_grace`, then stops it hard; that bound holds for providers that honour cancellation.
    """
    _quiet_logging_unless_configured()
    host = host or get_host()
    registered, instance, options = preflight(spec, provider, host)
    cli = await _probe(instance, options, registered.name)
    rid = run_id or new_run_id()
    writer = wire = None
    directory = resolve_runs_dir(runs_dir)
    if run_log:
        writer = _open_log(log_path(directory, rid))
        if record_wire:
            wire = _open_log(wire_path(directory, rid))
    send, receive = anyio.create_memory_object_stream[HarnessEvent](buffer)
    ctx = _Context(run_id=rid, spec=spec, provider_name=registered.name, host=host, send=send, writer=writer,
                   wire=wire, approver=approver, on_event=on_event)
    ctx.cli = cli
    thrown: BaseException | None = None
    try:
        async with anyio.create_task_group() as tg:
            live = LiveRun(ctx, receive, writer.path if writer else None, registered.name, interrupt_grace, tg)
            tg.start_soon(_drive, live, ctx, instance, registered, spec, options, send)
            try:
                yield live
            except BaseException as exc:
                thrown = exc
                raise
            finally:
                receive.close()  # the consumer is gone (or cancelled): events still go to the log
                if not live.finished.is_set():
                    # Interrupt, wait the grace period, then stop hard — here, shielded, because the caller's
                    # scope may be the one being cancelled (the provider is shielded from it in `_drive`).
                    ctx.interrupt_requested.set()
                    with anyio.CancelScope(shield=True):
                        with anyio.move_on_after(interrupt_grace):
                            await live.finished.wait()
                        if not live.finished.is_set():
                            live._hard_stop.cancel()
                        with anyio.move_on_after(_HARD_STOP_DEADLINE):
                            await live.finished.wait()
                        if not live.finished.is_set():
                            ctx.log.error("the provider ignored the hard stop; waiting for it to return")
    except BaseException as group:
        # The task group wraps what the caller's own block raised; give the caller its exception back unchanged.
        inner = getattr(group, "exceptions", None)
        if thrown is not None and group is not thrown and inner is not None and len(inner) == 1 and inner[0] is thrown:
            raise thrown from None
        raise
    finally:
        for w in (writer, wire):
            if w is not None:
                w.close()


async def _probe(instance: Provider[Any], options: ProviderOptions, name: str) -> CliInfo:
    """The provider's probe, under a deadline; anything but a `HarnessError` is the provider's bug."""
    try:
        with anyio.fail_after(_PROBE_DEADLINE):
            return await instance.probe(options)
    except HarnessError:
        raise
    except TimeoutError:
        raise SpawnFailedError(
            f"provider {name!r} took more than {_PROBE_DEADLINE:g} s to check its CLI; run its `--version` by hand "
            "to see why (a first run may be installing something)", provider=name) from None
    except Exception as exc:
        raise ProviderCrashedError(
            f"provider {name!r} failed while checking its CLI: {type(exc).__name__}: {exc}. This is a bug in the "
            "provider; `harness doctor` shows the details", provider=name) from exc


def _open_log(path: Path) -> LogWriter:
    try:
        return LogWriter(path)
    except FileExistsError:
        raise InvalidSpecError(f"a run log for run id {path.stem!r} already exists in {path.parent}; "
                               "pass a new run id (or none)") from None
    except OSError as exc:
        raise InvalidSpecError(
            f"cannot write run logs in {path.parent}: {exc.strerror or exc}; pass --runs-dir DIR or set "
            "HARNESS_RUNS_DIR to a writable directory") from None


async def _flusher(ctx: _Context) -> None:
    """Buffered log lines reach the disk within `_FLUSH_EVERY` seconds even while the stream never pauses."""
    while True:
        await anyio.sleep(_FLUSH_EVERY)
        ctx.flush()


def _quiet_logging_unless_configured() -> None:
    """structlog's unconfigured default prints every level to stdout, which would put debug lines in the
    output of any program using Harness as a library. Unless the application configured structlog itself (the
    CLI does), send only warnings and errors to stderr."""
    if not structlog.is_configured():
        import logging
        import sys

        structlog.configure(
            wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
            logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        )


async def _drive(live: LiveRun, ctx: _Context, instance: Provider[Any], registered: RegisteredProvider,
                 spec: AgentRunSpec, options: ProviderOptions, send: MemoryObjectSendStream[HarnessEvent]) -> None:
    started = time.monotonic()
    provider_result: HarnessResult | None = None
    error: ErrorInfo | None = None
    idle_fired = False
    try:
        await ctx.publish(RunStarted(
            provider=registered.name,
            provider_version=registered.distribution_version or registered.cls.info.version,
            cli_version=ctx.cli.version,
            capabilities=sorted(registered.cls.info.capabilities, key=lambda c: c.value),
            spec=_redacted_spec(spec, __version__),
        ))
        # Shielded from the caller's cancellation: `open_run` turns that into interrupt → grace → hard stop, which
        # cancels `scope` (a shield stops outer cancellation, not the cancelling of scopes inside it).
        with anyio.CancelScope(shield=True), live._hard_stop as scope:
            async with anyio.create_task_group() as inner:
                inner.start_soon(_flusher, ctx)
                if spec.idle_timeout is not None:
                    inner.start_soon(_watchdog, ctx, spec.idle_timeout, scope)
                try:
                    provider_result = await instance.run(spec, options, ctx)
                except Exception as raised:  # a crashing provider still gets a clean `done`
                    exc = _unwrap(raised)
                    if isinstance(exc, HarnessError):
                        error = exc.to_info()
                    else:
                        ctx.log.error("provider crashed", exc_info=raised)
                        error = ProviderCrashedError(
                            f"provider {registered.name!r} crashed: {type(exc).__name__}: {exc}. This is a bug in "
                            "the provider; please report it with the run log.").to_info()
                inner.cancel_scope.cancel()
        if scope.cancelled_caught:
            idle_fired = ctx.idle_fired
            if idle_fired:
                error = IdleTimeoutError(
                    f"no event for {spec.idle_timeout:g} s; the run was stopped. Raise --idle-timeout if the "
                    "agent legitimately works that long in silence."
                ).to_info()
            elif error is None:
                error = InterruptedRunError("the run was interrupted and stopped").to_info()
    finally:
        with anyio.CancelScope(shield=True):
            ctx.closing = True
            result = _final_result(ctx, provider_result, error, idle_fired, started, registered.name)
            for use in list(ctx.open_tools.values()):  # every tool_use gets its tool_result, even when cut short
                display = use.display.model_copy(update={
                    "status": ToolStatus.FAILED,
                    "summary": f"the run ended ({result.status.value}) before it finished",
                })
                await _emit_quietly(ctx, ToolResult(tool_id=use.tool_id, name=use.name, display=display, is_error=True))
            if result.error is not None and result.error.code not in ctx.error_codes:
                await _emit_quietly(ctx, ErrorEvent(error=result.error))  # a failure always shows as an event
            await _emit_quietly(ctx, Done(result=result))
            ctx.flush()
            live.result = result
            live.finished.set()
            send.close()


def _unwrap(exc: BaseException) -> BaseException:
    """The meaningful error inside (nested) exception groups: the first `HarnessError`, else the first leaf."""
    leaves: list[BaseException] = []
    stack = [exc]
    while stack:
        current = stack.pop(0)
        inner = getattr(current, "exceptions", None)
        if isinstance(inner, (list, tuple)) and isinstance(current, BaseException) and inner:
            stack.extend(inner)
        else:
            leaves.append(current)
    for leaf in leaves:
        if isinstance(leaf, HarnessError):
            return leaf
    return leaves[0] if leaves else exc


async def _emit_quietly(ctx: _Context, event: HarnessEvent) -> None:
    try:
        await ctx.publish(event)
    except Exception:  # the log must still get its `done`
        ctx.log.exception("failed to deliver a final event")


def _final_result(ctx: _Context, provider_result: HarnessResult | None, error: ErrorInfo | None,
                  idle_fired: bool, started: float, provider: str) -> HarnessResult:
    duration_ms = int((time.monotonic() - started) * 1000)
    if provider_result is not None and error is None:
        status = provider_result.status
        return provider_result.model_copy(update={
            "run_id": ctx.run_id, "provider": provider, "duration_ms": duration_ms,
            "session_id": provider_result.session_id or ctx.session_id,
            "status": status,
        })
    if error is None:  # cancelled from outside (the caller's scope), not by us
        error = InterruptedRunError("the run was cancelled by its caller").to_info()
    interrupted = not idle_fired and (error.code == "interrupted" or ctx.interrupt_requested.is_set())
    return HarnessResult(
        status=RunStatus.INTERRUPTED if interrupted else RunStatus.FAILED,
        session_id=ctx.session_id,
        usage=ctx.last_usage or Usage(),
        duration_ms=duration_ms,
        error=error,
        run_id=ctx.run_id,
        provider=provider,
    )


async def _watchdog(ctx: _Context, idle_seconds: float, scope: anyio.CancelScope) -> None:
    while True:
        if ctx.pending_approvals or ctx.waiting_for_consumer:
            # A human deciding, or a consumer behind: the agent is not idle. The clock restarts after.
            await anyio.sleep(idle_seconds)
            continue
        remaining = ctx.last_event + idle_seconds - time.monotonic()
        if remaining <= 0:
            ctx.idle_fired = True
            scope.cancel()
            return
        await anyio.sleep(remaining)


def _redacted_spec(spec: AgentRunSpec, harness_version: str) -> dict[str, Any]:
    data = spec.model_dump(mode="json")
    data["env"] = redact(data.get("env", {}), all_values=True)
    data["provider_options"] = redact(data.get("provider_options", {}))
    data["harness_version"] = harness_version
    return data


async def run(spec: AgentRunSpec, provider: str | None = None, **kwargs: Any) -> HarnessResult:
    """Run `spec` to the end and return its result (keyword arguments as for `open_run`)."""
    async with open_run(spec, provider, **kwargs) as live:
        return await live.wait()


def run_sync(spec: AgentRunSpec, provider: str | None = None, *, backend: str = "asyncio",
             **kwargs: Any) -> HarnessResult:
    """Blocking convenience for scripts: `run_sync(AgentRunSpec(prompt="..."))`."""

    async def main() -> HarnessResult:
        return await run(spec, provider, **kwargs)

    return anyio.run(main, backend=backend)
