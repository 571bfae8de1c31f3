"""The run store: where run logs live, how they are written, read, listed and followed.

Layer: core storage. Knows events and the file layout `<runs-dir>/<run_id>.jsonl` (+ the other files of a run,
`RUN_FILE_SUFFIXES`); knows nothing of providers or rendering. The writer, the lock holder and pruning live
beside it (`writer.py`, `locks.py`, `prune.py`), re-exported by the package. Rules: docs/run-store.md.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError

from harness_core.errors import InvalidSpecError
from harness_core.events import Done, HarnessEvent, RunStarted, SessionStarted, parse_event
from harness_core.store.locks import locked as _locked, writer_pid
from harness_core.store.owner import UnsafeRunsDirError, check_runs_dir, open_run_file
from harness_core.store.read import (
    BAD_LINE_HEAD,
    BadLine,
    LogFollower,
    follow_events,
    follow_events_async,
    open_approvals,
    pending_approvals,
    read_events,
)
from harness_core.store.writer import CUT_SHORT_MODE, LogWriter, cut_short

__all__ = [
    "ANSWERS_SUFFIX",
    "FIRST_LINE_LIMIT",
    "BAD_LINE_HEAD",
    "CUT_SHORT_MODE",
    "ENV_RUNS_DIR",
    "LAST",
    "BadLine",
    "LogFollower",
    "LogWriter",
    "RUN_FILE_SUFFIXES",
    "RunSummary",
    "TRUNCATED",
    "UnsafeRunsDirError",
    "check_runs_dir",
    "open_run_file",
    "WAITING_FOR_APPROVAL",
    "VERIFY_LOG_SUFFIX",
    "WORKER_LOG_SUFFIX",
    "find_run",
    "follow_events",
    "follow_events_async",
    "list_runs",
    "log_path",
    "new_run_id",
    "open_approvals",
    "pending_approvals",
    "read_events",
    "resolve_runs_dir",
    "summarize",
    "validate_run_id",
    "writer_pid",
    "wire_path",
]

ENV_RUNS_DIR = "HARNESS_RUNS_DIR"
FIRST_LINE_LIMIT = 64 << 20
"""Bytes read looking for the end of a log's first line; a file with no line end in them is no run log."""
TRUNCATED = "truncated"
"""The status of a run whose log was cut short by a failed write (a full disk) before its `done`: the run was
stopped with `log_write_failed`, and its log holds the events up to the failure."""
WAITING_FOR_APPROVAL = "waiting for approval"
"""The status of a running run that waits for an answer to an approval request."""
ANSWERS_SUFFIX = ".answers"
"""`<run_id>.answers`: a background run's approval answers (`harness_core.jobs.answers`)."""
WORKER_LOG_SUFFIX = ".worker.log"
"""`<run_id>.worker.log`: a background worker's stderr once its run started (warnings, a crash), scrubbed of the
run's secrets; removed when empty."""
VERIFY_LOG_SUFFIX = ".verify.log"
"""`<run_id>.verify.log`: the output of the verifier a batch ran after the run (`harness batch --verify`)."""
RUN_FILE_SUFFIXES = (".jsonl", ".wire.jsonl", ANSWERS_SUFFIX, WORKER_LOG_SUFFIX, VERIFY_LOG_SUFFIX)
"""Every file a run has in the runs directory, named `<run_id><suffix>`: its log, its wire log, its approval
answers, its background worker's output. The one registry of them: `harness runs prune` removes these names
exactly and nothing else, so a new kind of run file is added here. (A suffix ending in `.jsonl` would name a run
log too: `validate_run_id` must refuse run ids ending in what comes before it, as it does for `.wire`.)"""
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


def resolve_runs_dir(explicit: str | Path | None = None, env: dict[str, str] | None = None) -> Path:
    """`--runs-dir` > `HARNESS_RUNS_DIR` > `$XDG_STATE_HOME/harness/runs` > `~/.local/state/harness/runs`."""
    environ = os.environ if env is None else env
    if explicit:
        return Path(explicit).expanduser()
    if environ.get(ENV_RUNS_DIR):
        return Path(environ[ENV_RUNS_DIR]).expanduser()
    state = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state).expanduser() / "harness" / "runs"


def new_run_id() -> str:
    """Sortable by start time, unique enough for one machine: `20261130T012520-3f9a1c2b`."""
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + secrets.token_hex(4)


