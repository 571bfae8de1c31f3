"""The wire log: its format, the writer a run records it with (`WireWriter`) and the reader a replay loads it with.

Layer: core runtime. Writing scrubs every string of a record with the run's secrets; reading is pure data and file
reading. Knows nothing of processes, providers or how the script is played (`replay.run`). The records: RECORDS, and
docs/run-store.md (wire log).
"""

from __future__ import annotations

import codecs
import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness_core._provider_interface import CliInfo
from harness_core._version import __version__
from harness_core.errors import InvalidSpecError
from harness_core.events import ApprovalRequested, ApprovalResolved, HarnessEvent, ReasoningDelta, RunStarted, TextDelta
from harness_core.files.inputs import InputFileError, read_input
from harness_core.redaction import REDACTED, RunSecrets
from harness_core.store import BadLine, LogWriter, read_events

__all__ = ["RECORDS", "WIRE_FORMAT", "ChildRecorder", "ChildScript", "Interrupt", "ScriptItem", "WireDecision",
           "WireLog", "WireWriter", "load_wire", "method_and_id"]

WIRE_FORMAT = 2
"""The wire log's format, written and the newest read (a newer file is refused: its records may mean something
else). 2 has the header, the `child` index and every record of RECORDS; a file without a header (format 1) has
only `in` and `out`."""
RECORDS: dict[str, str] = {
    "header": "the first line: format, run_id, provider, provider_version, harness_version, cli, spec",
    "spawn": "a child is started (`child`: its index)",
    "out": "a line to child `child`, or outside any child (a provider's `record_wire`)",
    "in": "a line from child `child`, or outside any child",
    "err": "one line of child `child`'s stderr (`nl` false for a piece without its newline)",
    "close": "child `child`'s stdin closed",
    "eof": "child `child`'s stdout ended",
    "exit": "child `child`'s exit status (`code`)",
    "file": "a side input the provider (or the change tracker) read (`name`, `data`)",
    "clock": "a reading of `RunContext.clock()` (`value`)",
    "approval": "how a request was decided (`request_id`, `shown_as`, `decision`, `decided_by`, `reason`)",
    "interrupt": "the run was interrupted or stopped (`how`) after the event `after_seq`",
}
"""The record kinds (`dir` values) and what each holds."""
WIRE_LIMIT = 4 << 30
"""A wire log read for a replay holds at most this many bytes."""
_CHILD_RECORDS = frozenset({"spawn", "in", "out", "err", "close", "eof", "exit"})
_ERR_LINE_MAX = 64 * 1024
"""Characters of one stderr line held back waiting for its newline; beyond that the piece is written (`nl` false)."""


class WireWriter:
    """The writing side of one run's wire log: the header, the records (every string scrubbed with the run's secrets
    before it is serialised) and a `ChildRecorder` for each spawned child, numbered in spawn order."""

    def __init__(self, wire: LogWriter, secrets: RunSecrets) -> None:
        self._wire = wire
        self._secrets = secrets
        self._children = 0  # the next child's index

    def header(self, *, run_id: str, provider: str, provider_version: str, cli: CliInfo,
               spec: dict[str, Any]) -> None:
        """The first record: who ran, with which CLI, and the spec as `run_started` logs it (already redacted), so
        `harness replay` needs nothing else."""
        record = {"dir": "header", "t": round(time.time(), 6), "format": WIRE_FORMAT, "run_id": run_id,
                  "provider": provider, "provider_version": provider_version, "harness_version": __version__,
                  "cli": cli.model_dump(mode="json"), "spec": spec}
        self._wire.write_line(json.dumps(_scrubbed(record, self._secrets), ensure_ascii=False).encode())

    def record(self, record: dict[str, Any]) -> None:
        """One record (`dir` first, then the time `t`), every string in it scrubbed before it is serialised (a side
        input's `data` line by line)."""
        fields = {"dir": record["dir"], "t": round(time.time(), 6), **record}
        for key, value in fields.items():
            if key == "dir":  # the record's kind, never a secret
                continue
            if key == "data" and isinstance(value, str):
                fields[key] = _scrubbed_data(value, self._secrets)
            elif isinstance(value, (str, dict, list)):
                fields[key] = _scrubbed(value, self._secrets)
        self._wire.write_line(json.dumps(fields, ensure_ascii=False).encode())

    def child(self) -> ChildRecorder:
        """The recorder of the next spawned child, its `spawn` record written (its records follow, each with its
        index)."""
        recorder = ChildRecorder(self._children, self.record)
        self._children += 1
        self.record({"dir": "spawn", "child": recorder.child})
        return recorder


