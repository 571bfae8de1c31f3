"""The patches of a batch: `<dir>/<cell>.patch` (the task id for a task of one cell) and `<dir>/predictions.jsonl`.

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
_TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,254}")  # a task id, or a cell's name (`id+provider+a2`)
_Key = tuple[str, str]  # (instance_id, model_name_or_path): a line of predictions.jsonl replaces one of the same


def _parse(line: bytes) -> tuple[_Key, bytes] | None:
    """`((instance_id, model_name_or_path), the line re-encoded)` for a well-formed prediction line, else None."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or not all(isinstance(record.get(key), str) for key in _KEYS):
        return None
    return (record["instance_id"], record["model_name_or_path"]), _encode(record)


def _encode(record: dict[str, str]) -> bytes:
    return json.dumps({key: record[key] for key in _KEYS}).encode("ascii") + b"\n"


class Patches:
    """Writes a batch's patches into one directory; safe to use from several threads."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        make_private_dirs(self.directory)
        self._lock = threading.Lock()
        self._lines: dict[_Key, bytes] = {}
        self._models: dict[str, set[str]] = {}  # instance_id → the model names of its lines
        self._load()

    @property
    def predictions_path(self) -> Path:
        return self.directory / PREDICTIONS_FILE

    @property
    def instance_ids(self) -> frozenset[str]:
        """The ids that have a line in `predictions.jsonl`."""
        with self._lock:
            return frozenset(instance for instance, _ in self._lines)

    def patch_path(self, task_id: str) -> Path:
        if not _TASK_ID.fullmatch(task_id):
            raise ValueError(f"task id {task_id!r} is not a safe file name")
        return self.directory / f"{task_id}.patch"

    def write(self, name: str, patch: str, model_name_or_path: str, instance_id: str | None = None) -> Path:
        """Write `<dir>/<name>.patch` and its line of `predictions.jsonl` (`instance_id`: default `name`, the task
        id), replacing an earlier line: of the same instance and model name for a cell's patch, of the instance for
        a task's (a task of one cell, `name` = its id); both are synced to disk before this returns. Returns the
        patch file's path."""
        path = self.patch_path(name)
        instance_id = instance_id or name
        key = (instance_id, model_name_or_path)
        line = _encode({"instance_id": instance_id, "model_patch": patch, "model_name_or_path": model_name_or_path})
        with self._lock:
            write_private(path, patch.encode("utf-8", "surrogateescape"))
            same = self._models.get(instance_id, set()) if name == instance_id else {model_name_or_path}
            replaced = [(instance_id, m) for m in same if (instance_id, m) in self._lines]
            for earlier in replaced:
                del self._lines[earlier]  # the new line goes last, as a killed-and-rerun batch appends it
                self._models[instance_id].discard(earlier[1])
            self._lines[key] = line
            self._models.setdefault(instance_id, set()).add(model_name_or_path)
            if replaced:
                self._rewrite()
            else:
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
            key, line = parsed
            if key in self._lines:
                dirty = True
                del self._lines[key]
            self._lines[key] = line
            self._models.setdefault(key[0], set()).add(key[1])
        if dirty:
            self._rewrite()

    def _rewrite(self) -> None:
        write_private(self.predictions_path, b"".join(self._lines.values()))
