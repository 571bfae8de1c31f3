"""`LiveRun`, the run object: one provider call from `run_started` to exactly one `done`, and its stream.

Layer: core runtime. Knows the provider interface, the event pipe, the approval broker and the run state;
knows nothing of any concrete provider, of how the run was found and checked (`api`), or of rendering.
Its owners and its guarantees whatever the provider does: docs/runs.md.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from harness_core._logging import get_logger
from harness_core._provider_interface import ProviderOptions, RunContext
from harness_core._run.approvals import ApprovalBroker, Approver
from harness_core._run.budget import Budget
from harness_core._run.changes.tracker import FileTracker
from harness_core._run.channel import Channel
from harness_core._run.context import ProviderContext
from harness_core._run.pipe import EventCallback, EventPipe
from harness_core._run.run_files import RunLogs
from harness_core._run.started import capabilities_of, run_started_event
from harness_core._run.state import RunState
from harness_core._run.structured import structured_result
from harness_core._run.tool_policy import SESSION_NOTICES, tool_policy
from harness_core.capabilities import Capability
from harness_core.errors import (
    HarnessError,
    IdleTimeoutError,
    InterruptedRunError,
    LogWriteFailedError,
    ProviderCrashedError,
    UnsupportedFeatureError,
)
from harness_core.events import (
    Done,
    ErrorEvent,
    ErrorInfo,
    HarnessEvent,
    HarnessResult,
    RunStarted,
    RunStatus,
    SessionTurn,
)
from harness_core.plugins import PluginHost
from harness_core.spec import AgentRunSpec

if TYPE_CHECKING:
    from harness_core._run.probe import ProbedProvider
    from harness_core.tools.server import ToolServer

__all__ = ["LiveRun", "Play", "Steer"]

Play = Callable[[AgentRunSpec, ProviderOptions, RunContext], Awaitable[HarnessResult]]
"""What plays the turn: the provider's `run` (the default), or a live session's `turn`."""
Steer = Callable[[str, RunContext], Awaitable[bool]]
"""What `LiveRun.steer` calls: a live session's `steer`."""

_FLUSH_EVERY = 0.05
_HARD_STOP_DEADLINE = 15.0
_monotonic = time.monotonic