class ChildRecorder:
    """The wire records of one spawned child (`ChildProcess(on_line=..., on_record=...)`), each with its `child`
    index. Its stderr is recorded a line at a time: a partial line is held (decoded incrementally, so a character
    split across reads stays whole) until its newline, the end of stderr or the child's exit, so a secret written
    in pieces is scrubbed whole."""

    def __init__(self, child: int, write: Callable[[dict[str, Any]], None]) -> None:
        self.child = child
        self._write = write
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._partial = ""

    def line(self, direction: str, raw: bytes) -> None:
        self._write({"dir": direction, "child": self.child, "line": raw.decode("utf-8", "replace")})

    def record(self, kind: str, data: bytes) -> None:
        if kind == "err":
            self._stderr(self._decoder.decode(data))
        elif kind == "err_eof":
            self._stderr(self._decoder.decode(b"", final=True))
            self._flush_partial()
        elif kind == "exit":
            self._flush_partial()  # its stderr may outlive it (a helper holding the pipe): written before `exit`
            self._write({"dir": "exit", "child": self.child, "code": int(data)})
        else:
            self._write({"dir": kind, "child": self.child})

    def _stderr(self, text: str) -> None:
        *lines, rest = (self._partial + text).split("\n")
        for line in lines:
            self._write({"dir": "err", "child": self.child, "line": line, "nl": True})
        self._partial = rest
        while len(self._partial) > _ERR_LINE_MAX:
            piece, self._partial = self._partial[:_ERR_LINE_MAX], self._partial[_ERR_LINE_MAX:]
            self._write({"dir": "err", "child": self.child, "line": piece, "nl": False})

    def _flush_partial(self) -> None:
        if self._partial:
            piece, self._partial = self._partial, ""
            self._write({"dir": "err", "child": self.child, "line": piece, "nl": False})


def _scrubbed(value: Any, secrets: RunSecrets) -> Any:
    """`value` (a record's field) with every string in it, keys included, scrubbed as text."""
    if isinstance(value, str):
        return secrets.text(value)
    if isinstance(value, dict):
        return {_scrubbed(k, secrets): _scrubbed(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v, secrets) for v in value]
    return value


def _scrubbed_data(data: str, secrets: RunSecrets) -> str:
    """A side input's text scrubbed line by line: a line that is a JSON value value by value (`json_line`: a
    secret with JSON-special characters is escaped in it, and a replacement cannot run across its fields), any
    other line as text."""
    return "\n".join(_scrubbed_data_line(line, secrets) for line in data.split("\n"))


def _scrubbed_data_line(line: str, secrets: RunSecrets) -> str:
    try:
        json.loads(line)
    except ValueError:
        return secrets.text(line)
    return secrets.json_line(line.encode()).decode()


@dataclass(frozen=True)
class ScriptItem:
    """One thing the recorded child did: a stdout line (`in`), the end of its stdout (`eof`) or its exit. It
    happened after the provider had sent `after_outs` lines (and, with `after_close`, closed its stdin): a replay
    holds it back until the provider has done as much, so an answer never overtakes its question."""

    kind: str
    after_outs: int
    after_close: bool = False
    line: bytes = b""
    code: int = 0