def validate_run_id(run_id: str) -> str:
    """Raises `InvalidSpecError` unless `run_id` is a plain name (no separators, no traversal) other than `last`
    (the reference to the newest run)."""
    if not _RUN_ID.fullmatch(run_id) or ".." in run_id:
        raise InvalidSpecError(
            f"invalid run id {run_id!r}: use letters, digits, '.', '_' and '-' only "
            "(see `harness runs` for the ids of your runs)",
            run_id=run_id,
        )
    if run_id == LAST:
        raise InvalidSpecError(f"{LAST!r} cannot be a run id: it names the newest run (`harness show {LAST}`); "
                               "choose another id, or leave run_id out for a new one", run_id=run_id)
    if run_id.endswith(".wire"):
        raise InvalidSpecError(f"invalid run id {run_id!r}: `{run_id}.jsonl` is the wire log of run "
                               f"{run_id.removesuffix('.wire')!r}; choose an id that does not end in '.wire'",
                               run_id=run_id)
    return run_id


def log_path(runs_dir: Path, run_id: str) -> Path:
    return runs_dir / f"{validate_run_id(run_id)}.jsonl"


def wire_path(runs_dir: Path, run_id: str) -> Path:
    return runs_dir / f"{validate_run_id(run_id)}.wire.jsonl"


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    path: Path
    started: RunStarted | None
    done: Done | None
    mtime: float
    writer_alive: bool = False
    problem: str | None = None
    waiting: bool = False
    """Whether the running run waits for an answer to an approval request."""
    cut_short: bool = False
    """Whether its writer could not write all of the log (a full disk): sealed read-only (`CUT_SHORT_MODE`)."""
    session_model: str | None = None
    """The model the agent reported when its session started (the spec's is often unset: the provider's default)."""
    started_session: str | None = None
    """The agent's session id as its `session_started` reported it (known before `done`, and for a lost run)."""

    @property
    def session(self) -> str | None:
        """The Harness session this run is a turn of (`run_started.session_turn`), None for a lone run."""
        turn = self.started.session_turn if self.started else None
        return turn.session if turn is not None else None

    @property
    def turn(self) -> int | None:
        """This run's index among its session's turns (from 0), None for a lone run."""
        turn = self.started.session_turn if self.started else None
        return turn.index if turn is not None else None

    @property
    def provider_session(self) -> str | None:
        """The agent's own session id (to `--resume`): the result's, else what `session_started` reported."""
        reported = self.done.result.session_id if self.done else None
        return reported or self.started_session

    @property
    def model(self) -> str | None:
        """The model asked for, else the one the agent reported."""
        asked = self.started.spec.get("model") if self.started else None
        return asked if isinstance(asked, str) and asked else self.session_model

    @property
    def status(self) -> str:
        """The result's status; `running` while a writer holds the log (`waiting for approval` while it waits for
        an answer); `lost` when the writer died before `done` (killed, crashed machine); `truncated` when the
        writer could not write its `done` (a full disk: the run was stopped, `log_write_failed`); `unreadable`
        when the file cannot be read."""
        if self.problem is not None:
            return "unreadable"
        if self.done is not None:
            return self.done.result.status.value
        if not self.writer_alive:
            return TRUNCATED if self.cut_short else "lost"
        return WAITING_FOR_APPROVAL if self.waiting else "running"

    def as_json(self) -> dict[str, Any]:
        result = self.done.result if self.done else None
        return {
            "run_id": self.run_id,
            "provider": self.started.provider if self.started else None,
            "model": self.model,
            "status": self.status,
            "started_at": self.started.ts if self.started else None,
            "duration_ms": result.duration_ms if result else None,
            "cost_usd": result.usage.cost_usd if result and result.usage else None,
            "cwd": (self.started.spec.get("cwd") if self.started else None),
            "prompt": (self.started.spec.get("prompt") if self.started else None),
            "session_id": self.provider_session,
            "session": self.session,
            "turn": self.turn,
            "path": str(self.path),
        }


def _ends(path: Path) -> tuple[bytes | None, bytes, bytes | None]:
    """The log's first line (whole, however long: a large prompt or schema; None when it has no line end yet or
    none within `FIRST_LINE_LIMIT`), the 64 KiB after it (where `session_started` is) and its last complete
    line (whole, however long: a large answer)."""
    with path.open("rb") as fh:
        first = _first_line(fh)
        if first is None:
            return None, b"", None
        head = fh.read(1 << 16)
        size = fh.seek(0, os.SEEK_END)
        return first, head, _last_line(fh, size, len(first) + 1)


def _first_line(fh: BinaryIO) -> bytes | None:
    """The first line of `fh` (without its newline), read in chunks; None when none ends in time."""
    line = bytearray()
    while len(line) < FIRST_LINE_LIMIT:
        chunk = fh.read(1 << 16)
        if not chunk:
            return None
        end = chunk.find(b"\n")
        if end >= 0:
            line += chunk[:end]
            fh.seek(len(line) + 1)
            return bytes(line)
        line += chunk
    return None