class LiveRun:
    """A run in progress: iterate it for events; `interrupt()` to stop the turn; `result` once done.

    `run_id`, `provider` (its name) and `log_path` (None without a run log) are known from the start;
    `result` once `finished` is set. Created by an owner, with `logs` opened and `provider` probed (see the
    module docstring); nothing runs until the owner awaits `drive()`.
    """

    def __init__(self, spec: AgentRunSpec, provider: ProbedProvider, *, host: PluginHost, run_id: str,
                 logs: RunLogs | None = None, approver: Approver | None = None, on_event: EventCallback | None = None,
                 buffer: int = 256, interrupt_grace: float = 5.0, play: Play | None = None,
                 steer: Steer | None = None, session_turn: SessionTurn | None = None,
                 budget: Budget | None = None, idle_interrupts: bool = False,
                 tools: ToolServer | None = None) -> None:
        self._run_id = run_id
        self._provider_name = provider.name
        self._logs = logs if logs is not None else RunLogs()
        self._log_path: Path | None = self._logs.path
        self._result: HarnessResult | None = None
        self._finished = anyio.Event()
        self._spec = spec
        self._probed = provider
        self._grace = interrupt_grace
        self._log = get_logger("harness.run").bind(run_id=run_id, provider=provider.name)
        self._channel: Channel[HarnessEvent] = Channel(buffer)
        self._caught_up: Callable[[], None] | None = None
        self._play: Play = play if play is not None else provider.instance.run
        self._idle_interrupts = idle_interrupts
        self._stopped_by_runner = False
        self._steer = steer
        self._session_turn = session_turn
        self._host = host
        self._tool_server = tools  # its calls ask this run's approvals; its interrupt cancels them
        if budget is None:
            budget = Budget.of(spec)
        self._state = RunState(run_id, provider.name, budget, on_over_budget=self.interrupt)
        self._files = FileTracker(spec.cwd)
        self._pipe = EventPipe(run_id=run_id, channel=self._channel, logs=self._logs, state=self._state, host=host,
                               on_event=on_event, log=self._log, tracks_idle=spec.idle_timeout is not None,
                               files=self._files)
        given = tools.tools if tools is not None else ()
        self._tools = tool_policy(spec, provider.registered.cls.info, capabilities_of(provider),
                                  tuple(t.name for t in given), (t.name for t in given if t.requires_approval))
        broker = ApprovalBroker(spec=spec, host=host, approver=approver, pipe=self._pipe, state=self._state,
                                log=self._log, runner_decides=self._tools.decide)
        self._interrupt = anyio.Event()
        self._interrupted_at: float | None = None
        self._hard_stopped: str | None = None  # why the runner stopped the provider: "grace_expired" or "stop"
        self._ctx = ProviderContext(run_id=run_id, spec=self._tools.played, cli=provider.cli, pipe=self._pipe,
                                    broker=broker, logs=self._logs, interrupt=self._interrupt, log=self._log,
                                    provider=provider.name,
                                    trace_context=lambda: host.trace_context(run_id))
        self._files.recorder = self._ctx.record_file_read  # its reads go into the wire log, if any
        self._hard_stop = anyio.CancelScope()  # entered by `drive`; cancelling it first still takes effect
        self._driven = False
        self._log_failure: LogWriteFailedError | None = None
        self._log_failed: tuple[Path, OSError] | None = None
        self._logs.on_failure(self._log_write_failed)
        self._pipe.unwritten_done = self._log_failed_result

    # --- what is known of the run ---------------------------------------------------------------------------
    @property
    def run_id(self) -> str:
        """The run's id: its log is `<runs dir>/<run_id>.jsonl` (`harness show RUN_ID`). Known from the start."""
        return self._run_id

    @property
    def provider(self) -> str:
        """The name of the provider playing the run (an alias given is resolved to the provider's own name)."""
        return self._provider_name

    @property
    def log_path(self) -> Path | None:
        """The run log being written (`<run_id>.jsonl`), complete once `finished`; None with `run_log=False`."""
        return self._log_path

    @property
    def result(self) -> HarnessResult | None:
        """The outcome (status, final text, usage, error, ...), the same as the `done` event's; None until
        `finished` is set. `await wait()` drains the stream and returns it."""
        return self._result

    @property
    def finished(self) -> anyio.Event:
        """Set once the run has ended: `done` published, its log closed, `result` set (`await
        live.finished.wait()` waits for that without reading the stream; the events then stay unread)."""
        return self._finished

    @property
    def stopped_by_runner(self) -> bool:
        """Set once done when the runner cut the provider's call short (grace expired, `stop()`, idle timeout):
        the agent may still be playing the turn (a live session's owner then closes the session)."""
        return self._stopped_by_runner

    @property
    def session_turn(self) -> SessionTurn | None:
        """Which turn of which session this run is (`open_session`); None for a run of its own (`open_run`)."""
        return self._session_turn

    def flush_log(self) -> None:
        """Write out what the run's log holds in memory now: a background worker does before it gives out the
        run's id, so that a run whose first line cannot be written is not started (the run stops).

        Raises:
            LogWriteFailedError: a write of the log failed (a full disk), now or earlier ("not started").
        """
        self._pipe.flush()
        if self._log_failed is not None:
            raise LogWriteFailedError(*self._log_failed, outcome="the run was not started")

    # --- the consumer's side -------------------------------------------------------------------------------
    def __aiter__(self) -> AsyncIterator[HarnessEvent]:
        return self._iterate()

    def _iterate(self) -> AsyncIterator[HarnessEvent]:
        return self._channel.items(self._on_caught_up)

    def _on_caught_up(self) -> None:
        self._pipe.flush()  # caught up with the provider: the log is current while we wait
        if self._caught_up is not None:
            self._caught_up()

    def when_caught_up(self, callback: Callable[[], None] | None) -> None:
        """Call `callback` (None: stop) whenever the consumer has taken every event so far and waits for more:
        when to write out what it buffered (the CLI's view, `--json`: batches, yet every slow token at once)."""
        self._caught_up = callback

    def share_log_lines(self) -> Callable[[HarnessEvent], bytes | None]:
        """For `--json`: each event's run-log line (scrubbed, no newline), once, else None (`log_line`)."""
        return self._pipe.share_lines()

    def log_line(self, event: HarnessEvent) -> bytes:
        """`event`'s run-log line (without the newline), secrets scrubbed: what `--json` prints."""
        return self._pipe.log_line(event)

    def scrubbed(self, text: str) -> str:
        """`text` with this run's secrets hidden, as its log hides them: for what the caller writes of the run
        (the answer `harness run` prints or writes to `--output-last-message`)."""
        return self._logs.secrets.text(text)

    def interrupt(self) -> None:
        """Ask the provider to stop the turn; stop it hard if it has not finished after the grace period."""
        if self.finished.is_set() or self._interrupt.is_set():
            return
        self._interrupted_at = _monotonic()
        self._ctx.record_interrupt("interrupt")  # into the wire log, if any: a replay interrupts here too
        self._interrupt.set()

    async def steer(self, text: str) -> bool:
        """Add `text` to the turn while it runs (the agent reads it before its next step). False when the turn
        was already over (nothing was sent).

        Raises:
            UnsupportedFeatureError: the provider cannot steer, or this run is not a turn of a live session.
            HarnessError: the agent refused the input (what the provider raised)."""
        if self._steer is None:
            live = self.session_turn is not None and self.session_turn.live
            why = "steering adds input to a turn of a live session (`open_session`)" if not live else ""
            providers = self._host.providers_with(Capability.STEER) if self._host is not None else []
            raise UnsupportedFeatureError(self.provider, Capability.STEER.value, providers, why)
        if self.finished.is_set() or self._interrupt.is_set() or not text.strip():
            return False
        return await self._steer(text, self._ctx)

    def stop(self) -> None:
        """Stop the run now, without the grace period (a second Ctrl-C): the child is shut down (bounded), the
        stream still ends with its `done`, status `interrupted`."""
        self._interrupt.set()
        if not self.finished.is_set():
            self._ctx.record_interrupt("stop")  # into the wire log, if any
            self._hard_stopped = self._hard_stopped or "stop"
            self._hard_stop.cancel()

    async def wait(self) -> HarnessResult:
        """Drain the remaining events and return the result."""
        async for _ in self:
            pass
        await self.finished.wait()
        assert self.result is not None
        return self.result

    # --- the owner's side ----------------------------------------------------------------------------------
    async def aclose(self) -> None:
        """The consumer is done with the stream (it finished, left early or was cancelled); events still go to
        the log. A run still going is interrupted, given `interrupt_grace` seconds, stopped hard, and waited for
        (bounded for providers that honour cancellation; one that does not is logged, and its driver waits).
        Shielded: an owner awaits it from a scope that may be the one being cancelled."""
        self._channel.leave()
        if self.finished.is_set():
            return
        self.interrupt()
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(self._grace):
                await self.finished.wait()
            if not self.finished.is_set():
                self.stop()
            with anyio.move_on_after(_HARD_STOP_DEADLINE):
                await self.finished.wait()
            if not self.finished.is_set():
                self._log.error("the provider ignored the hard stop; waiting for it to return")

    async def drive(self) -> None:
        """Play the run: `run_started`, the provider's `run`, the final events, `done`; then close the stream
        and the logs. Call it once, from the owner's task group. Returns when `finished` is set; whatever the
        provider does ends in the result, not in an exception."""
        if self._driven:
            raise RuntimeError(f"run {self.run_id} is already driven; a LiveRun plays one turn")
        self._driven = True
        started = _monotonic()
        provider_result: HarnessResult | None = None
        error: ErrorInfo | None = None
        idle_fired = False
        try:
            self._starting()
            await self._pipe.publish(self._run_started())
            for notice in self._tools.notices:
                if notice.code in SESSION_NOTICES and self._session_turn is not None and self._session_turn.index:
                    continue  # about the session's tools, not the turn's: said on its first turn
                await self._pipe.publish(notice)
            # Shielded from the owner's cancellation: `aclose` turns that into interrupt → grace → hard stop, which
            # cancels `scope` (a shield stops outer cancellation, not the cancelling of scopes inside it).
            with anyio.CancelScope(shield=True), self._hard_stop as scope:
                async with anyio.create_task_group() as inner:
                    inner.start_soon(self._flush_periodically)
                    inner.start_soon(self._stop_after_grace)
                    if self._spec.idle_timeout is not None:
                        inner.start_soon(self._watch_idle, self._spec.idle_timeout)
                    if self._tool_server is not None:
                        self._tool_server.host = self._ctx
                    try:
                        provider_result = await self._play(self._tools.played, self._probed.options, self._ctx)
                    except Exception as raised:  # noqa: BLE001 - a crashing provider still gets a clean `done`
                        error = self._classify(raised)
                    finally:
                        if self._tool_server is not None:  # a call still in progress has nobody left to answer
                            self._tool_server.host = None
                            with anyio.CancelScope(shield=True):  # its approval settled before `done`, bounded
                                await self._tool_server.stop_calls("the agent's turn ended before it finished")
                        self._ctx.provider_returned()  # a task it left behind may not emit any more
                    inner.cancel_scope.cancel()
            self._stopped_by_runner = scope.cancelled_caught and provider_result is None
            idle_fired = self._state.idle_fired
            if self._log_failure is not None:
                error = self._log_failure.to_info()
            elif idle_fired:
                error = IdleTimeoutError(
                    f"no event for {self._spec.idle_timeout:g} s; the run was stopped. Raise idle_timeout "
                    "(--idle-timeout) if the agent legitimately works that long in silence."
                ).to_info()
            elif self.stopped_by_runner and error is None:  # a result that came back as the stop landed counts
                error = self._hard_stop_error()
        finally:
            with anyio.CancelScope(shield=True):
                await self._finish(provider_result, error, idle_fired, started)

    # --- inside the run ------------------------------------------------------------------------------------

    def _starting(self) -> None:
        """`harness_run_starting`, once, before `run_started` (skipped when no plugin implements it)."""
        host = self._host
        if not host.observes_runs:
            return
        turn = self._session_turn
        try:
            host.pm.hook.harness_run_starting(run_id=self._run_id, spec=self._tools.played,
                                              provider=self._provider_name,
                                              session_id=turn.session if turn is not None else None,
                                              secrets=self._logs.secrets.known)
        except Exception:  # noqa: BLE001 - observers must not break runs
            self._log.exception("harness_run_starting plugin raised; ignored")

    def _run_started(self) -> RunStarted:
        """The run's first event (a replay overrides it: the options as recorded)."""
        return run_started_event(self._spec, self._probed, self.session_turn)

    def _hard_stop_error(self) -> ErrorInfo:
        """The error of a run the runner stopped (the provider did not end it): `interrupted`, like a run the
        provider ended, with `details["stopped_by"] == "runner"` and why (`reason`), so the two can be told
        apart (the contract suite does)."""
        if self._hard_stopped == "grace_expired":
            return InterruptedRunError(
                f"the provider did not stop within {self._grace:g} s of the interrupt; the runner stopped it hard",
                stopped_by="runner", reason="grace_expired").to_info()
        return InterruptedRunError("the run was stopped at once, without waiting for the provider",
                                   stopped_by="runner", reason="stop").to_info()

    def _classify(self, raised: Exception) -> ErrorInfo:
        """What a provider raised, as the run's error: a `HarnessError` as it is, anything else a crash."""
        exc = _unwrap(raised)
        if isinstance(exc, HarnessError):
            return exc.to_info()
        self._log.error("provider crashed", exc_info=raised)
        return ProviderCrashedError(
            f"provider {self.provider!r} crashed: {type(exc).__name__}: {exc}. This is a bug in the provider; "
            "please report it with the run log.").to_info()

    def _log_write_failed(self, path: Path, exc: OSError) -> None:
        """A write of the run's log failed (a full disk): stop the run now; it ends with `log_write_failed`."""
        self._log_failure = LogWriteFailedError(path, exc)
        self._log_failed = (path, exc)
        if not self._state.closing:
            self._hard_stopped = self._hard_stopped or "log_write_failed"
            self._hard_stop.cancel()

    def _log_failed_result(self, result: HarnessResult) -> HarnessResult:
        """The result of a run whose log could not be written: `failed` with `log_write_failed`, whatever the
        provider returned (its answer and usage kept)."""
        if self._log_failure is None:
            return result
        return result.model_copy(update={"status": RunStatus.FAILED, "error": self._log_failure.to_info()})

    async def _flush_periodically(self) -> None:
        """Buffered log lines reach the disk within `_FLUSH_EVERY` seconds even while the stream never pauses."""
        while True:
            await anyio.sleep(_FLUSH_EVERY)
            self._pipe.flush()

    async def _stop_after_grace(self) -> None:
        await self._interrupt.wait()
        asked = self._interrupted_at if self._interrupted_at is not None else _monotonic()
        await anyio.sleep(max(0.0, asked + self._grace - _monotonic()))
        self._hard_stopped = self._hard_stopped or "grace_expired"
        self._hard_stop.cancel()

    async def _watch_idle(self, idle_seconds: float) -> None:
        while True:
            remaining = self._state.idle_for(idle_seconds)
            if remaining is None:  # a human deciding, or a consumer behind: the clock restarts after
                await anyio.sleep(idle_seconds)
            elif remaining <= 0:
                self._state.idle_fired = True
                if self._idle_interrupts:  # a live process outlives the run: stop its turn first (grace, hard stop)
                    self.interrupt()
                else:
                    self._hard_stop.cancel()
                return
            else:
                await anyio.sleep(remaining)

    async def _finish(self, provider_result: HarnessResult | None, error: ErrorInfo | None, idle_fired: bool,
                      started: float) -> None:
        """The final events, then `done`; then the stream ends and the logs close (called shielded)."""
        state = self._state
        state.closing = True
        self._pipe.flush()  # the run's events are on disk before its result is settled: a failed write shows now
        result = state.result(provider_result, error, idle_fired=idle_fired,
                              interrupt_requested=self._interrupt.is_set(),
                              duration_ms=int((_monotonic() - started) * 1000))
        if self._spec.output_schema is not None:
            result = structured_result(result, self._spec.output_schema)
        if self._log_failure is not None:
            result = self._log_failed_result(result)
            self._logs.resume()  # the last lines (the error, `done`) may still fit: the reader then knows why
        stopped = self._interrupt.is_set() or idle_fired or state.over_budget is not None
        for closing in state.closing_results(result.status, stopped=stopped):  # every tool_use gets its tool_result
            await self._publish_final(closing)
        error = result.error
        by_provider = error is not None and error.details.get("stopped_by") == "provider"
        if error is not None and error.code not in state.error_codes and not by_provider:
            await self._publish_final(ErrorEvent(error=error))  # a failure (or a hard stop) always shows as an event
        result = await self._files_changed(result)
        done = Done(result=result)
        await self._publish_final(done)  # its line is written before anyone sees it: a `done` that could not be
        self._result = done.result  # written says `log_write_failed` (the pipe's `unwritten_done`)
        self._pipe.close()
        self._logs.close()
        self.finished.set()

    async def _files_changed(self, result: HarnessResult) -> HarnessResult:
        """`files_changed` (when a tool announced a file change), and the result naming those files."""
        try:
            changed = self._files.files_changed()
        except Exception:  # noqa: BLE001 - the run still ends with its `done`
            self._log.exception("reading the files the run changed failed")
            return result
        if changed is None:
            return result
        await self._publish_final(changed)
        return result.model_copy(update={"files_changed": tuple(f.path for f in changed.files)})

    async def _publish_final(self, event: HarnessEvent) -> None:
        try:
            await self._pipe.publish(event)
        except Exception:  # noqa: BLE001 - the log must still get its `done`
            self._log.exception("failed to deliver a final event", type=event.type)


def _unwrap(exc: BaseException) -> BaseException:
    """The meaningful error inside (nested) exception groups: the first `HarnessError`, else the first leaf."""
    leaves: list[BaseException] = []
    stack = [exc]
    while stack:
        current = stack.pop(0)
        inner = getattr(current, "exceptions", None)
        if isinstance(inner, (list, tuple)) and inner:
            stack.extend(inner)
        else:
            leaves.append(current)
    for leaf in leaves:
        if isinstance(leaf, HarnessError):
            return leaf
    return leaves[0] if leaves else exc
