"""The patches of a batch: `<dir>/<task id>.patch` and a SWE-bench style `<dir>/predictions.jsonl`.

Layer: core, batch operation. Knows files and JSON only: not git, agents, providers or runs (the caller scrubs
a patch of the run's secrets). Every file is created 0600, the directory 0700. The files' form and how a torn
`predictions.jsonl` is mended: docs/jobs-and-batches.md (patches).
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

from harness_core.files.private import append_private, make_private_dirs, write_private

__all__ = ["PREDICTIONS_FILE", "Patches"]

PREDICTIONS_FILE = "predictions.jsonl"
_KEYS = ("instance_id", "model_patch", "model_name_or_path")
_TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def _parse(line: bytes) -> tuple[str, bytes] | None:
    """`(instance_id, the line re-encoded)` for a well-formed prediction line, else None."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or not all(isinstance(record.get(key), str) for key in _KEYS):
        return None
    return record["instance_id"], _encode(record)


def _encode(record: dict[str, str]) -> bytes:
    return json.dumps({key: record[key] for key in _KEYS}).encode("ascii") + b"\n"


class Patches:
    """Writes a batch's patches into one directory; safe to use from several threads."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        make_private_dirs(self.directory)
        self._lock = threading.Lock()
        self._lines: dict[str, bytes] = {}
        self._load()

    @property
    def predictions_path(self) -> Path:
        return self.directory / PREDICTIONS_FILE

    @property
    def instance_ids(self) -> frozenset[str]:
        """The ids that have a line in `predictions.jsonl`."""
        with self._lock:
            return frozenset(self._lines)

    def patch_path(self, task_id: str) -> Path:
        if not _TASK_ID.fullmatch(task_id):
            raise ValueError(f"task id {task_id!r} is not a safe file name")
        return self.directory / f"{task_id}.patch"

    def write(self, task_id: str, patch: str, model_name_or_path: str) -> Path:
        """Write `<dir>/<task_id>.patch` and the task's line of `predictions.jsonl` (replacing an earlier one);
        both are synced to disk before this returns. Returns the patch file's path."""
        path = self.patch_path(task_id)
        line = _encode({"instance_id": task_id, "model_patch": patch, "model_name_or_path": model_name_or_path})
        with self._lock:
            write_private(path, patch.encode("utf-8", "surrogateescape"))
            if task_id in self._lines:
                del self._lines[task_id]  # the new line goes last, as a killed-and-rerun batch appends it
                self._lines[task_id] = line
                self._rewrite()
            else:
                self._lines[task_id] = line
                fd = append_private(self.predictions_path)
                try:
                    os.write(fd, line)  # one write of a whole line (O_APPEND)
                    os.fsync(fd)
                finally:
                    os.close(fd)
        return path

    def _load(self) -> None:
        try:
            data = self.predictions_path.read_bytes()
        except FileNotFoundError:
            return
        raw = data.split(b"\n")
        if raw and raw[-1] == b"":
            raw.pop()
        dirty = not data.endswith(b"\n") and bool(data)
        for chunk in raw:
            parsed = _parse(chunk)
            if parsed is None:
                dirty = True
                continue
            instance_id, line = parsed
            if instance_id in self._lines:
                dirty = True
                del self._lines[instance_id]
            self._lines[instance_id] = line
        if dirty:
            self._rewrite()

    def _rewrite(self) -> None:
        write_private(self.predictions_path, b"".join(self._lines.values()))