@dataclass
class ChildScript:
    """What one spawned child did, in order, and what it was sent (`outs`: each line's JSON-RPC method/id)."""

    items: list[ScriptItem] = field(default_factory=list)
    outs: list[tuple[Any, Any]] = field(default_factory=list)
    stderr: str = ""


@dataclass(frozen=True)
class Interrupt:
    """The recorded run was interrupted (`how`: "interrupt") or stopped ("stop") when its last published event had
    seq `after_seq`: a replay does the same once it has published that event."""

    how: str
    after_seq: int


@dataclass(frozen=True)
class WireDecision:
    """An `approval` record: how a request was decided (`decided_by` and `reason` from format 2 on)."""

    decision: str
    decided_by: str | None = None
    reason: str | None = None
    shown_as: str | None = None
    """The id the run showed the request by (a random one; recordings before it: the provider's own)."""


@dataclass
class WireLog:
    """A wire log ready to replay: who ran (`provider`, `cli`, the redacted `spec`), what each child did, the side
    inputs the provider read, and how each approval was decided (from the run log beside it, else the wire)."""

    path: Path
    run_id: str
    provider: str | None
    cli: CliInfo
    spec: dict[str, Any]
    children: list[ChildScript]
    side_inputs: dict[str, deque[bytes | None]]
    resolutions: dict[str, deque[ApprovalResolved]]
    wire_decisions: dict[str, deque[WireDecision]]
    has_header: bool
    interrupts: list[Interrupt] = field(default_factory=list)
    clock: deque[float] = field(default_factory=deque)
    """The provider's readings of `RunContext.clock`, in order (a replay answers its readings with them)."""
    requested: deque[str] = field(default_factory=deque)
    """The ids the run log's approval requests were shown by, in order (a replay shows its requests by them)."""
    provider_version: str | None = None
    """The version of the provider that recorded it (the header's), to warn when the installed one differs."""
    outside: int = 0
    """Lines recorded outside any spawned child (a provider's own `record_wire`: an HTTP exchange, say): a replay
    cannot play those, so such a provider talks to the real thing again (and its replay differs)."""
    warnings: list[str] = field(default_factory=list)
    """What reading it noticed (a torn last line, bad lines in the run log beside it). A replay's own warnings
    (a line the provider sent that differs from the recording, a missing decision) are its run's `warnings`."""
    masked: dict[int, HarnessEvent] = field(default_factory=dict)
    """The events of the run log beside it that hide something as `***`, by seq: what a replay compares its own
    events with to learn the run's secrets (`redaction.hidden_values`), so it hides them as the run log did."""

    def fresh(self) -> WireLog:
        """A copy with its own cursors (side inputs, decisions) and warnings, for one replay."""
        return replace(self, side_inputs={k: deque(v) for k, v in self.side_inputs.items()},
                       resolutions={k: deque(v) for k, v in self.resolutions.items()},
                       wire_decisions={k: deque(v) for k, v in self.wire_decisions.items()},
                       interrupts=list(self.interrupts), clock=deque(self.clock), warnings=list(self.warnings),
                       requested=deque(self.requested))


