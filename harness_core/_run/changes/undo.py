"""Undo a run's file changes: each file its `files_changed` record names, put back as it was before the run.

Layer: core runtime (after a run). Knows the run log's `run_started` and `files_changed` events, the pure `diffs`
module and the run's directory; knows nothing of providers, the runner or the CLI. All or nothing, inside the
run's cwd only; what can and cannot be undone: docs/runs.md (undo).
"""

from __future__ import annotations

import hashlib
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from harness_core._run.changes.diffs import apply_hunks, parse_hunks
from harness_core.errors import UndoRefusedError
from harness_core.events import Done, FileChange, FilesChanged, RunStarted
from harness_core.store import read_events

__all__ = ["FileUndo", "UndoPlan", "apply_undo", "plan_undo"]

Action = Literal["restore", "remove", "recreate", "move back"]
_EMPTY = hashlib.sha256(b"").hexdigest()


@dataclass(frozen=True)
class FileUndo:
    """What undoing one file does: write `content` at `path` (None: remove it), and remove `also` (a rename's
    new path)."""

    path: str
    action: Action
    content: bytes | None = None
    also: str | None = None


@dataclass(frozen=True)
class UndoPlan:
    """A checked undo of one run: the files to put back, and those already as they were before it."""

    run_id: str
    cwd: Path
    files: tuple[FileUndo, ...] = ()
    already: tuple[str, ...] = ()
    problems: tuple[str, ...] = field(default=())
    """Why files cannot be put back (each names its file); `apply_undo` refuses a plan with any."""

    @property
    def refusal(self) -> str:
        """Why the plan cannot be applied: every file that stands in the way, and that nothing changed."""
        return (f"cannot undo run {self.run_id}: {'; '.join(self.problems)}. Nothing was changed (undo puts back "
                "every file of a run, or none)")


def plan_undo(log: Path) -> UndoPlan:
    """Read run `log` and check each file it changed against the workspace as it is now.

    Raises:
        UndoRefusedError: the run is not over, it recorded no file change, or its directory is gone.
    """
    run_id = log.name.removesuffix(".jsonl")
    started: RunStarted | None = None
    changed: FilesChanged | None = None
    done = False
    for event in read_events(log, on_bad_line=lambda _bad: None):
        if isinstance(event, RunStarted):
            started = event
        elif isinstance(event, FilesChanged):
            changed = event
        elif isinstance(event, Done):
            done = True
    if not done:
        raise UndoRefusedError(f"run {run_id} has not ended (still running, or lost: its Harness ended before it "
                               "did, so its log has no record of the files it changed); `harness show "
                               f"{run_id}` shows what it did", run_id=run_id)
    if changed is None or not changed.files:
        raise UndoRefusedError(f"run {run_id} changed no file that an edit tool announced: nothing to undo (what a "
                               "shell command writes is not followed)", run_id=run_id)
    raw_cwd = started.spec.get("cwd") if started is not None else None
    cwd = Path(raw_cwd) if isinstance(raw_cwd, str) else None
    if cwd is None or not cwd.is_dir():
        raise UndoRefusedError(f"the directory run {run_id} worked in ({cwd}) is gone (an --offline run's "
                               "temporary workspace is removed when it ends): nothing to put back", run_id=run_id)
    files: list[FileUndo] = []
    already: list[str] = []
    problems: list[str] = []
    for change in changed.files:
        try:
            undo = _file_undo(cwd, change)
        except _Problem as problem:
            problems.append(f"{change.path}: {problem}")
            continue
        if undo is None:
            already.append(change.path)
        else:
            files.append(undo)
    return UndoPlan(run_id=run_id, cwd=cwd, files=tuple(files), already=tuple(already), problems=tuple(problems))


def apply_undo(plan: UndoPlan) -> list[FileUndo]:
    """Put the files of `plan` back (each written whole through a temporary file beside it, its mode kept);
    returns what was done.

    Raises:
        UndoRefusedError: the plan has problems (nothing is written), or writing a file failed (the files before
            it in the plan are put back, the rest are not; the message says which).
    """
    if plan.problems:
        raise UndoRefusedError(plan.refusal, run_id=plan.run_id, files=list(plan.problems))
    done: list[FileUndo] = []
    for undo in plan.files:
        try:
            _apply(plan.cwd, undo)
        except OSError as exc:
            finished = ", ".join(d.path for d in done) or "none"
            raise UndoRefusedError(f"undoing run {plan.run_id} stopped at {undo.path}: {exc.strerror or exc}; put "
                                   f"back before it: {finished}", run_id=plan.run_id) from None
        done.append(undo)
    return done


