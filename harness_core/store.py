"""The run store: where run logs live, how they are written, read, listed and followed.

Layer: core storage. Knows events and the file layout `<runs-dir>/<run_id>.jsonl` (+ `.wire.jsonl`); knows
nothing of providers or rendering. Logs are private (0600 files in a 0700 directory), written one event per
line and flushed as it happens; readers tolerate a torn last line (a run still being written, or a crash).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness_core.errors import InvalidSpecError
from harness_core.events import Done, HarnessEvent, RunStarted, parse_event

__all__ = [
    "BAD_LINE_HEAD",
    "ENV_RUNS_DIR",
    "LAST",
    "BadLine",
    "LogWriter",
    "RunSummary",
    "find_run",
    "follow_events",
    "list_runs",
    "log_path",
    "new_run_id",
    "read_events",
    "resolve_runs_dir",
    "summarize",
    "validate_run_id",
    "writer_pid",
    "wire_path",
]

ENV_RUNS_DIR = "HARNESS_RUNS_DIR"
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
    """Raises `InvalidSpecError` unless `run_id` is a plain name (no separators, no traversal)."""
    if not _RUN_ID.fullmatch(run_id) or ".." in run_id:
        raise InvalidSpecError(
            f"invalid run id {run_id!r}: use letters, digits, '.', '_' and '-' only "
            "(see `harness runs` for the ids of your runs)",
            run_id=run_id,
        )
    return run_id


def log_path(runs_dir: Path, run_id: str) -> Path:
    return runs_dir / f"{validate_run_id(run_id)}.jsonl"


def wire_path(runs_dir: Path, run_id: str) -> Path:
    return runs_dir / f"{validate_run_id(run_id)}.wire.jsonl"


def _ensure_private_dir(path: Path) -> None:
    """Create the runs dir 0700; tighten an existing one we own (run logs hold prompts and output)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.stat()
    if info.st_uid == os.getuid() and info.st_mode & 0o077:
        path.chmod(0o700)


