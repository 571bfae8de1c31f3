"""Removing old runs from the run store (`harness runs prune`, `store.prune_runs`): which runs go, and exactly
the files of each that the store knows (`RUN_FILE_SUFFIXES`).
Layer: core storage (behind `harness_core.store`). Knows the writer's lock and what makes a file a run log;
knows nothing of other events beyond a summary's status and end, nor of providers or the CLI. What is removed
and what is never touched: docs/run-store.md (retention).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness_core.events import RunStarted, parse_event
from harness_core.store.runs import FIRST_LINE_LIMIT, RUN_FILE_SUFFIXES, RunSummary, list_runs
from harness_core.store.writer import cut_short

__all__ = ["PruneReport", "PrunedRun", "SkippedLog", "prune", "prune_runs"]


@dataclass(frozen=True)
class PrunedRun:
    """A run removed by a prune (or that would be, in a dry run)."""

    run_id: str
    status: str
    ended: float
    """When it ended (its `done` event), or when its log was last written (no `done`): seconds since the epoch."""
    files: tuple[Path, ...]
    """Every file of the run (each a name of the store's registry), its log last."""
    sizes: tuple[int, ...]
    """The bytes of each of `files`."""

    @property
    def size(self) -> int:
        return sum(self.sizes)

    def as_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "status": self.status, "ended_at": self.ended,
                "files": [str(f) for f in self.files], "bytes": self.size}


@dataclass(frozen=True)
class SkippedLog:
    """A `*.jsonl` of the runs directory, old enough, that is not a Harness run log: nothing of it is removed."""

    path: Path
    reason: str
    """Why it is no run log: `its first line is not JSON`, `it is empty`, ..."""

    def as_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "reason": self.reason}


@dataclass(frozen=True)
class PruneReport:
    runs: tuple[PrunedRun, ...]
    """Newest first, as `harness runs` lists them."""
    dry_run: bool
    held: tuple[str, ...] = ()
    """Runs old enough (and of a status asked for) whose log its writer still holds: kept."""
    errors: tuple[str, ...] = ()
    """Why a run could not be removed (a file's path and the system's reason); its log is kept."""
    skipped: tuple[SkippedLog, ...] = ()
    """Files that look like run logs by name (old enough, of a status asked for) but are not: kept, with what
    is beside them."""

    @property
    def size(self) -> int:
        return sum(run.size for run in self.runs)

    def as_json(self) -> dict[str, Any]:
        return {"dry_run": self.dry_run, "count": len(self.runs), "bytes": self.size,
                "runs": [run.as_json() for run in self.runs], "held": list(self.held), "errors": list(self.errors),
                "skipped": [log.as_json() for log in self.skipped]}


