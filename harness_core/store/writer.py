"""Appending to a run log: `LogWriter`, the one writer of a log, holding its lock while the run lives.

Layer: core storage (behind `harness_core.store`, which re-exports `LogWriter`). Knows only files (0700
directory, 0600 log never overwritten, an exclusive `flock` until it closes, a log cut short sealed 0400 by
`CUT_SHORT_MODE`); nothing of events, providers or the CLI. Why: docs/run-store.md.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

from harness_core.files.private import make_private_dirs
from harness_core.store.owner import check_runs_dir

__all__ = ["CUT_SHORT_MODE", "LogWriter", "cut_short"]

CUT_SHORT_MODE = 0o400
"""The mode of a log whose writer could not write all of it (a full disk, an I/O error): read-only, the one mark
that needs no free space. A reader tells such a log (no `done`, no writer) from a lost run's by it."""


def cut_short(st: os.stat_result) -> bool:
    """Whether the log `st` describes was sealed by a writer whose writes failed (`CUT_SHORT_MODE`)."""
    return stat.S_IMODE(st.st_mode) == CUT_SHORT_MODE


def _ensure_private_dir(path: Path) -> None:
    """Create the runs dir 0700; tighten an existing one we own (run logs hold prompts and output).

    Raises:
        UnsafeRunsDirError: it belongs to another user, or others may write it (`check_runs_dir`).
    """
    make_private_dirs(path)
    check_runs_dir(path)
    info = path.stat()
    if info.st_uid == os.geteuid() and info.st_mode & 0o077:
        path.chmod(0o700)


class LogWriter:
    """Append-only JSONL file, created 0600 (never overwriting).

    Lines are buffered and written with one system call per `flush` (or whenever the buffer passes
    `flush_bytes`), so a reader sees whole lines or a torn tail. The runner flushes whenever the run is about
    to wait for anything (the consumer caught up, backpressure, the end of the run): the log is current
    whenever the stream pauses, and a burst of events costs one write instead of one per event.

    A write that fails (a full disk, an I/O error, a file size limit) never raises: the file is cut back to its
    last complete line, the buffer is dropped, `failure` keeps the error, `on_failure` is called once, and
    later lines are dropped until `resume()` (the runner's last lines: the error and `done`). A writer that
    failed seals the file `CUT_SHORT_MODE` when it closes.
    """

    def __init__(self, path: Path, *, flush_bytes: int = 1 << 16) -> None:
        _ensure_private_dir(path.parent)
        fd = _create_locked(path)  # the lock is held while we write: readers tell "running" from "lost"
        self.path = path
        self._fd: int | None = fd
        self._buffer = bytearray()
        self._flush_bytes = flush_bytes
        self._size = 0  # bytes of complete lines in the file
        self._dropping = False
        self._used = False  # a line was given (written, buffered or dropped)
        self.failure: OSError | None = None
        """The first write that failed (None while every write succeeded)."""
        self.on_failure: Callable[[LogWriter, OSError], None] | None = None
        """Called once, with this writer and the error, when a write first fails."""

    @property
    def written(self) -> bool:
        """Whether every line given since the last failure (or since the start) is in the file or the buffer."""
        return not self._dropping

    def write_line(self, data: bytes) -> None:
        """Queue `data` plus a newline; written at the next `flush` (or at once past `flush_bytes`). Dropped after
        a failed write until `resume()`."""
        self._used = True
        if self._dropping:
            return
        buffer = self._buffer
        buffer += data
        buffer += b"\n"
        if len(buffer) >= self._flush_bytes:
            self.flush()

    def flush(self) -> None:
        """Write out the buffered lines (see the class for what a failure does; it never raises)."""
        if not self._buffer or self._fd is None:
            return
        fd, buffer = self._fd, self._buffer
        done = 0
        try:
            while done < len(buffer):
                with memoryview(buffer)[done:] as view:  # released whatever happens: the buffer stays resizable
                    done += os.write(fd, view)
        except OSError as exc:
            self._failed(fd, exc)
            return
        self._size += done
        buffer.clear()

    def resume(self) -> None:
        """After a failure: take lines again (and try to write them), after what the file holds."""
        self._dropping = False

    def _failed(self, fd: int, exc: OSError) -> None:
        self._buffer.clear()
        self._dropping = True
        with contextlib.suppress(OSError):
            os.ftruncate(fd, self._size)  # a torn line would hide the complete ones before it from nobody, but
            # a line cut mid-way and then followed by more would corrupt the log: end on a complete line
        first = self.failure is None
        if first:
            self.failure = exc
        if first and self.on_failure is not None:
            self.on_failure(self, exc)

    @property
    def used(self) -> bool:
        """Whether a line was ever given to `write_line` (a log without one is an empty file)."""
        return self._used

    def discard(self) -> None:
        """Remove the file and close it (a run stopped before its first event: an empty log would read as a lost
        run). Idempotent; after `close` the file stays."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                self.path.unlink()  # still locked: no reader saw it unlocked, hence "lost"
            self._buffer.clear()
            self.close()

    def close(self) -> None:
        if self._fd is not None:
            try:
                self.flush()
                if self.failure is not None:
                    with contextlib.suppress(OSError):
                        os.fchmod(self._fd, CUT_SHORT_MODE)
            finally:
                os.close(self._fd)
                self._fd = None


_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC


def _create_locked(path: Path) -> int:
    """Create `path` (never overwriting: FileExistsError) already holding its exclusive `flock`: made under a
    private name, locked, then linked into place, so no reader ever sees it unlocked (a "lost" run for an
    instant) and a reader's brief shared lock can never make ours fail. Where hard links are not supported, it is
    created in place and locked at once."""
    private = path.with_name(f".{path.name}.{secrets.token_hex(4)}.creating")
    fd = os.open(private, _FLAGS, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # nobody else knows the private name: this never waits
        os.link(private, path)
    except FileExistsError:
        os.close(fd)
        raise
    except OSError:  # no hard links here (some FUSE or network file systems)
        os.close(fd)
        fd = os.open(path, _FLAGS, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)  # a reader's shared lock is brief: wait for it
    finally:
        with contextlib.suppress(OSError):
            os.unlink(private)
    return fd
