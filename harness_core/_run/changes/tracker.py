"""The files a run changed: each file as it was before the run compared with after it (`files_changed`).

Layer: core runtime (the runner's side of file changes). Knows tool events, `FileChange`, the run's cwd and the
pure `diffs` module; knows nothing of providers, the stream or the CLI. How "before" is known, and its limits
(the files followed, sizes, digests for `harness undo`): docs/runs.md (events, `files_changed`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from harness_core._run.changes.diffs import apply_hunks, parse_hunks, unified_diff
from harness_core.events import (
    ApprovalRequested,
    FileChange,
    FilesChanged,
    HarnessEvent,
    ToolKind,
    ToolResult,
    ToolStatus,
    ToolUse,
)

__all__ = ["FILE_EVENTS", "MAX_FILE_BYTES", "FileTracker"]

FILE_EVENTS = frozenset({ToolUse, ToolResult, ApprovalRequested})
"""The event types the pipe hands to `FileTracker.observe` (tool events only: never a delta)."""
MAX_FILE_BYTES = 1 << 20
"""A file larger than this is compared by size and mtime, not read or diffed."""
MAX_FILES = 256
"""Files read in full per run; past that, files are compared by size and mtime only."""
MAX_DIFF_CHARS = 200_000
"""A longer diff is cut (and says so) before it is written to the run log."""
_WRITES = frozenset({ToolKind.EDIT, ToolKind.WRITE})
_Kind = Literal["add", "modify", "delete", "rename"]


@dataclass(frozen=True)
class _Snap:
    """A file's state at one moment: absent, its bytes, or (too large) its size and mtime."""

    exists: bool
    data: bytes | None = None
    size: int = 0
    mtime_ns: int = 0
    recorded_sha256: str | None = None
    """A replay's: the digest the recording says the file had (its recorded text may be scrubbed)."""

    def same(self, other: _Snap) -> bool:
        if self.exists != other.exists:
            return False
        if self.data is not None and other.data is not None:
            return self.data == other.data
        return (self.data is None) == (other.data is None) and (self.size, self.mtime_ns) == (
            other.size, other.mtime_ns)

    def text(self) -> str | None:
        """The content as text; None when absent, unread or binary (whose `data` is a NUL and its digest)."""
        if self.data is None or self.data[:1] == b"\0":
            return None
        return self.data.decode("utf-8")

    def sha256(self) -> str | None:
        """The SHA-256 (hex) of the file's bytes; None when absent or not read (too large)."""
        if not self.exists or self.data is None:
            return None
        if self.recorded_sha256 is not None:
            return self.recorded_sha256
        if self.data[:1] == b"\0":  # binary: what is kept is its digest
            return self.data[1:].hex()
        return hashlib.sha256(self.data).hexdigest()

    def dumps(self) -> str:
        """As a wire log `file` record's data (a replay reads the workspace from it)."""
        text = self.text()
        digest = self.data[1:].hex() if self.data is not None and text is None else None
        return json.dumps({"exists": self.exists, "text": text, "digest": digest, "size": self.size,
                           "mtime_ns": self.mtime_ns, "sha256": self.sha256() if text is not None else None})

    @classmethod
    def loads(cls, recorded: str) -> _Snap:
        found = json.loads(recorded)
        data = (found["text"].encode("utf-8") if found.get("text") is not None
                else b"\0" + bytes.fromhex(found["digest"]) if found.get("digest") else None)
        sha = found.get("sha256")
        return cls(bool(found["exists"]), data, int(found.get("size", 0)), int(found.get("mtime_ns", 0)),
                   sha if isinstance(sha, str) else None)


def _content(data: bytes) -> bytes:
    """What is kept of a file's bytes: its text, or (binary) a NUL and its digest, enough to tell a change."""
    if b"\0" not in data[:8192]:
        try:
            data.decode("utf-8")
            return data
        except UnicodeDecodeError:
            pass
    return b"\0" + hashlib.sha256(data).digest()


_ABSENT = _Snap(False)


@dataclass
class _File:
    path: str
    before: _Snap
    settled: bool = False
    late: bool = False
    """The change was in the file when it was first read, and its content before could not be rebuilt."""
    changes: list[FileChange] = field(default_factory=list)


