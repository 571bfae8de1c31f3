"""The event path of one run: stamp → run log → state (and files) → `harness_on_event` → `on_event` → the consumer.

Layer: core runtime (the runner's hot path). Knows events, the run's logs and state, the plugin host and a
bounded channel (`channel.py`); knows nothing of providers, approvals or cancel scopes. Every event goes
through `record` (synchronous, cheap) and, when it must wait, `deliver`. Backpressure: docs/runs.md.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Awaitable, Callable

import anyio

from harness_core._logging import BoundLogger
from harness_core._run.changes.tracker import FILE_EVENTS, FileTracker
from harness_core._run.channel import Channel, ChannelClosed
from harness_core._run.held_deltas import HeldDeltas
from harness_core._run.run_files import RunLogs
from harness_core._run.state import TRACKED, RunState
from harness_core.events import Done, HarnessEvent, HarnessResult, ReasoningDelta, TextDelta, event_json
from harness_core.plugins import PluginHost
from harness_core.redaction import MIN_SECRET

__all__ = ["EventCallback", "EventPipe", "stamp"]

EventCallback = Callable[[HarnessEvent], "Awaitable[None] | None"]
"""`on_event`: called with every event, after the log and the observers, before the stream (may be async)."""

_FINAL_SEND_DEADLINE = 5.0
_DELTAS = (TextDelta, ReasoningDelta)
"""Streamed text, the hot path: a delta shorter than any secret is written as it is; a longer one gets a first
look at its text alone (not the whole serialised line) and is scrubbed only when that finds something. One whose
tail may begin a secret is held back (`HeldDeltas`) until the next event says whether the pieces complete it."""
_wall_clock = time.time
_monotonic = time.monotonic


def stamp(event: HarnessEvent, run_id: str, seq: int, ts: float) -> None:
    """Write the envelope into `event`, in place. Events are frozen for everyone else; the runner stamps each
    exactly once, before anyone sees it, through its `__dict__` (a validated copy would cost ~1 µs more)."""
    fields = event.__dict__
    fields["run_id"] = run_id
    fields["seq"] = seq
    fields["ts"] = ts


class EventPipe:
    """Stamps, logs, tracks, observes and delivers the events of one run, in that order."""

    def __init__(self, *, run_id: str, channel: Channel[HarnessEvent], logs: RunLogs,
                 state: RunState, host: PluginHost, on_event: EventCallback | None, log: BoundLogger,
                 tracks_idle: bool, files: FileTracker | None = None) -> None:
        self._run_id = run_id
        self._channel = channel
        self._channel_offer = channel.offer
        self._write_line = logs.events.write_line if logs.events is not None else None
        self._scrub = logs.secrets.json_line
        self._text_probe = logs.secrets.text_probe
        self._held = HeldDeltas(logs.secrets.known) if logs.secrets.known else None
        """Deltas held back while their tail may begin a secret (None: the run has no secret to hold for)."""
        self._logs = logs
        self._state = state
        self._host = host
        self._observe = host.observes_events
        self._on_event = on_event
        self._log = log
        self._tracks_idle = tracks_idle
        self._files = files
        self._seq = 0
        self._consumer_gone = False
        self._in_order = anyio.Lock()  # `deliver` with an `on_event` callback
        self._lines: dict[int, bytes] | None = None  # `share_lines`: seq -> its run-log line, until taken
        self.unwritten_done: Callable[[HarnessResult], HarnessResult] | None = None
        """What a `done` whose line could not be written says instead of its result (`log_write_failed`)."""

    @property
    def last_seq(self) -> int:
        """The seq of the last event published (-1 before the first)."""
        return self._seq - 1

    def record(self, event: HarnessEvent) -> bool:
        """The hot path, synchronous on purpose: stamp, log, track, observe, and hand the event to the consumer
        if there is room. Returns False when `deliver` must finish the job (a callback to call, or no room)."""
        seq = self._seq
        stamp(event, self._run_id, seq, _wall_clock())
        self._seq = seq + 1
        if self._tracks_idle:
            self._state.last_event = _monotonic()
        kind = type(event)
        if self._write_line is not None:
            held = self._held
            begins = held is not None and kind in _DELTAS and held.may_begin(event.text)  # type: ignore[union-attr]
            if held is not None and (held.events or begins) and self._held_back(held, kind, event):
                pass  # held: written once a later event decides
            else:
                line = self.log_line(event)
                self._write_line(line)
                if kind is Done and self._settle_done(event):
                    line = self.log_line(event)
                if self._lines is not None and not self._consumer_gone:
                    self._lines[seq] = line
        if kind in TRACKED:
            self._state.track(event)
        if kind in FILE_EVENTS and self._files is not None:
            self._observe_files(event)
        if self._observe:
            try:
                self._host.pm.hook.harness_on_event(event=event)
            except Exception:  # noqa: BLE001 - observers must not break runs
                self._log.exception("harness_on_event plugin raised; ignored", type=event.type)
        if self._on_event is not None:
            return False
        return self._offer(event)

    def _held_back(self, held: HeldDeltas, kind: type, event: HarnessEvent) -> bool:
        """Write what `event` decides of the held deltas; True when `event` itself is held (not to be written now).
        A delta is held while the tail of the held text (or of its own) may begin a secret; another kind of event
        releases them all first."""
        if held.events and (kind is not type(held.events[0])):
            self._write_held(held.release())
        if kind not in _DELTAS:
            return False
        text: str = event.text  # type: ignore[union-attr]
        if not held.events and not held.may_begin(text):
            return False
        self._write_held(held.hold(event, text))
        return True

    def _write_held(self, decided: list[tuple[HarnessEvent, str]]) -> None:
        assert self._write_line is not None
        for event, text in decided:
            shown = event if text == event.text else event.model_copy(update={"text": text})  # type: ignore[union-attr]
            line = self.log_line(shown)
            self._write_line(line)
            if self._lines is not None and not self._consumer_gone:
                self._lines[event.seq] = line

    def _settle_done(self, done: HarnessEvent) -> bool:
        """Write `done`'s line out before anyone sees it; when it could not be written, its result becomes what
        `unwritten_done` says (in place, as `stamp` writes the envelope). True when the result changed."""
        self._logs.flush()
        if self._logs.events_written or self.unwritten_done is None:
            return False
        fields = done.__dict__
        fields["result"] = self.unwritten_done(fields["result"])
        return True

    def _observe_files(self, event: HarnessEvent) -> None:
        assert self._files is not None
        try:
            self._files.observe(event)
        except Exception:  # noqa: BLE001 - following file changes must not break the run
            self._log.exception("following a file change failed; ignored", type=event.type)

    async def deliver(self, event: HarnessEvent) -> None:
        """The slow path of a recorded event: the `on_event` callback, then waiting for room if need be."""
        callback = self._on_event
        if callback is None:
            await self._wait_for_room(event)
            return
        # One event at a time through the callback, in the order recorded (the lock is fair and is taken before
        # anything else can run: `record` and this call are not separated by a checkpoint).
        async with self._in_order:
            await self._call_back(callback, event)
            if not self._offer(event):
                await self._wait_for_room(event)

    async def publish(self, event: HarnessEvent) -> None:
        """`record`, then `deliver` if it must wait: the runner's own events (`run_started`, approvals, the
        final events). A provider's go through `RunContext.emit`, which checks them first."""
        if not self.record(event):
            await self.deliver(event)

    def log_line(self, event: HarnessEvent) -> bytes:
        """`event`'s run-log line (without the newline), secrets scrubbed, as `record` writes it."""
        line = event_json(event)
        text: str = event.text if type(event) in _DELTAS else ""  # type: ignore[union-attr]
        if not text or (len(text) >= MIN_SECRET and self._text_probe(text)):  # a delta: mostly written as is
            line = self._scrub(line)
        return line

    def share_lines(self) -> Callable[[HarnessEvent], bytes | None]:
        """See `LiveRun.share_log_lines` (without a run log nothing is kept: every take is None)."""
        if self._lines is None:
            self._lines = {}
        pop = self._lines.pop
        return lambda event: pop(event.seq, None)

    def flush(self) -> None:
        """Write out buffered log lines (whenever the run is about to wait for anything)."""
        self._logs.flush()

    def close(self) -> None:
        """No more events: the consumer's iteration ends once it has drained the stream."""
        self._channel.end()

    # --- the consumer side, written once -------------------------------------------------------------------

    def _offer(self, event: HarnessEvent) -> bool:
        """Hand `event` to the consumer without waiting. False: the stream is full, the caller must wait."""
        if self._consumer_gone:
            self._logs.flush()  # nobody iterates (and flushes when caught up): keep the log current ourselves
            return True
        try:
            return self._channel_offer(event)
        except ChannelClosed:
            self._consumer_gone = True
            return True

    async def _wait_for_room(self, event: HarnessEvent) -> None:
        state = self._state
        self._logs.flush()  # about to wait for the consumer: the log must be current while we do
        with state.consumer_wait(), anyio.move_on_after(_deadline(state)) as waited:
            try:
                await self._channel.send(event)  # behind the events already waiting: the stream stays in seq order
            except ChannelClosed:
                self._consumer_gone = True
        if waited.cancelled_caught:  # the final events, and a consumer that stopped reading: do not hold the run
            self._consumer_gone = True

    async def _call_back(self, callback: EventCallback, event: HarnessEvent) -> None:
        state = self._state
        try:
            with state.consumer_wait(), anyio.move_on_after(_deadline(state)) as waited:
                outcome = callback(event)
                if inspect.isawaitable(outcome):
                    await outcome
            if waited.cancelled_caught:
                self._log.error("on_event callback did not return; skipped for the final events", type=event.type)
        except Exception:  # noqa: BLE001 - the caller's callback must not cost it the event, nor blame the provider
            self._log.exception("on_event callback raised; ignored", type=event.type)


def _deadline(state: RunState) -> float:
    """How long the consumer may hold an event up: as long as it likes, except for the final events."""
    return _FINAL_SEND_DEADLINE if state.closing else math.inf
