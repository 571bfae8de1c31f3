"""Which process holds a run log's writer lock: `/proc/locks`, read and checked against `/proc/PID/fd`.

Layer: core storage (behind `harness_core.store`, which re-exports `writer_pid`). Knows Linux's `/proc` and the
run store's locking rule (a `LogWriter` holds an exclusive `flock` until it closes; readers take a brief shared
one); knows nothing of events, providers or the CLI. Why the inode and not the device: docs/run-store.md (holder).
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LockLine", "has_open", "holder_in", "locked", "parse_lock_line", "writer_pid"]

_PROC_LOCKS = "/proc/locks"


@dataclass(frozen=True)
class LockLine:
    """One lock of `/proc/locks`: `1: FLOCK  ADVISORY  WRITE 2933 fe:00:2146308 0 EOF`."""

    kind: str
    """`FLOCK`, `POSIX`, `OFDLCK`, `LEASE`, ..."""
    access: str
    """`WRITE` (exclusive) or `READ` (shared)."""
    pid: int
    """The holder as this pid namespace sees it (0 or less: not visible here)."""
    major: int
    minor: int
    inode: int
    waiting: bool = False
    """A process blocked waiting for this lock (the kernel's `->` lines), not a holder."""


def parse_lock_line(line: str) -> LockLine | None:
    """One line of `/proc/locks`, or None for a line that is not a lock on a file (a lease without an inode,
    a format this code does not know)."""
    fields = line.split()
    if len(fields) < 2 or not fields[0].endswith(":"):
        return None
    rest = fields[1:]
    waiting = rest[0] == "->"
    if waiting:
        rest = rest[1:]
    # KIND MODE ACCESS PID DEV:INODE START END (FLOCK and POSIX locks; a lease has the same columns)
    if len(rest) < 5:
        return None
    kind, access, pid, where = rest[0], rest[2], rest[3], rest[4]
    parts = where.split(":")
    if len(parts) != 3:
        return None
    try:
        return LockLine(kind, access, int(pid), int(parts[0], 16), int(parts[1], 16), int(parts[2]), waiting)
    except ValueError:
        return None


def writer_pid(path: Path) -> int | None:
    """The process that holds the log's writer lock (the Harness driving the run), or None: no live writer, or
    not knowable here (Linux's `/proc/locks` names the holder; a lock exists only while its holder lives, so the
    answer cannot be a reused pid). Only an exclusive `flock` counts, never a reader's brief shared one."""
    try:
        st = path.stat()
        with open(_PROC_LOCKS, encoding="ascii", errors="replace") as fh:
            table = fh.read()
    except OSError:
        return None
    return holder_in(table, st)


def holder_in(table: str, st: os.stat_result) -> int | None:
    """The pid in `table` (the text of `/proc/locks`) holding an exclusive `flock` on the file `st` describes.

    A lock on the same device and inode is that file; a lock on the same inode of another device number (btrfs
    subvolumes, overlay file systems) counts only once the process is seen to have the file open."""
    unsure: list[int] = []
    for line in table.splitlines():
        lock = parse_lock_line(line)
        if (lock is None or lock.waiting or lock.kind != "FLOCK" or lock.access != "WRITE" or lock.pid <= 0
                or lock.inode != st.st_ino):
            continue
        if (lock.major, lock.minor) == (os.major(st.st_dev), os.minor(st.st_dev)):
            return lock.pid
        unsure.append(lock.pid)
    return next((pid for pid in unsure if has_open(pid, st)), None)


def has_open(pid: int, st: os.stat_result) -> bool:
    """Whether process `pid` has the file `st` describes open (False when its open files cannot be read: it
    ended, or belongs to another user)."""
    fds = f"/proc/{pid}/fd"
    try:
        names = os.listdir(fds)
    except OSError:
        return False
    for name in names:
        try:
            target = os.stat(f"{fds}/{name}")  # follows the fd's link to the open file itself
        except OSError:
            continue
        if (target.st_ino, target.st_dev) == (st.st_ino, st.st_dev):
            return True
    return False


def locked(path: Path) -> bool:
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