class FileTracker:
    """Follows the files a run's tools change (see the module docstring); one per run."""

    def __init__(self, cwd: str | os.PathLike[str]) -> None:
        self.recorder: Callable[[str, str], None] | None = None
        """Called with each read (`workspace:PATH`, its JSON) for the wire log, when there is one."""
        self.recorded: Callable[[str], str | None] | None = None
        """A replay's answers to the reads, from its recording (the workspace is then never read)."""
        self.enabled = True
        """False: follow nothing (a replay of a recording made before workspace reads were recorded)."""
        self._cwd = Path(cwd)
        self._root: Path | None = None
        self._files: dict[str, _File] = {}
        self._outside: dict[str, FileChange] = {}
        self._read_count = 0

    @property
    def announced(self) -> bool:
        """Whether any tool announced a file change (only then is there a `files_changed` event)."""
        return bool(self._files or self._outside)

    def observe(self, event: HarnessEvent) -> None:
        """Learn from a tool event (one of `FILE_EVENTS`): read a file the first time a change to it is announced;
        on a successful result, check whether that read came too late."""
        if not self.enabled:
            return
        display = event.display  # type: ignore[union-attr]
        changes = display.changes
        if not changes:
            if display.kind not in _WRITES or not display.path:
                return
            changes = (FileChange(path=display.path, kind="add" if display.kind is ToolKind.WRITE else "modify"),)
            given = False
        else:
            given = True
        approval = isinstance(event, ApprovalRequested)
        done = isinstance(event, ToolResult) and display.status is ToolStatus.COMPLETED
        for change in changes:
            tracked = self._track(change.path, change if given else None)
            if tracked is None:
                continue
            if change.move_path:
                self._track(change.move_path, None)
            if approval:
                tracked.settled = True
            elif done and not tracked.settled:
                self._settle(tracked, change if given else None)

    def files_changed(self) -> FilesChanged | None:
        """The run's `files_changed` event: every announced file whose content differs from before the run (or
        that changed before it could be read), in the order they were first announced (files outside the cwd
        last). None when no tool announced a change."""
        if not self.announced:
            return None
        out: dict[str, FileChange] = {}
        moved: set[str] = set()
        afters = {path: self._read(path) for path in self._files}
        for path, tracked in self._files.items():
            if path in moved:
                continue
            after = afters[path]
            target = next((c.move_path for c in reversed(tracked.changes) if c.move_path), None)
            target = self._relative(target) if target else None
            if target in self._files and not after.exists and afters[target].exists:
                moved.add(target)
                out.pop(target, None)
                out[path] = _described(path, tracked.before, afters[target], move_path=target)
                continue
            if tracked.late and tracked.before.same(after):
                kind = tracked.changes[-1].kind if tracked.changes else "modify"
                out[path] = FileChange(path=path, kind=kind, note="changed before Harness could read it: the "
                                       "content before the run is not known")
            elif not tracked.before.same(after):
                out[path] = _described(path, tracked.before, after)
        return FilesChanged(files=(*out.values(), *self._outside.values()))

    # --- inside ----------------------------------------------------------------------------------------------

    def _track(self, raw: str, change: FileChange | None) -> _File | None:
        path = self._relative(raw)
        if path is None:  # outside the workspace: never read; the provider's own description is all there is
            if change is not None:
                self._outside[raw] = change.model_copy(update={
                    "note": "outside the workspace: not read; the diff is the agent's own"})
            return None
        tracked = self._files.get(path)
        if tracked is None:
            tracked = self._files[path] = _File(path, self._read(path))
        if change is not None:
            tracked.changes.append(change)
        return tracked

    def _settle(self, tracked: _File, change: FileChange | None) -> None:
        """A tool's successful result: was the first read before its change (the file differs now) or after?"""
        tracked.settled = True
        now = self._read(tracked.path)
        if not now.same(tracked.before):
            return
        if change is None:  # the tool says it edited or wrote the file, and it is as first read: read too late
            tracked.late = True
            return
        if change.kind == "add":
            tracked.before = _ABSENT
            return
        text = now.text()
        hunks = parse_hunks(change.diff) if change.diff else []
        if text is not None and hunks:
            rebuilt = apply_hunks(text, hunks, reverse=True)
            if rebuilt is not None and rebuilt != text:
                tracked.before = _Snap(True, rebuilt.encode("utf-8"))
                return
        if hunks or change.diff is None:
            tracked.late = True

    def _relative(self, raw: str) -> str | None:
        """`raw` relative to the cwd (posix), or None when it lies outside it (links resolved)."""
        if self._root is None:
            self._root = self._cwd.resolve()
        full = Path(os.path.normpath(self._root / raw))
        try:
            rel = full.relative_to(self._root)
            if not full.resolve().is_relative_to(self._root):
                return None
        except (ValueError, OSError):
            return None
        text = rel.as_posix()
        return None if text in ("", ".") else text

    def _read(self, path: str) -> _Snap:
        name = f"workspace:{path}"
        if self.recorded is not None:
            answer = self.recorded(name)
            return _Snap.loads(answer) if answer is not None else _ABSENT
        snap = self._read_disk(path)
        if self.recorder is not None:
            self.recorder(name, snap.dumps())
        return snap

    def _read_disk(self, path: str) -> _Snap:
        assert self._root is not None
        full = self._root / path
        try:
            info = full.stat()
        except OSError:
            return _ABSENT
        if not full.is_file():
            return _Snap(True, None, info.st_size, info.st_mtime_ns)
        if info.st_size > MAX_FILE_BYTES or self._read_count >= MAX_FILES * 4:
            return _Snap(True, None, info.st_size, info.st_mtime_ns)
        try:
            with full.open("rb") as handle:
                data = handle.read(MAX_FILE_BYTES + 1)
        except OSError:
            return _Snap(True, None, info.st_size, info.st_mtime_ns)
        self._read_count += 1
        if len(data) > MAX_FILE_BYTES:
            return _Snap(True, None, len(data), info.st_mtime_ns)
        return _Snap(True, _content(data), len(data), info.st_mtime_ns)


def _described(path: str, before: _Snap, after: _Snap, *, move_path: str | None = None) -> FileChange:
    """One file's entry of `files_changed`: its kind, and its diff when both sides are text."""
    kind: _Kind
    if move_path is not None:
        kind = "rename"
    elif not before.exists:
        kind = "add"
    elif not after.exists:
        kind = "delete"
    else:
        kind = "modify"
    old = before.text() if before.exists else None
    new = after.text() if after.exists else None
    digests = {"before_sha256": before.sha256(), "after_sha256": after.sha256()}
    unread = (before.exists and old is None) or (after.exists and new is None)
    if unread:
        large = any(s.exists and s.data is None for s in (before, after))
        why = f"larger than {MAX_FILE_BYTES // 1024} KiB: not diffed" if large else "binary file: not diffed"
        return FileChange(path=path, kind=kind, move_path=move_path, note=why, **digests)
    diff = unified_diff(path, old, new, move_path=move_path)
    note: str | None = None
    if len(diff) > MAX_DIFF_CHARS:
        diff, note = diff[:MAX_DIFF_CHARS], f"diff cut at {MAX_DIFF_CHARS} characters"
    return FileChange(path=path, kind=kind, diff=diff, move_path=move_path, note=note, **digests)