def load_wire(path: str | Path, provider: str | None = None) -> WireLog:
    """Read the wire log at `path` (and the run log beside it, if any). `provider` overrides the header's (and is
    needed for a file recorded before wire logs had one). A torn last line (a writer killed mid-line) is skipped
    with a warning, as are bad lines of the run log beside it.

    Raises:
        InvalidSpecError: the file is missing, unreadable or not a wire log; recorded by a newer Harness; an old
            file without `provider`.
    """
    path = Path(path)
    hint = "pass the `<run id>.wire.jsonl` written by `harness run --record-wire` (in `harness runs`' directory)"
    try:
        data = read_input(path, what="wire log", limit=WIRE_LIMIT)
    except InputFileError as exc:
        raise InvalidSpecError(f"{exc.message}; {hint}") from None
    raw_lines = data.split(b"\n")
    torn = raw_lines.pop()  # b"" when the file ends with its newline
    records: list[dict[str, Any]] = []
    warnings: list[str] = []
    for number, raw in enumerate([*raw_lines, torn], 1):
        if not raw.strip():
            continue
        record = _record(raw)
        if record is None and number > len(raw_lines):
            warnings.append(f"{path}:{number}: skipped its torn last line (the recording stopped mid-line)")
            continue
        if record is None:
            raise InvalidSpecError(f"{path}:{number} is not a wire log record (a JSON object with `dir`); {hint}")
        records.append(record)
    header = records[0] if records and records[0]["dir"] == "header" else None
    version = header.get("format", 2) if header else 1
    if not isinstance(version, int) or version > WIRE_FORMAT:
        raise InvalidSpecError(f"{path} was recorded by a newer Harness (format {version}); upgrade harness-core "
                               f"to replay it (this one reads up to format {WIRE_FORMAT})")
    run_id = str(header["run_id"]) if header else path.name.removesuffix(".jsonl").removesuffix(".wire")
    started, resolutions, requested, masked = _run_log(_beside(path, run_id), warnings)
    if header is None:
        if provider is None:
            raise InvalidSpecError(f"{path} was recorded before wire logs named their provider; pass --provider "
                                   "NAME (the provider that recorded it: `harness show RUN_ID` says which)")
        if started is None:
            raise InvalidSpecError(f"{path} was recorded before wire logs carried the run's spec, and its run log "
                                   f"{run_id}.jsonl is not beside it; put the run log next to the wire log")
        spec, cli = started.spec, CliInfo(version=started.cli_version)
    else:
        spec, cli = dict(header.get("spec") or {}), CliInfo.model_validate(header.get("cli") or {})
    children, outside, interrupts = _children(records, legacy=header is None)
    recorded_version = header.get("provider_version") if header else None
    return WireLog(path=path, run_id=run_id, provider=provider or (str(header["provider"]) if header else None),
                   cli=cli, spec=spec, children=children, side_inputs=_side_inputs(records),
                   resolutions=resolutions, wire_decisions=_decisions(records), has_header=header is not None,
                   requested=requested,
                   interrupts=interrupts, outside=outside, warnings=warnings, masked=masked,
                   clock=deque(float(r["value"]) for r in records
                               if r["dir"] == "clock" and isinstance(r.get("value"), (int, float))),
                   provider_version=None if recorded_version is None else str(recorded_version))


