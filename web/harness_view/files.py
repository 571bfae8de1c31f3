"""A run's own files served as text: its log, wire log and background worker output — and nothing else: the
file is named by a run id the store accepts and a fixed suffix, opened without following links, and must be a
regular file of this user in the runs directory.

Knows the run store's file names; nothing of pages.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from harness_core import HarnessError
from harness_core.store import WORKER_LOG_SUFFIX, UnsafeRunsDirError, open_run_file, validate_run_id

__all__ = ["SUFFIXES", "open_file"]

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
    try:
        fd = open_run_file(path, os.O_RDONLY)
    except (OSError, UnsafeRunsDirError):
        return None
    return name, _chunks(fd)


def _chunks(fd: int) -> Iterator[bytes]:
    with os.fdopen(fd, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            yield chunk
