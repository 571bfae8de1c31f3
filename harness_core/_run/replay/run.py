"""Replay: a recorded wire log fed back through the provider's real `run` under the real runner.

Layer: core runtime (an owner of a `LiveRun`, like `api.open_run`). Knows the runner's parts (`LiveRun`, the
context, the approval broker) and the wire log as `wirelog` reads it; knows nothing of any concrete provider.
The seam (the child process) and what is answered from the recording: docs/run-store.md (replay).
"""

from __future__ import annotations

import json
import os
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast, get_args

import anyio

from harness_core._run.approvals import ApprovalBroker, DecidedBy
from harness_core._run.context import ProviderContext
from harness_core._run.live import LiveRun
from harness_core._run.pipe import EventCallback
from harness_core._run.probe import ProbedProvider, preflight
from harness_core._run.replay.recorded_child import ReplayProcess
from harness_core._run.run_files import RunLogs
from harness_core._run.wirelog import ChildScript, WireLog, load_wire
from harness_core.errors import InvalidSpecError
from harness_core.events import (
    ApprovalDecision,
    ApprovalRequested,
    HarnessEvent,
    HarnessResult,
    ReasoningDelta,
    RunStarted,
    TextDelta,
    event_json,
)
from harness_core.plugins import PluginHost, get_host
from harness_core.redaction import REDACTED, RunSecrets, hidden_values
from harness_core.spec import AgentRunSpec
from harness_core.transport import ChildProcess
from harness_core.transport.process import REPLAYING

__all__ = ["ReplayProcess", "ReplayRun", "WireLog", "load_wire", "open_replay", "replay"]

_STALL = 3.0
"""How long a run may go on once its recording is played out before the replay interrupts it (a recorded run
that was interrupted, whose trigger is not on the wire), beyond the spec's idle timeout."""
DEFAULT_DEADLINE = 120.0
"""The overall deadline of a replay (`deadline`, `harness replay --timeout`): a replay still going then is stopped."""
_DECIDERS: frozenset[str] = frozenset(get_args(DecidedBy))


class ReplayRun(LiveRun):
    """The `LiveRun` of a replay, with what this replay noticed (`warnings`: a line the provider sent that differs
    from the recording, a missing decision, a child the recording lacks) and whether its deadline stopped it."""

    warnings: list[str]
    timed_out: bool = False
    recorded_options: dict[str, Any]
    secrets: RunSecrets
    """What this replay hides in its lines: credential shapes, the secret-looking variables of this process's
    environment, and the values the recorded run log hid (learned as the events come: `log_line`)."""
    masked: dict[int, HarnessEvent]

    def log_line(self, event: HarnessEvent) -> bytes:
        """`event`'s line (no newline) hidden as the recorded run's log hid it: where the run log beside the wire
        log shows `***` and this replay's event shows a value (a secret split across the recorded chunks, joined
        again by the provider), the value is learned and hidden here and in every later line."""
        line = event_json(event)
        logged = self.masked.get(event.seq)
        if logged is not None and logged.type == event.type:
            learned = hidden_values(json.loads(line), json.loads(event_json(logged)))
            self.secrets = self.secrets.with_values(learned)
            if isinstance(event, (TextDelta, ReasoningDelta)) and isinstance(logged, (TextDelta, ReasoningDelta)) \
                    and logged.text != event.text:  # a secret masked across streamed pieces: as the run log has it
                line = event_json(event.model_copy(update={"text": logged.text}))
        return self.secrets.json_line(line)

    def scrubbed(self, text: str) -> str:
        return self.secrets.text(text)

    def _run_started(self) -> RunStarted:
        """As recorded: the options as the recording shows them (hidden ones included), not as replayed."""
        started = super()._run_started()
        return started.model_copy(update={"spec": {**started.spec, "provider_options": self.recorded_options}})


class _ReplayHost(PluginHost):
    """The plugin host of a replay: its providers and approval hooks, without observers (of events, of runs) and
    without trace context."""

    @property
    def observes_events(self) -> bool:
        return False

    @property
    def observes_runs(self) -> bool:
        return False

    def trace_context(self, run_id: str | None = None) -> dict[str, str]:
        return {}


