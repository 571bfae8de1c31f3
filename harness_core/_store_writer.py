"""Appending to a run log: `LogWriter`, the one writer of a log, holding its lock while the run lives.

Layer: core storage (behind `harness_core.store`, which re-exports `LogWriter`). Knows only files: the private
runs directory (0700), a log created 0600 and never overwritten, an exclusive `flock` held until it closes (how
readers tell a running run from a lost one); nothing of events, providers or the CLI.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
from pathlib import Path

from harness_core._private_files import make_private_dirs

__all__ = ["LogWriter"]


def _ensure_private_dir(path: Path) -> None:
    """Create the runs dir 0700; tighten an existing one we own (run logs hold prompts and output)."""
    make_private_dirs(path)
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
        fd = _create_locked(path)  # the lock is held while we write: readers tell "running" from "lost"
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
