"""Scratch directories: the temporary directories Harness makes for a run (an offline workspace and the agent's
state, a batch's workspaces), each held by its maker through a lock file beside it; and the sweep that removes
those a killed Harness left (its lock file is there, nobody holds it). A kept directory loses its lock file.
Layer: core utility (standard library only). Knows files, `flock` and the temporary directory; nothing of runs,
events or providers.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

__all__ = ["LOCK_SUFFIX", "Leftover", "Scratch", "sweep_scratch"]

LOCK_SUFFIX = ".lock"
"""`<dir>.lock` beside each scratch directory: held (`flock`) by the process that made the directory."""
_PATTERN = "harness-*" + LOCK_SUFFIX


class Scratch:
    """A new temporary directory (`prefix` + random, in `root` or the temporary directory), held by this process
    until `release`: removed then, unless kept. If this process is killed, `sweep_scratch` removes it later."""

    def __init__(self, prefix: str, root: str | Path | None = None) -> None:
        directory = Path(root) if root is not None else Path(tempfile.gettempdir())
        while True:
            fd, lock = tempfile.mkstemp(prefix=prefix, suffix=LOCK_SUFFIX, dir=directory)
            fcntl.flock(fd, fcntl.LOCK_EX)  # before the directory exists: a sweep never sees it unheld
            try:
                if os.stat(lock).st_ino == os.fstat(fd).st_ino:  # not swept in the instant before the flock
                    os.mkdir(lock[: -len(LOCK_SUFFIX)], 0o700)
                    break
            except FileExistsError:  # a directory of that name already: take another name
                os.unlink(lock)
            except FileNotFoundError:
                pass
            os.close(fd)
        self._fd: int | None = fd
        self._lock = Path(lock)
        self.path = Path(lock[: -len(LOCK_SUFFIX)]).absolute()

    def release(self, *, keep: bool = False) -> None:
        """Remove the directory (unless `keep`: then it stays, and no sweep will take it) and its lock file.
        Idempotent."""
        if self._fd is None:
            return
        try:
            if not keep:
                shutil.rmtree(self.path, ignore_errors=True)
            with contextlib.suppress(FileNotFoundError):
                self._lock.unlink()
        finally:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.release()


@dataclass(frozen=True)
class Leftover:
    """A scratch directory a killed Harness left, and its size in bytes."""

    path: Path
    size: int


def sweep_scratch(root: str | Path | None = None, *, dry_run: bool = False) -> list[Leftover]:
    """Remove every scratch directory in `root` (default: the temporary directory) whose maker is gone: its lock
    file is this user's and nobody holds it. Directories and lock files of others, symbolic links, and a
    directory without a lock file (kept, or made by something else) are never touched. `dry_run`: only say."""
    directory = Path(root) if root is not None else Path(tempfile.gettempdir())
    found: list[Leftover] = []
    try:
        locks = sorted(directory.glob(_PATTERN))
    except OSError:
        return found
    for lock in locks:
        leftover = _sweep_one(lock, dry_run=dry_run)
        if leftover is not None:
            found.append(leftover)
    return found


def _sweep_one(lock: Path, *, dry_run: bool) -> Leftover | None:
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return None  # held: its maker is alive
        target = lock.with_name(lock.name[: -len(LOCK_SUFFIX)])
        try:
            dst = target.lstat()
        except FileNotFoundError:
            dst = None
        if dst is not None and (not stat.S_ISDIR(dst.st_mode) or dst.st_uid != os.geteuid()):
            return None  # not what Harness made: leave both alone
        size = _size(target) if dst is not None else 0
        if not dry_run:
            if dst is not None:
                shutil.rmtree(target, ignore_errors=True)
            with contextlib.suppress(FileNotFoundError):
                lock.unlink()
        return Leftover(target, size)
    finally:
        os.close(fd)


def _size(path: Path) -> int:
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total
