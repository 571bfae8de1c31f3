"""A recorded wire log, read back: its header, the script of each child it spawned, its side inputs and decisions.

Layer: core runtime (the reading side of the wire log that `context.ProviderContext` writes; its record format is
described there). Pure data and file reading: knows the wire log's records and the run log beside it
(`<run_id>.jsonl`, for the `run_started` of an old file and the approvals' resolutions); knows nothing of
processes, providers or how the script is played (`replay`).
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness_core._provider import CliInfo
from harness_core.errors import InvalidSpecError
from harness_core.events import ApprovalResolved, RunStarted
from harness_core.store import read_events

__all__ = ["ChildScript", "ScriptItem", "WireLog", "load_wire", "method_and_id"]

_CHILD_RECORDS = frozenset({"spawn", "in", "out", "err", "close", "eof", "exit"})


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
    wire_decisions: dict[str, deque[str]]
    has_header: bool
    outside: int = 0
    """Lines recorded outside any spawned child (a provider's own `record_wire`: an HTTP exchange, say): a replay
    cannot play those, so such a provider talks to the real thing again (and its replay differs)."""
    warnings: list[str] = field(default_factory=list)
    """What a replay noticed (a line the provider sent that differs from the recording, a missing decision)."""


def load_wire(path: str | Path, provider: str | None = None) -> WireLog:
    """Read the wire log at `path` (and the run log beside it, if any). `provider` overrides the header's (and is
    needed for a file recorded before wire logs had one).

    Raises:
        InvalidSpecError: the file is missing, unreadable or not a wire log; an old file without `provider`.
    """
    path = Path(path)
    hint = "pass the `<run id>.wire.jsonl` written by `harness run --record-wire` (in `harness runs`' directory)"
    try:
        raw_lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise InvalidSpecError(f"cannot read wire log {path}: {exc.strerror or exc}; {hint}") from None
    records: list[dict[str, Any]] = []
    for number, raw in enumerate(raw_lines, 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except ValueError:
            record = None
        if not isinstance(record, dict) or not isinstance(record.get("dir"), str):
            raise InvalidSpecError(f"{path}:{number} is not a wire log record (a JSON object with `dir`); {hint}")
        records.append(record)
    header = records[0] if records and records[0]["dir"] == "header" else None
    run_id = str(header["run_id"]) if header else path.name.removesuffix(".jsonl").removesuffix(".wire")
    started, resolutions = _run_log(path.with_name(f"{run_id}.jsonl"))
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
    children, outside = _children(records, legacy=header is None)
    wire = WireLog(path=path, run_id=run_id, provider=provider or (str(header["provider"]) if header else None),
                   cli=cli, spec=spec, children=children, side_inputs=_side_inputs(records),
                   resolutions=resolutions, wire_decisions=_decisions(records), has_header=header is not None,
                   outside=outside)
    if not children:
        wire.warnings.append("the recorded run started no child (`RunContext.spawn`): the replay ran its provider "
                             "again, for real")
    return wire


def _run_log(path: Path) -> tuple[RunStarted | None, dict[str, deque[ApprovalResolved]]]:
    started: RunStarted | None = None
    resolutions: dict[str, deque[ApprovalResolved]] = {}
    if not path.is_file():
        return started, resolutions
    try:
        for event in read_events(path):
            if isinstance(event, RunStarted) and started is None:
                started = event
            elif isinstance(event, ApprovalResolved):
                resolutions.setdefault(event.request_id, deque()).append(event)
    except OSError:
        pass  # best effort: the wire log alone still replays
    return started, resolutions


def _children(records: list[dict[str, Any]], *, legacy: bool) -> tuple[list[ChildScript], int]:
    """The records of each spawned child (from its `spawn` to its `exit`), and how many `in`/`out` lines were
    recorded outside any child. An old file (no header: only `in`/`out`, one child) ends its child's stdout after
    its last line, and its child exits 0."""
    children: list[ChildScript] = [ChildScript()] if legacy else []
    child: ChildScript | None = children[0] if legacy else None
    closed = False
    outside = 0
    for record in records:
        kind = record["dir"]
        if kind not in _CHILD_RECORDS:
            continue
        if kind == "spawn":
            child = ChildScript()
            children.append(child)
            closed = False
        elif child is None:
            outside += kind in ("in", "out")
        elif kind == "out":
            child.outs.append(method_and_id(str(record.get("line", ""))))
        elif kind == "err":
            child.stderr += str(record.get("line", ""))
        elif kind == "close":
            closed = True
        elif kind == "in":
            child.items.append(ScriptItem("in", len(child.outs), line=str(record.get("line", "")).encode()))
        elif kind == "eof":
            child.items.append(ScriptItem("eof", len(child.outs)))
        else:
            child.items.append(ScriptItem("exit", len(child.outs), after_close=closed, code=int(record["code"])))
            child = None
    if legacy:
        last = children[0].items[-1].after_outs if children[0].items else 0
        children[0].items += [ScriptItem("eof", last), ScriptItem("exit", last)]
    return children, outside


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


def _decisions(records: list[dict[str, Any]]) -> dict[str, deque[str]]:
    found: dict[str, deque[str]] = {}
    for record in records:
        if record["dir"] == "approval":
            found.setdefault(str(record.get("request_id")), deque()).append(str(record.get("decision")))
    return found