class LogWriter:
    """Append-only JSONL file, created 0600 (never overwriting).

    Lines are buffered and written with one system call per `flush` (or whenever the buffer passes
    `flush_bytes`), so a reader sees whole lines or a torn tail. The runner flushes whenever the run is about
    to wait for anything (the consumer caught up, backpressure, the end of the run): the log is current
    whenever the stream pauses, and a burst of events costs one write instead of one per event.
    """

    def __init__(self, path: Path, *, flush_bytes: int = 1 << 16) -> None:
        _ensure_private_dir(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held while we write: readers can tell "running" from "lost"
        self.path = path
        self._fd: int | None = fd
        self._buffer = bytearray()
        self._flush_bytes = flush_bytes

    def write_line(self, data: bytes) -> None:
        """Queue `data` plus a newline; written at the next `flush` (or at once past `flush_bytes`)."""
        buffer = self._buffer
        buffer += data
        buffer += b"\n"
        if len(buffer) >= self._flush_bytes:
            self.flush()

    def flush(self) -> None:
        if self._buffer and self._fd is not None:
            view = memoryview(self._buffer)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            view.release()
            self._buffer.clear()

    def close(self) -> None:
        if self._fd is not None:
            try:
                self.flush()
            finally:
                os.close(self._fd)
                self._fd = None


@dataclass(frozen=True)
class BadLine:
    """A complete line of a run log that is not a Harness event: where it is, how it starts, what is wrong."""

    number: int
    """1-based line number."""
    head: str
    """Its first bytes (at most `BAD_LINE_HEAD`), decoded with replacement characters."""
    problem: str

    def describe(self) -> str:
        return f"line {self.number} {self.problem}: {self.head!r}"

    def as_json(self) -> dict[str, Any]:
        return {"line": self.number, "head": self.head, "problem": self.problem}


BAD_LINE_HEAD = 60
"""Bytes of a bad line quoted when naming it."""


def _bad_line(number: int, raw: bytes, exc: ValidationError) -> BadLine:
    kinds = {err["type"] for err in exc.errors()}
    head = raw[:BAD_LINE_HEAD].decode("utf-8", "replace").rstrip("\n")
    if "json_invalid" in kinds or "json_type" in kinds:
        problem = "is not JSON (a corrupt or cut line)"
    elif "union_tag_not_found" in kinds:
        problem = "is not a Harness event (it has no `type`)"
    elif "union_tag_invalid" in kinds:
        problem = "is not an event type this Harness knows (written by a newer Harness?)"
    else:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"][1:]) or "event"
        problem = f"is not a valid Harness event ({where}: {first['msg']})"
    return BadLine(number, head, problem)


def read_events(path: Path, *, on_bad_line: Callable[[BadLine], None] | None = None) -> Iterator[HarnessEvent]:
    """The events of a run log. A torn last line (no newline yet) is skipped. A bad line elsewhere (not JSON, an
    unknown event type, a missing field) is given to `on_bad_line` and skipped, so a reader shows what is
    readable; without `on_bad_line` it raises.

    Raises:
        InvalidSpecError: a bad line and no `on_bad_line`; the message names the file, the line number, its
            first bytes and the problem.
    """
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.endswith(b"\n"):
                return  # torn tail: the writer is mid-line or died mid-line
            try:
                yield parse_event(raw)
            except ValidationError as exc:
                bad = _bad_line(number, raw, exc)
                if on_bad_line is None:
                    raise InvalidSpecError(f"{path}:{number} {bad.problem}: {bad.head!r}") from None
                on_bad_line(bad)


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    path: Path
    started: RunStarted | None
    done: Done | None
    mtime: float
    writer_alive: bool = False
    problem: str | None = None

    @property
    def status(self) -> str:
        """The result's status; `running` while a writer holds the log; `lost` when the writer died before `done`
        (killed, crashed machine); `unreadable` when the file cannot be read."""
        if self.problem is not None:
            return "unreadable"
        if self.done is not None:
            return self.done.result.status.value
        return "running" if self.writer_alive else "lost"

    def as_json(self) -> dict[str, Any]:
        result = self.done.result if self.done else None
        return {
            "run_id": self.run_id,
            "provider": self.started.provider if self.started else None,
            "model": (self.started.spec.get("model") if self.started else None),
            "status": self.status,
            "started_at": self.started.ts if self.started else None,
            "duration_ms": result.duration_ms if result else None,
            "prompt": (self.started.spec.get("prompt") if self.started else None),
            "session_id": result.session_id if result else None,
            "path": str(self.path),
        }


def follow_events(path: Path, *, poll: float = 0.05, on_bad_line: Callable[[BadLine], None] | None = None,
                  on_wait: Callable[[], None] | None = None) -> Iterator[HarnessEvent]:
    """The events of a run log as `read_events` gives them, then each one appended while its writer lives, until
    `done` (the run ended) or the writer is gone without it (the run is lost: the iteration just ends). Polls
    every `poll` seconds while the log is quiet, calling `on_wait` each time (a live view's clock); every wait
    ends when the writer does.

    Raises:
        InvalidSpecError: as `read_events`, for a bad line without `on_bad_line`.
    """
    number = 0
    pending = b""
    with path.open("rb") as fh:
        while True:
            chunk = fh.read(1 << 16)
            if not chunk:
                if _locked(path):  # the writer lives: wait for more
                    if on_wait is not None:
                        on_wait()
                    time.sleep(poll)
                    continue
                chunk = fh.read(1 << 16)  # the writer is gone: what it wrote is all there is, after one last read
                if not chunk:
                    return
            *lines, pending = (pending + chunk).split(b"\n")
            for raw in lines:
                number += 1
                try:
                    event = parse_event(raw)
                except ValidationError as exc:
                    bad = _bad_line(number, raw, exc)
                    if on_bad_line is None:
                        raise InvalidSpecError(f"{path}:{number} {bad.problem}: {bad.head!r}") from None
                    on_bad_line(bad)
                    continue
                yield event
                if isinstance(event, Done):
                    return


def _first_and_last_lines(path: Path) -> tuple[bytes | None, bytes | None]:
    with path.open("rb") as fh:
        first = fh.readline()
        if not first.endswith(b"\n"):
            return None, None
        size = fh.seek(0, os.SEEK_END)
        block = min(size, 1 << 20)
        fh.seek(size - block)
        tail = fh.read(block)
    lines = tail.split(b"\n")
    # the last complete line is the one before the final newline (lines[-1] is b"" or a torn fragment)
    last = lines[-2] if len(lines) >= 2 else None
    return first, last


def summarize(path: Path) -> RunSummary:
    """Read only the first and last lines of a run log: cheap for `harness runs` over many long logs."""
    run_id = path.name.removesuffix(".jsonl")
    started: RunStarted | None = None
    done: Done | None = None
    try:
        first, last = _first_and_last_lines(path)
        mtime = path.stat().st_mtime
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
    return RunSummary(run_id, path, started, done, mtime, writer_alive=alive)


def _locked(path: Path) -> bool:
    """Whether a live `LogWriter` holds `path` (it keeps an exclusive `flock` until it closes)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops a lock we may have taken
    return False


LAST = "last"
"""The run reference that names the newest run."""


def find_run(runs_dir: Path, ref: str) -> str:
    """The run id `ref` names in `runs_dir`: a whole run id, a unique prefix of one (like a short git hash), or
    `last` (the newest run).

    Raises:
        InvalidSpecError: nothing matches, the prefix is ambiguous (the candidates are named), or `ref` is no
            valid run id.
    """
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


def writer_pid(path: Path) -> int | None:
    """The process that holds the log's writer lock (the Harness driving the run), or None: no live writer, or
    not knowable here (Linux's `/proc/locks` names the holder; a lock exists only while its holder lives, so the
    answer cannot be a reused pid)."""
    try:
        st = path.stat()
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            table = fh.read()
    except OSError:
        return None
    where = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in table.splitlines():
        fields = line.split()
        # `FLOCK ADVISORY WRITE <pid> <dev:inode>`: the writer's exclusive lock, never a reader's brief shared one
        if (len(fields) >= 6 and fields[1:4] == ["FLOCK", "ADVISORY", "WRITE"] and fields[5] == where
                and fields[4].isdigit()):
            return int(fields[4])
    return None


def list_runs(runs_dir: Path) -> list[RunSummary]:
    """Every run in `runs_dir`, newest first."""
    if not runs_dir.is_dir():
        return []
    logs = [p for p in runs_dir.glob("*.jsonl") if not p.name.endswith(".wire.jsonl")]
    return sorted((summarize(p) for p in logs), key=lambda s: (s.started.ts if s.started else s.mtime, s.run_id),
                  reverse=True)