class _ReplayContext(ProviderContext):
    """The runner's context with the child, the side inputs and the wire log taken from the recording."""

    def __init__(self, wire: WireLog, played: Callable[[], None], warnings: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._recording = wire
        self._warnings = warnings
        self._played = played
        self._spawned = 0
        self._warned_outside = False
        self._warned_clock = False

    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
              **options: Any) -> ChildProcess:
        children = self._recording.children
        script = children[self._spawned] if self._spawned < len(children) else ChildScript()
        if self._spawned >= len(children):
            self._warnings.append(f"the provider started child {self._spawned + 1}; the recording "
                                            f"has {len(children)}")
        self._spawned += 1
        return ReplayProcess(script, argv, self._warnings, self._played, **options)

    def clock(self) -> float:
        """The recorded run's next reading of the clock, so durations the provider computes come back as recorded."""
        if self._recording.clock:
            return self._recording.clock.popleft()
        if not self._warned_clock:
            self._warned_clock = True
            self._warnings.append("the provider read the clock more often than the recording did; the replay's own "
                                  "clock answered, so a duration it computed may differ")
        return time.monotonic()

    def record_wire(self, direction: str, line: bytes | str) -> None:
        if direction in ("in", "out") and not self._warned_outside:
            self._warned_outside = True
            self._warnings.append(
                "the provider exchanged lines outside a spawned child (its own `record_wire`): a replay plays only "
                "a child started with `ctx.spawn`, so it talked to the real thing again")

    async def read_side_input(self, name: str, read: Callable[[], bytes | None]) -> bytes | None:
        recorded = self._recording.side_inputs.get(name)
        if not recorded:
            self._warnings.append(f"the provider read {name!r}, which the recording does not have")
            return None
        return recorded.popleft()


    def recorded_read(self, name: str) -> str | None:
        """The runner's own read of a workspace file, as recorded (None: it is not in the recording)."""
        recorded = self._recording.side_inputs.get(name)
        if not recorded:
            self._warnings.append(f"the runner read {name!r}, which the recording does not have")
            return None
        data = recorded.popleft()
        return None if data is None else data.decode("utf-8")


