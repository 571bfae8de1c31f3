"""Files only their owner can read: every file Harness writes is created 0600 and every directory it makes 0700.

Layer: core utility (standard library only). Knows paths and modes; nothing of runs, batches or secrets (the caller
scrubs what it writes). A file gets its mode when created (`os.open(..., 0o600)`), never by a chmod after it, so no
other user can ever open it; a file of ours an earlier version left readable by others is tightened on opening.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

__all__ = ["append_private", "make_private_dirs", "write_private"]

FILE_MODE = 0o600
DIR_MODE = 0o700


def make_private_dirs(path: Path) -> None:
    """Create `path` and each missing directory above it, each 0700 (`Path.mkdir(parents=True, mode=...)` gives
    the parents the umask's mode). Directories that exist are left as they are.

    Raises:
        OSError: a directory cannot be made.
    """
    missing: list[Path] = []
    for directory in (path, *path.parents):
        if directory.is_dir():
            break
        missing.append(directory)
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            directory.mkdir(mode=DIR_MODE)


def append_private(path: Path) -> int:
    """A file descriptor appending to `path`, created 0600 if need be (and its directory 0700); an existing file of
    ours that others may read is made 0600.

    Raises:
        OSError: it cannot be opened.
    """
    make_private_dirs(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, FILE_MODE)
    _tighten(fd)
    return fd


def write_private(path: Path, data: bytes) -> None:
    """Replace `path` with `data` atomically: written to a new 0600 file beside it, synced, renamed over it (and
    the directory synced), so a reader sees the old file or the new one, whole.

    Raises:
        OSError: it cannot be written (nothing is left behind: the temporary file is removed).
    """
    make_private_dirs(path.parent)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _sync_directory(path.parent)


def _tighten(fd: int) -> None:
    info = os.fstat(fd)
    if stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() and info.st_mode & 0o077:
        os.fchmod(fd, FILE_MODE)


def _sync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems do not sync directories; the data itself is synced
    finally:
        os.close(fd)