# --- one file ----------------------------------------------------------------------------------------------


class _Problem(Exception):
    """Why one file cannot be put back (the message, without the path)."""


def _file_undo(cwd: Path, change: FileChange) -> FileUndo | None:
    """What putting `change`'s file back takes, checked against the file now; None when it is as before already."""
    existed, left = change.kind != "add", change.kind != "delete"
    if (existed and change.before_sha256 is None) or (left and change.after_sha256 is None):
        raise _Problem(_unrecorded(change))  # a side too large to read, or a log from before the digests
    path = _inside(cwd, change.path)
    if change.kind == "rename" and change.move_path:
        moved = _inside(cwd, change.move_path)
        now, there = _read(moved), _read(path)
        if now is None and there is not None and _digest(there) == change.before_sha256:
            return None
        if there is not None:
            raise _Problem("a file is there again since the run (it was moved away)")
        if now is None or _digest(now) != change.after_sha256:
            raise _Problem(f"changed since the run: {change.move_path} no longer holds what the run left")
        before = _rebuilt(change, now)
        return FileUndo(change.path, "move back", before, also=change.move_path)
    now = _read(path)
    if change.kind == "add":
        if now is None:
            return None
        if _digest(now) != change.after_sha256:
            raise _Problem("changed since the run (it no longer holds what the run wrote)")
        return FileUndo(change.path, "remove")
    if change.kind == "delete":
        if now is not None:
            if _digest(now) == change.before_sha256:
                return None
            raise _Problem("a file is there again since the run deleted it")
        return FileUndo(change.path, "recreate", _rebuilt(change, b""))
    if now is None:
        raise _Problem("deleted since the run")
    digest = _digest(now)
    if digest == change.before_sha256:
        return None
    if digest != change.after_sha256:
        raise _Problem("changed since the run (it no longer holds what the run left)")
    return FileUndo(change.path, "restore", _rebuilt(change, now))


def _unrecorded(change: FileChange) -> str:
    if change.note:
        return f"its content before the run is not in the log ({change.note})"
    return "its log was written before Harness recorded what undo needs (the files' digests)"


def _rebuilt(change: FileChange, after: bytes) -> bytes:
    """The file's bytes before the run: its diff applied backwards to `after`, checked against its digest."""
    if change.before_sha256 == _EMPTY:  # an empty file: its diff is empty, or has no line to rebuild from
        return b""
    if _digest(after) == change.before_sha256:  # moved, its content unchanged
        return after
    if not change.diff or change.note:
        raise _Problem(_unrecorded(change) if change.note else "its content before the run is not in the log")
    try:
        text = after.decode("utf-8")
    except UnicodeDecodeError:
        raise _Problem("not text now: its content before the run cannot be rebuilt") from None
    rebuilt = apply_hunks(text, parse_hunks(change.diff), reverse=True)
    before = rebuilt.encode("utf-8") if rebuilt is not None else None
    if before is None or hashlib.sha256(before).hexdigest() != change.before_sha256:
        raise _Problem("its recorded diff does not rebuild the content before the run exactly (the log masks a "
                       "secret in it, or a line ending a diff cannot carry)")
    return before


def _inside(cwd: Path, relative: str) -> Path:
    """`relative` under `cwd`, refused when it leaves it (absolute, `..`, a link pointing out)."""
    full = Path(os.path.normpath(cwd / relative))
    root = cwd.resolve()
    if Path(relative).is_absolute() or not full.resolve().is_relative_to(root):
        raise _Problem(f"outside the run's directory {cwd}: not touched")
    if full.is_symlink():
        raise _Problem("a symbolic link now: not touched")
    return full


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise _Problem("a directory now") from None
    except OSError as exc:
        raise _Problem(f"cannot be read ({exc.strerror or exc})") from None


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _apply(cwd: Path, undo: FileUndo) -> None:
    path = cwd / undo.path
    if undo.also is not None:  # a rename: its content put back where it is, then the file moved back (mode kept)
        moved = cwd / undo.also
        if undo.content is not None and undo.content != moved.read_bytes():
            _write(moved, undo.content)
        path.parent.mkdir(parents=True, exist_ok=True)
        os.replace(moved, path)
    elif undo.content is None:
        path.unlink()
    else:
        _write(path, undo.content)


def _write(path: Path, data: bytes) -> None:
    """`data` into `path` whole: a temporary file beside it, renamed over it (the mode of the file it replaces
    kept; a file recreated gets the usual mode, as the umask allows)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.undo")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