def _last_line(fh: BinaryIO, size: int, start: int) -> bytes | None:
    """The last complete line of `fh` (the one before its last newline) beginning at or after `start`; read
    backwards in growing blocks, so a long last line costs its own length, a short one a small block."""
    block = 1 << 16
    while True:
        begin = max(start, size - block)
        fh.seek(begin)
        tail = fh.read(size - begin)
        end = tail.rfind(b"\n")
        if end < 0:
            return None  # no complete line after the first
        before = tail.rfind(b"\n", 0, end)
        if before >= 0 or begin == start:
            return tail[before + 1:end]
        block *= 4


def _session_started(head: bytes) -> SessionStarted | None:
    for raw in head.split(b"\n")[:-1]:  # after run_started; the last piece may be cut
        if b'"session_started"' in raw:
            try:
                event = parse_event(raw)
            except (ValidationError, json.JSONDecodeError):
                return None
            return event if isinstance(event, SessionStarted) else None
    return None


def summarize(path: Path) -> RunSummary:
    """Read only the first and last lines of a run log: cheap for `harness runs` over many long logs."""
    run_id = path.name.removesuffix(".jsonl")
    started: RunStarted | None = None
    done: Done | None = None
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):  # a FIFO or device named *.jsonl would block the listing
            return RunSummary(run_id, path, None, None, st.st_mtime, problem="not a regular file")
        first, head, last = _ends(path)
        mtime = st.st_mtime
    except OSError as exc:
        return RunSummary(run_id, path, None, None, 0.0, problem=f"{type(exc).__name__}: {exc.strerror or exc}")
    for raw in (first, last):
        if not raw:
            continue
        try:
            event = parse_event(raw)
        except (ValidationError, json.JSONDecodeError):
            continue
        if isinstance(event, RunStarted):
            started = event
        elif isinstance(event, Done):
            done = event
    alive = done is None and _locked(path)
    waiting = alive and _waits_for_approval(path)
    session = _session_started(head)
    return RunSummary(run_id, path, started, done, mtime, writer_alive=alive, waiting=waiting,
                      cut_short=done is None and not alive and cut_short(st),
                      session_model=session.model if session else None,
                      started_session=session.session_id if session else None)


def _waits_for_approval(path: Path) -> bool:
    """Whether the log's last MiB has an `approval_requested` without its `approval_resolved` (a run waits for
    an answer; the runner flushes the request before it waits)."""
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - (1 << 20)))
            tail = fh.read()
    except OSError:
        return False
    if b'"approval_requested"' not in tail:
        return False
    return bool(open_approvals(_approval_events(tail)))


def _approval_events(tail: bytes) -> Iterator[HarnessEvent]:
    for raw in tail.split(b"\n"):
        if b'"approval_' in raw:
            try:
                yield parse_event(raw)
            except (ValidationError, json.JSONDecodeError):
                continue


LAST = "last"
"""The run reference that names the newest run."""


def find_run(runs_dir: Path, ref: str) -> str:
    """The run id `ref` names in `runs_dir`: a whole run id, a unique prefix of one (like a short git hash), or
    `last` (the newest run).

    Raises:
        InvalidSpecError: nothing matches, the prefix is ambiguous (the candidates are named), or `ref` is no
            valid run id.
        UnsafeRunsDirError: the directory belongs to another user, or others may write it.
    """
    check_runs_dir(runs_dir)
    if ref == LAST:
        newest = list_runs(runs_dir)
        if not newest:
            raise InvalidSpecError(f"there are no runs in {runs_dir} yet; start one with `harness run PROMPT`")
        return newest[0].run_id
    validate_run_id(ref)
    if log_path(runs_dir, ref).is_file():
        return ref
    ids = sorted(p.name.removesuffix(".jsonl") for p in runs_dir.glob(f"{ref}*.jsonl")
                 if not p.name.endswith(".wire.jsonl")) if runs_dir.is_dir() else []
    if len(ids) == 1:
        return ids[0]
    if not ids:
        raise InvalidSpecError(f"no run {ref!r} in {runs_dir}; `harness runs` lists the runs there (a unique "
                               "prefix of a run id, or `last`, also works)")
    shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
    raise InvalidSpecError(f"{ref!r} matches {len(ids)} runs ({shown}); give more of the run id")


def list_runs(runs_dir: Path) -> list[RunSummary]:
    """Every run in `runs_dir`, newest first.

    Raises:
        UnsafeRunsDirError: the directory belongs to another user, or others may write it.
    """
    if not runs_dir.is_dir():
        return []
    check_runs_dir(runs_dir)
    logs = [p for p in runs_dir.glob("*.jsonl") if not p.name.endswith(".wire.jsonl")]
    return sorted((summarize(p) for p in logs), key=lambda s: (s.started.ts if s.started else s.mtime, s.run_id),
                  reverse=True)
