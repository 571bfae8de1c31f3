"""Process-tree snapshots from /proc, so shutdown can kill descendants that left our process group.

Layer: transport. Knows nothing of JSON-RPC or any CLI. Linux only; elsewhere every function is a no-op.
The tree is snapshot *before* the leader is signalled (afterwards its descendants are reparented and lost);
the start time read with each pid guards against pid reuse.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Collection
from pathlib import Path

__all__ = ["MARK_PREFIX", "ProcEntry", "alive", "descendants", "kill_entries", "marked", "marked_with"]

MARK_PREFIX = "HARNESS_PROC_"
"""Children get `HARNESS_PROC_<token>=1` in their environment; every descendant inherits it, so `marked`
finds processes of a run even after they escaped the tree (reparented to init when their parent died)."""

_PROC = Path("/proc")

ProcEntry = tuple[int, int]
"""(pid, start time in clock ticks since boot)."""


def _stat(pid: int) -> tuple[int, int, str] | None:
    """(ppid, starttime, state) of `pid`, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    # The command name is in parentheses and may itself contain ") ": split on the last one.
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        return int(fields[1]), int(fields[19]), fields[0].decode()
    except (IndexError, ValueError):
        return None


def alive(entries: Collection[ProcEntry]) -> list[ProcEntry]:
    """The entries still running: same pid, same start time (not a reused pid), not a zombie."""
    found = []
    for pid, started in entries:
        info = _stat(pid)
        if info is not None and info[1] == started and info[2] not in ("Z", "X"):
            found.append((pid, started))
    return found


def descendants(pid: int) -> list[ProcEntry]:
    """Every live descendant of `pid` (not `pid` itself), found by walking /proc once, through zombies (a process
    read before its parent died still names it)."""
    if not _PROC.is_dir():
        return []
    children: dict[int, list[tuple[int, int, bool]]] = {}
    try:
        names = os.listdir(_PROC)
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        info = _stat(int(name))
        if info is not None:
            children.setdefault(info[0], []).append((int(name), info[1], info[2] not in ("Z", "X")))
    found: list[ProcEntry] = []
    stack = [pid]
    while stack:
        for child, started, live in children.get(stack.pop(), ()):
            if live:
                found.append((child, started))
            stack.append(child)
    return found


def kill_entries(entries: list[ProcEntry]) -> list[int]:
    """SIGKILL each entry still alive with the same start time (so a reused pid is never hit).

    Returns the pids signalled.
    """
    killed: list[int] = []
    for pid, started in entries:
        info = _stat(pid)
        if info is None or info[1] != started or info[2] in ("Z", "X"):
            continue
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue
        killed.append(pid)
    return killed


def marked(token: str) -> list[ProcEntry]:
    """Every live process whose initial environment carries `HARNESS_PROC_<token>=1` (one /proc walk)."""
    if not _PROC.is_dir():
        return []
    needle = f"{MARK_PREFIX}{token}=1".encode()
    me = os.getpid()
    found: list[ProcEntry] = []
    try:
        names = os.listdir(_PROC)
    except OSError:
        return []
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue
        if needle not in environ.split(b"\0"):
            continue
        info = _stat(int(name))
        if info is not None and info[2] not in ("Z", "X"):
            found.append((int(name), info[1]))
    return found


def marked_with(tokens: Collection[str]) -> set[int]:
    """Live processes carrying any of the marks `tokens` (`HARNESS_PROC_<token>=1`), wherever they were
    reparented. With the marks of the children this process started (`ChildProcess.started_marks()`), a test
    sees exactly what its own runs left behind, whatever else runs on the machine."""
    if not _PROC.is_dir() or not tokens:
        return set()
    needles = {f"{MARK_PREFIX}{token}=1".encode() for token in tokens}
    prefix = MARK_PREFIX.encode()
    me = os.getpid()
    found: set[int] = set()
    for name in os.listdir(_PROC):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue
        if prefix not in environ or needles.isdisjoint(environ.split(b"\0")):
            continue
        info = _stat(int(name))
        if info is not None and info[2] not in ("Z", "X"):
            found.add(int(name))
    return found