def prune(runs_dir: Path, runs: Iterable[RunSummary], *, suffixes: Sequence[str], older_than: float,
          statuses: Iterable[str] | None = None, dry_run: bool = False, now: float | None = None) -> PruneReport:
    """Remove the runs of `runs` (the summaries of every `*.jsonl` in `runs_dir`) that ended more than
    `older_than` seconds before `now`, only those of `statuses` when given, never one whose writer still holds
    its log, never a file that is not a run log; of each run only its regular files `<run_id><suffix>` for
    `suffixes` (the store's registry of a run's files).

    Raises:
        ValueError: `older_than` is negative.
    """
    if older_than < 0:
        raise ValueError(f"older_than must be 0 or more seconds, not {older_than}")
    cutoff = (time.time() if now is None else now) - older_than
    wanted = None if statuses is None else frozenset(statuses)
    removed: list[PrunedRun] = []
    held: list[str] = []
    errors: list[str] = []
    skipped: list[SkippedLog] = []
    for summary in runs:
        if wanted is not None and summary.status not in wanted:
            continue
        ended = _ended(summary)
        if ended is None or ended > cutoff:
            continue
        log = summary.path
        try:  # never blocks (a FIFO), never follows a link
            fd = os.open(log, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            continue  # removed meanwhile
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                skipped.append(SkippedLog(log, "it is a symbolic link"))
            else:
                errors.append(f"{log}: {exc.strerror or exc}")
            continue
        try:
            # Read before locking: a log being created has no complete first line yet, and its writer takes
            # its lock just after creating it; a shared lock taken then would stop it.
            problem = _not_a_run_log(fd, summary.run_id)
            if problem is not None:
                skipped.append(SkippedLog(log, problem))
                continue
            try:  # a shared lock: refused while a writer holds its exclusive one; keeps any writer out meanwhile
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                held.append(summary.run_id)
                continue
            files = [*_run_files(runs_dir, summary.run_id, suffixes, log), log]  # the log last
            sizes = [*_sizes(files[:-1]), os.fstat(fd).st_size]
            run = PrunedRun(summary.run_id, summary.status, ended, tuple(files), tuple(sizes))
            failure = None if dry_run else _remove(run.files, fd)
        finally:
            os.close(fd)
        if failure is not None:
            errors.append(failure)
        else:
            removed.append(run)
    return PruneReport(tuple(removed), dry_run, tuple(held), tuple(errors), tuple(skipped))


def _not_a_run_log(fd: int, run_id: str) -> str | None:
    """Why the open file `fd` is not the log of run `run_id` (its first line a complete `run_started` of that
    run), or None when it is."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        return "it is not a regular file"
    if info.st_size == 0:
        # a log a full disk left empty (its writer sealed it, `CUT_SHORT_MODE`): a run's, with nothing in it to lose
        return None if cut_short(info) else "it is empty"
    first = bytearray()
    while len(first) < FIRST_LINE_LIMIT:
        chunk = os.pread(fd, min(1 << 16, FIRST_LINE_LIMIT - len(first)), len(first))
        if not chunk:
            return "its first line is incomplete (being written, or cut)"
        end = chunk.find(b"\n")
        if end >= 0:
            first += chunk[:end]
            break
        first += chunk
    else:
        return f"it has no line end in its first {FIRST_LINE_LIMIT >> 20} MiB"
    try:
        event = parse_event(bytes(first))
    except ValidationError:
        try:
            json.loads(first)
        except ValueError:
            return "its first line is not JSON"
        return "its first line is not a Harness event"
    if not isinstance(event, RunStarted):
        return f"its first line is a `{event.type}` event, not `run_started`"
    if event.run_id != run_id:
        return f"its first line starts run {event.run_id!r}, not {run_id!r}"
    return None


def _run_files(runs_dir: Path, run_id: str, suffixes: Sequence[str], log: Path) -> list[Path]:
    """The regular files `<run_id><suffix>` beside the log (not the log itself), in the registry's order."""
    found: list[Path] = []
    for suffix in suffixes:
        path = runs_dir / f"{run_id}{suffix}"
        if path == log or path in found:
            continue
        try:
            if stat.S_ISREG(path.lstat().st_mode):  # a directory or link of that name is not the store's
                found.append(path)
        except OSError:
            continue  # absent (most runs have no wire log, no answers)
    return found


def _sizes(paths: Iterable[Path]) -> list[int]:
    sizes: list[int] = []
    for path in paths:
        try:
            sizes.append(path.lstat().st_size)
        except OSError:
            sizes.append(0)  # removed meanwhile
    return sizes


def _ended(summary: RunSummary) -> float | None:
    """When the run ended (its `done`), else when its log was last written; None when that cannot be read."""
    if summary.done is not None:
        return summary.done.ts
    if summary.problem is None:
        return summary.mtime
    try:
        return summary.path.lstat().st_mtime
    except OSError:
        return None


def _remove(paths: Sequence[Path], log_fd: int) -> str | None:
    """Unlink each path in order (the log, last, only while it is still the file open as `log_fd`); the first
    failure as a message, or None. Never removes a directory."""
    opened = os.fstat(log_fd)
    for at, path in enumerate(paths):
        try:
            if at == len(paths) - 1:
                try:
                    now = path.lstat()
                except FileNotFoundError:
                    return None  # removed meanwhile
                if (now.st_dev, now.st_ino) != (opened.st_dev, opened.st_ino):
                    return f"{path}: replaced while it was being pruned; run the prune again"
            path.unlink(missing_ok=True)
        except OSError as exc:
            return f"{exc.filename or path}: {exc.strerror or exc}"
    return None


def prune_runs(runs_dir: Path, *, older_than: float, statuses: Iterable[str] | None = None, dry_run: bool = False,
               now: float | None = None) -> PruneReport:
    """Remove the files of each run in `runs_dir` (those of `RUN_FILE_SUFFIXES`, nothing else) that ended more
    than `older_than` seconds ago (its `done`, or its log's last write without one), only runs of `statuses`
    when given; never a run whose writer still holds its log (running, waiting for approval), however old, never
    a `*.jsonl` that is not a run log (its first line the run's `run_started`: others are reported as skipped).
    `dry_run` only says what would go. Runs are kept until pruned: there is no default retention.

    Raises:
        ValueError: `older_than` is negative.
    """
    return prune(runs_dir, list_runs(runs_dir), suffixes=RUN_FILE_SUFFIXES, older_than=older_than, statuses=statuses,
                 dry_run=dry_run, now=now)