class _RecordedBroker(ApprovalBroker):
    """Decides each approval request as the recorded run did."""

    def __init__(self, wire: WireLog, warnings: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._recording = wire
        self._warnings = warnings

    def new_id(self, provider_id: str) -> str:
        """The id the recorded run showed this request by (its run log's requests in order, else the wire's
        record), so the recorded resolution answers it; the provider's own for recordings older than shown ids."""
        if self._recording.requested:
            return self._recording.requested.popleft()
        decisions = self._recording.wire_decisions.get(provider_id)
        shown = decisions[0].shown_as if decisions else None
        return shown or provider_id

    async def _decide(self, request: ApprovalRequested,
                      harness_own: bool = False) -> tuple[ApprovalDecision, DecidedBy, str | None]:
        resolutions = self._recording.resolutions.get(request.request_id)
        if resolutions:
            resolved = resolutions.popleft()
            if resolved.decided_by == "runner":  # never decided: withdrawn, or the run ended first
                await anyio.sleep_forever()
            return resolved.decision, resolved.decided_by, resolved.reason
        decisions = self._recording.wire_decisions.get(self.provider_id(request.request_id))
        if decisions:
            recorded = decisions.popleft()
            by = recorded.decided_by if recorded.decided_by in _DECIDERS else "callback"
            return ApprovalDecision(recorded.decision), cast(DecidedBy, by), recorded.reason
        self._warnings.append(f"no recorded decision for approval request {request.request_id}; denied")
        return ApprovalDecision.DENY, "default", "replay: the recording has no decision for this request"


def _without_hidden(value: Any, path: str, hidden: list[str]) -> Any:
    """`provider_options` without the values the recording hid (`REDACTED`), nested too, so defaults apply."""
    if isinstance(value, dict):
        kept: dict[str, Any] = {}
        for key, inner in value.items():
            if inner == REDACTED:
                hidden.append(f"{path}{key}")
            else:
                kept[key] = _without_hidden(inner, f"{path}{key}.", hidden)
        return kept
    if isinstance(value, list):  # argv-like: `--flag ***` and `--flag=***` go whole
        items: list[Any] = []
        for item in value:
            if item == REDACTED or (isinstance(item, str) and item.endswith("=" + REDACTED)):
                hidden.append(f"{path.rstrip('.')}[{item if item != REDACTED else (items or ['?'])[-1]}]")
                if item == REDACTED and items and isinstance(items[-1], str) and items[-1].startswith("-"):
                    items.pop()
            else:
                items.append(_without_hidden(item, path, hidden))
        return items
    return value


def _merged(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        inner = merged.get(key)
        merged[key] = _merged(inner, value) if isinstance(inner, dict) and isinstance(value, Mapping) else value
    return merged


def _replay_spec(recording: WireLog, options: Mapping[str, Any] | None) -> tuple[AgentRunSpec, list[str]]:
    fields = {k: v for k, v in recording.spec.items() if k != "harness_version"}
    hidden: list[str] = []
    fields["provider_options"] = _merged(_without_hidden(dict(fields.get("provider_options") or {}), "", hidden),
                                         options or {})
    try:
        return AgentRunSpec.model_validate(fields), hidden
    except ValueError as exc:
        raise InvalidSpecError(f"the spec recorded in {recording.path} does not validate ({exc}); replay it with "
                               "the Harness version that recorded it") from None


@asynccontextmanager
async def open_replay(wire: WireLog | str | Path, provider: str | None = None, *, host: PluginHost | None = None,
                      on_event: EventCallback | None = None, live: bool = False,
                      options: Mapping[str, Any] | None = None,
                      deadline: float | None = DEFAULT_DEADLINE) -> AsyncIterator[ReplayRun]:
    """Replay a recorded run (a `WireLog`, or the path of its `.wire.jsonl`) and give it to the caller live, as
    `open_run` does; the run's `warnings` then say what differed. No log is written and no CLI is run. The
    `WireLog` is not used up: each replay plays its own copy.

    `options` are provider options to add (the recording hides secret-looking values, which are dropped so their
    defaults apply). `live=True` replays a recording that has no child (a provider that reached its agent
    without `RunContext.spawn`) by letting the provider reach it for real. A replay still going after `deadline`
    seconds (None: never) is stopped, with `timed_out` set and a warning.

    Raises (before anything runs): InvalidSpecError (an unreadable wire log or recorded spec, a recording with no
    child and not `live`, options that do not validate), ProviderNotFoundError, UnsupportedFeatureError.
    """
    recording = (wire if isinstance(wire, WireLog) else load_wire(wire, provider)).fresh()
    warnings = recording.warnings
    if not recording.children:
        if not live:
            raise InvalidSpecError(
                f"{recording.path}: this recording has no agent process to replay: the provider talks to its agent "
                "without RunContext.spawn (over HTTP, say), so a replay would run the agent for real; pass --live "
                "(`live=True`) to do that")
        warnings.append("the recorded run started no child (`RunContext.spawn`): the provider ran for real (--live)")
    name = provider or recording.provider
    base = host or get_host()
    quiet = _ReplayHost(pm=base.pm, providers=base.providers, broken=base.broken)
    spec, hidden = _replay_spec(recording, options)
    try:
        registered, instance, parsed = preflight(spec, name, quiet)
    except InvalidSpecError as exc:
        why = (f"the recording hid option(s) {', '.join(hidden)} (secret-looking values are logged as "
               f"{REDACTED!r}); " if hidden else "")
        said = exc.message.replace(" (provider_options={KEY: VALUE}; on the command line -o KEY=VALUE).", ".")
        raise InvalidSpecError(f"{said} {why}pass them with "
                               "`harness replay --option KEY=VALUE` (`options=` to open_replay)",
                               **exc.details) from None
    installed = registered.distribution_version or registered.cls.info.version
    if recording.provider_version is not None and recording.provider_version != installed:
        warnings.append(f"recorded with {registered.name} {recording.provider_version}; replaying with {installed}, "
                        "so the events may differ")
    probed = ProbedProvider(registered, instance, parsed, recording.cli)
    played = anyio.Event()
    pending = deque(recording.interrupts)

    async def apply_interrupts(event: HarnessEvent) -> None:
        while pending and event.seq >= pending[0].after_seq:
            run.stop() if pending.popleft().how == "stop" else run.interrupt()
        if on_event is not None:
            outcome = on_event(event)
            if outcome is not None:
                await outcome

    run = ReplayRun(spec, probed, host=quiet, run_id=recording.run_id, logs=RunLogs(),
                    on_event=apply_interrupts if pending or on_event is not None else None)
    run.warnings = warnings
    run.recorded_options = dict(recording.spec.get("provider_options") or {})
    run.secrets = RunSecrets.of_run({}, environ=os.environ)
    run.masked = recording.masked
    broker = _RecordedBroker(recording, warnings, spec=spec, host=quiet, approver=None, pipe=run._pipe,
                             state=run._state, log=run._log)
    run._ctx = _ReplayContext(recording, played.set, warnings, run_id=recording.run_id, spec=spec,
                              cli=recording.cli, pipe=run._pipe, broker=broker, logs=RunLogs(),
                              interrupt=run._interrupt, log=run._log, provider=registered.name)
    run._files.recorder = None  # the workspace is read from the recording, as the recorded run read it
    run._files.recorded = run._ctx.recorded_read
    run._files.enabled = any(name.startswith("workspace:") for name in recording.side_inputs)
    stall = _STALL + (spec.idle_timeout or 0.0)  # a recorded idle timeout fires first, as it did

    async def unstick() -> None:
        await played.wait()
        with anyio.move_on_after(stall):
            await run.finished.wait()
        if not run.finished.is_set():
            warnings.append(f"the run went on {stall:g} s after its recording ended; interrupted it")
            run.interrupt()

    async def watch_deadline() -> None:
        with anyio.move_on_after(deadline if deadline is not None else float("inf")):
            await run.finished.wait()
        if not run.finished.is_set():
            run.timed_out = True
            warnings.append(f"the replay did not end within {deadline:g} s, so it was stopped: the provider waits for "
                            "something the recording does not have (an interrupt before format 2, a line it did not "
                            "record); raise --timeout if it legitimately takes longer")
            run.stop()

    async def drive() -> None:
        token = REPLAYING.set(None if live else str(recording.path))  # the provider's tasks inherit it
        try:
            await run.drive()
        finally:
            REPLAYING.reset(token)

    async with anyio.create_task_group() as tg:
        tg.start_soon(drive)
        tg.start_soon(unstick)
        tg.start_soon(watch_deadline)
        try:
            yield run
        finally:
            await run.aclose()
            tg.cancel_scope.cancel()


async def replay(wire: WireLog | str | Path, provider: str | None = None, **kwargs: Any) -> HarnessResult:
    """Replay a recorded run to its end and return its result (keyword arguments as for `open_replay`)."""
    async with open_replay(wire, provider, **kwargs) as run:
        return await run.wait()