def _record(raw: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    return record if isinstance(record, dict) and isinstance(record.get("dir"), str) else None


def _beside(path: Path, run_id: str) -> Path:
    """The run log beside a wire log: by the wire file's own stem (`X.wire.jsonl` → `X.jsonl`: a renamed golden
    pair), else by the recorded run id."""
    if path.name.endswith(".wire.jsonl"):
        own = path.with_name(path.name.removesuffix(".wire.jsonl") + ".jsonl")
        if own.is_file():
            return own
    return path.with_name(f"{run_id}.jsonl")


def _run_log(path: Path, warnings: list[str]) -> tuple[RunStarted | None, dict[str, deque[ApprovalResolved]],
                                                      deque[str], dict[int, HarnessEvent]]:
    started: RunStarted | None = None
    resolutions: dict[str, deque[ApprovalResolved]] = {}
    requested: deque[str] = deque()
    masked: dict[int, HarnessEvent] = {}
    if not path.is_file():
        return started, resolutions, requested, masked
    bad: list[BadLine] = []
    chained = False
    try:
        for event in read_events(path, on_bad_line=bad.append):
            if isinstance(event, RunStarted) and started is None:
                started = event
            elif isinstance(event, ApprovalResolved):
                resolutions.setdefault(event.request_id, deque()).append(event)
            elif isinstance(event, ApprovalRequested):
                requested.append(event.request_id)
            delta = isinstance(event, (TextDelta, ReasoningDelta))
            if REDACTED in event.model_dump_json() or (delta and chained):
                masked[event.seq] = event  # a delta after a masked one may hold the rest of a secret, dropped
            chained = delta and event.seq in masked
    except OSError:
        pass  # best effort: the wire log alone still replays
    if bad:
        warnings.append(f"skipped {len(bad)} unreadable line(s) of the run log {path} (first: line {bad[0].number}, "
                        f"{bad[0].problem})")
    return started, resolutions, requested, masked


def _children(records: list[dict[str, Any]], *, legacy: bool) -> tuple[list[ChildScript], int, list[Interrupt]]:
    """The records of each spawned child (by its `child` index, else the most recent spawn up to its `exit`), how
    many `in`/`out` lines were recorded outside any child, and the interrupts. An old file (no header: only
    `in`/`out`, one child) ends its child's stdout after its last line, and its child exits 0."""
    children: list[ChildScript] = [ChildScript()] if legacy else []
    current: int | None = 0 if legacy else None
    closed: set[int] = set()
    outside = 0
    interrupts: list[Interrupt] = []
    for record in records:
        kind = record["dir"]
        if kind == "interrupt":
            interrupts.append(Interrupt(str(record.get("how", "interrupt")), int(record.get("after_seq", 0))))
            continue
        if kind not in _CHILD_RECORDS:
            continue
        given = record.get("child")
        index = given if isinstance(given, int) and not isinstance(given, bool) else None
        if kind == "spawn":
            index = len(children) if index is None else index
            children += [ChildScript() for _ in range(index + 1 - len(children))]
            current = index
            continue
        index = current if index is None else index
        if index is None or not 0 <= index < len(children):
            outside += kind in ("in", "out")
            continue
        child = children[index]
        if kind == "out":
            child.outs.append(method_and_id(str(record.get("line", ""))))
        elif kind == "err":
            nl = record.get("nl")
            child.stderr += str(record.get("line", "")) + ("\n" if nl else "")
        elif kind == "close":
            closed.add(index)
        elif kind == "in":
            child.items.append(ScriptItem("in", len(child.outs), line=str(record.get("line", "")).encode()))
        elif kind == "eof":
            child.items.append(ScriptItem("eof", len(child.outs)))
        else:
            child.items.append(ScriptItem("exit", len(child.outs), after_close=index in closed,
                                          code=int(record["code"])))
            current = None if index == current else current
    if legacy:
        last = children[0].items[-1].after_outs if children[0].items else 0
        children[0].items += [ScriptItem("eof", last), ScriptItem("exit", last)]
    return children, outside, interrupts


def method_and_id(line: str) -> tuple[Any, Any]:
    """A JSON-RPC line's method and id (None for what a line does not have), to compare sent with recorded."""
    try:
        msg = json.loads(line)
    except ValueError:
        return None, None
    if not isinstance(msg, dict):
        return None, None
    return msg.get("method"), msg.get("id")


def _side_inputs(records: list[dict[str, Any]]) -> dict[str, deque[bytes | None]]:
    found: dict[str, deque[bytes | None]] = {}
    for record in records:
        if record["dir"] == "file":
            data = record.get("data")
            found.setdefault(str(record.get("name")), deque()).append(None if data is None else str(data).encode())
    return found


def _decisions(records: list[dict[str, Any]]) -> dict[str, deque[WireDecision]]:
    found: dict[str, deque[WireDecision]] = {}
    for record in records:
        if record["dir"] == "approval":
            by, reason, shown = record.get("decided_by"), record.get("reason"), record.get("shown_as")
            found.setdefault(str(record.get("request_id")), deque()).append(WireDecision(
                str(record.get("decision")), None if by is None else str(by), None if reason is None else str(reason),
                None if shown is None else str(shown)))
    return found
