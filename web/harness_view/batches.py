"""The batches a viewer knows: results files (`harness batch`'s `*.results.jsonl`) by a short key, and their rows.

A batch is named in URLs by its key (a hash of its path), never by a path. Knows the results-file format
(`harness_core.batch.TaskResult`, plus the fields later Harness versions add); knows nothing of HTTP or figures.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness_core.batch import TaskResult
from pydantic import ValidationError

__all__ = ["RESULTS_GLOB", "Batch", "BatchRow", "BatchRows", "discover_batches", "read_rows"]

RESULTS_GLOB = "*.results.jsonl"
_LIMIT = 256 << 20


@dataclass(frozen=True)
class Batch:
    """One results file, as the viewer names it."""

    key: str
    path: Path

    @property
    def name(self) -> str:
        return self.path.name.removesuffix(".jsonl")


@dataclass(frozen=True)
class BatchRow:
    """One task cell's last result line: the result, and the fields a newer results file may add (`model`,
    `attempt`, `reward`, `verified`), read when present."""

    result: TaskResult
    model: str | None = None
    attempt: int | None = None
    reward: float | None = None
    verified: bool | None = None

    @property
    def passed(self) -> bool:
        """A verified pass when the batch had a verifier, else the run's success."""
        if self.verified is not None:
            return self.verified
        if self.reward is not None:
            return self.reward >= 1.0
        return self.result.ok


@dataclass
class BatchRows:
    """A results file read: its rows (the last line of each task cell counts) and the lines that were not rows."""

    rows: list[BatchRow] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _key(path: Path) -> str:
    return hashlib.sha256(str(path).encode("utf-8", "surrogateescape")).hexdigest()[:12]


def discover_batches(explicit: tuple[Path, ...], cwd: Path) -> list[Batch]:
    """The batches given (`--batch FILE`), else the results files in `cwd`, sorted by name."""
    paths = [p.expanduser().resolve() for p in explicit] or sorted(p.resolve() for p in cwd.glob(RESULTS_GLOB)
                                                                   if p.is_file())
    unique = list(dict.fromkeys(paths))
    return [Batch(_key(p), p) for p in unique]


def read_rows(path: Path) -> BatchRows:
    """The rows of a results file. A line that is not a task result is named in `problems` and skipped; a torn
    last line (a batch still writing) is skipped silently. A missing or unreadable file is one problem."""
    read = BatchRows()
    try:
        with path.open("rb") as fh:
            data = fh.read(_LIMIT)
    except OSError as exc:
        read.problems.append(f"cannot read {path}: {exc.strerror or exc}")
        return read
    lines = data.split(b"\n")
    lines.pop()  # after the last newline: empty, or a line being written
    cells: dict[tuple[Any, ...], BatchRow] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            result = TaskResult.model_validate(raw)
        except (ValueError, ValidationError):
            read.problems.append(f"line {number} is not a task result (skipped)")
            continue
        row = BatchRow(result, model=_text(raw.get("model")), attempt=_int(raw.get("attempt")),
                       reward=_number(raw.get("reward")), verified=_flag(raw.get("verified")))
        cells[(result.id, result.provider, row.model, row.attempt)] = row
    read.rows = list(cells.values())
    if read.problems and not read.rows and not path.name.endswith(".results.jsonl"):
        read.problems.insert(0, _tasks_file(path))
    return read


def _tasks_file(path: Path) -> str:
    """What to say of a file with no task result in it, not named like results: most likely the tasks file."""
    results = path.parent / f"{path.stem}.results.jsonl"
    where = (f"its results are in {results}: give that to --batch" if results.is_file() else
             f"its results go to {results} once `harness batch {path.name}` ran")
    return f"{path.name} holds no task results: it looks like a tasks file (what `harness batch` reads); {where}"


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _flag(value: object) -> bool | None:
    return value if isinstance(value, bool) else None
