"""A run's own files: its log (for every reader the viewer has: page, live stream, list, bundle), wire log and
background worker output — and nothing else: the file is named by a run id the store accepts and a fixed suffix,
opened without following links or blocking (a FIFO named like a log waits for no writer), and must be a
regular file of this user in the runs directory.

Knows the run store's file names; nothing of pages.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from harness_core import HarnessError
from harness_core.store import WORKER_LOG_SUFFIX, UnsafeRunsDirError, log_path, open_run_file, validate_run_id

__all__ = ["SUFFIXES", "is_run_file", "open_file", "own_log", "read_log"]

SUFFIXES = {"log": ".jsonl", "wire": ".wire.jsonl", "worker": WORKER_LOG_SUFFIX}
"""What a URL may ask for (`/runs/ID/log`, `/wire`, `/worker`) and the run file each names."""
_CHUNK = 1 << 16


def open_file(runs_dir: Path, run_id: str, which: str) -> tuple[str, Iterator[bytes]] | None:
    """The file name and its bytes (read in chunks as they are sent), or None when there is no such file of a
    run here (not a run id, an unknown kind, a link, another user's file, not a regular file, missing)."""
    suffix = SUFFIXES.get(which)
    if suffix is None:
        return None
    try:
        name = f"{validate_run_id(run_id)}{suffix}"
    except HarnessError:
        return None
    path = runs_dir / name
    if path.parent != runs_dir or os.sep in name:
        return None
    fd = _open_regular(path)
    if fd is None:
        return None
    return name, _chunks(fd)


def _chunks(fd: int) -> Iterator[bytes]:
    with os.fdopen(fd, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            yield chunk


def own_log(runs_dir: Path, run_id: str) -> Path | None:
    """The log of run `run_id` when it is a run's own file (opened here without following links: a regular file
    of this user that no one else may write), else None (not a run id, missing, a link, another's file). The
    caller reads it by name right after: the runs dir is this user's alone (`check_runs_dir`), so nothing else
    can put a link in its place in between."""
    fd = _open_log(runs_dir, run_id)
    if fd is None:
        return None
    os.close(fd)
    return log_path(runs_dir, run_id)


def read_log(runs_dir: Path, run_id: str) -> bytes | None:
    """The bytes of run `run_id`'s log, read from the file `own_log` accepts (the same descriptor), else None."""
    fd = _open_log(runs_dir, run_id)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def is_run_file(path: Path) -> bool:
    """Whether `path` is a regular file, not a link (a link, a FIFO, a device is never a run's file: the list
    leaves it out)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _open_log(runs_dir: Path, run_id: str) -> int | None:
    try:
        path = log_path(runs_dir, validate_run_id(run_id))
    except HarnessError:
        return None
    if path.parent != runs_dir:
        return None
    return _open_regular(path)


def _open_regular(path: Path) -> int | None:
    """A blocking read descriptor of `path` when it is a run's own file, else None. Opened non-blocking: a FIFO
    (or device) put in its place after the `lstat` is refused by `open_run_file`'s check, never waited on."""
    if not is_run_file(path):
        return None
    try:
        fd = open_run_file(path, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, UnsafeRunsDirError):
        return None
    os.set_blocking(fd, True)
    return fd
