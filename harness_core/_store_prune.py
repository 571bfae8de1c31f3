"""Removing old runs from the run store (`harness runs prune`, `store.prune_runs`): which runs go, and every file
of each one.

Layer: core storage (behind `harness_core.store`, which lists the runs and re-exports `prune_runs`). Knows the
file layout (a run owns `<run_id>.jsonl` and every `<run_id>.*` entry beside it: its wire log, its approval
answers, whatever the store adds) and the writer's lock; knows nothing of events beyond a summary's status and
end, nor of providers or the CLI.

Nothing is removed by default: runs are kept until pruned. A run whose log is still held by its writer (running,
or waiting for approval) is never removed, however old: it is locked for the whole removal, so no writer can
take it meanwhile, and its log goes last, so a removal cut short leaves a run that a later prune finishes.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness_core.store import RunSummary

__all__ = ["PruneReport", "PrunedRun", "prune"]


@dataclass(frozen=True)
class PrunedRun:
    """A run removed by a prune (or that would be, in a dry run)."""

    run_id: str
    status: str
    ended: float
    """When it ended (its `done` event), or when its log was last written (no `done`): seconds since the epoch."""
    files: tuple[Path, ...]
    """Every file and directory of the run, its log last."""
    size: int
    """Their bytes."""

    def as_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "status": self.status, "ended_at": self.ended,
                "files": [str(f) for f in self.files], "bytes": self.size}


@dataclass(frozen=True)
class PruneReport:
    runs: tuple[PrunedRun, ...]
    """Newest first, as `harness runs` lists them."""
    dry_run: bool
    held: tuple[str, ...] = ()
    """Runs old enough (and of a status asked for) whose log its writer still holds: kept."""
    errors: tuple[str, ...] = ()
    """Why a run could not be removed (a file's path and the system's reason); its log is kept."""

    @property
    def size(self) -> int:
        return sum(run.size for run in self.runs)

    def as_json(self) -> dict[str, Any]:
        return {"dry_run": self.dry_run, "count": len(self.runs), "bytes": self.size,
                "runs": [run.as_json() for run in self.runs], "held": list(self.held), "errors": list(self.errors)}


def prune(runs_dir: Path, runs: Iterable[RunSummary], *, older_than: float, statuses: Iterable[str] | None = None,
          dry_run: bool = False, now: float | None = None) -> PruneReport:
    """Remove the runs of `runs` (the summaries of every run in `runs_dir`) that ended more than `older_than`
    seconds before `now`, only those of `statuses` when given, never one whose writer still holds its log.

    Raises:
        ValueError: `older_than` is negative.
    """
    if older_than < 0:
        raise ValueError(f"older_than must be 0 or more seconds, not {older_than}")
    summaries = list(runs)
    try:
        names = os.listdir(runs_dir)
    except FileNotFoundError:
        return PruneReport((), dry_run)
    files = _files_by_run(names, {s.run_id for s in summaries})
    cutoff = (time.time() if now is None else now) - older_than
    wanted = None if statuses is None else frozenset(statuses)
    removed: list[PrunedRun] = []
    held: list[str] = []
    errors: list[str] = []
    for summary in summaries:
        if wanted is not None and summary.status not in wanted:
            continue
        ended = _ended(summary)
        if ended is None or ended > cutoff:
            continue
        log = summary.path
        owned = sorted(files.get(summary.run_id, []), key=lambda name: name == log.name)  # the log last
        run = PrunedRun(summary.run_id, summary.status, ended, tuple(runs_dir / n for n in owned), 0)
        try:
            fd = os.open(log, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        except FileNotFoundError:
            continue  # removed meanwhile
        except OSError as exc:
            errors.append(f"{log}: {exc.strerror or exc}")
            continue
        try:
            try:  # a shared lock: refused while a writer holds its exclusive one; keeps any writer out meanwhile
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                held.append(summary.run_id)
                continue
            run = PrunedRun(run.run_id, run.status, ended, run.files, sum(_size(p) for p in run.files))
            problem = None if dry_run else _remove(run.files)
        finally:
            os.close(fd)
        if problem is not None:
            errors.append(problem)
        else:
            removed.append(run)
    return PruneReport(tuple(removed), dry_run, tuple(held), tuple(errors))


def _files_by_run(names: Iterable[str], run_ids: set[str]) -> dict[str, list[str]]:
    """The entries of the runs directory by the run that owns them: the longest run id `R` such that the name
    starts with `R.` (run `abc` owns `abc.wire.jsonl`, never `abcd.jsonl`; run `a.b` owns `a.b.jsonl`, not
    run `a`). Entries no run owns are left out."""
    owned: dict[str, list[str]] = {}
    for name in names:
        owner = None
        for at, char in enumerate(name):
            if char == "." and name[:at] in run_ids:
                owner = name[:at]
        if owner is not None:
            owned.setdefault(owner, []).append(name)
    return owned


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


def _size(path: Path) -> int:
    """Bytes of a file, or of every file under a directory (links not followed)."""
    try:
        info = path.lstat()
    except OSError:
        return 0
    if not path.is_dir() or path.is_symlink():
        return info.st_size
    total = 0
    for folder, _dirs, names in os.walk(path):
        for name in names:
            with contextlib.suppress(OSError):  # removed meanwhile
                total += os.lstat(os.path.join(folder, name)).st_size
    return total


def _remove(paths: Iterable[Path]) -> str | None:
    """Remove each path in order (a directory with what is in it); the first failure as a message, or None."""
    for path in paths:
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        except OSError as exc:
            return f"{exc.filename or path}: {exc.strerror or exc}"
    return None
