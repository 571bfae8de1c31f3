"""A batch's cells: each task played by each provider and model of the batch (unless its line pins them), each of
its `attempts`; the file name of a cell's worktree and patch; its verifier and its timeout.

Layer: batch (pure: builds plain data from tasks; starts nothing). Knows the task model; knows no provider host
(the caller resolves provider names), executor or file the batch writes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from harness_core.batch.tasks import BatchTask
from harness_core.errors import HarnessError
from harness_core.spec import AgentRunSpec

__all__ = ["CELL_NAME", "Cell", "cells_of", "model_name"]

CELL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,254}")
"""A cell's file name: its task's id, then `+` and what tells it from the task's other cells (`+`: never in an id)."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_LONGEST = 200
_T = TypeVar("_T")


@dataclass(frozen=True)
class Cell:
    """One cell: a task, the provider and model that play it, which of the batch's attempts it is."""

    task: BatchTask
    provider: str
    """The provider's registered name."""
    model: str | None
    """The model asked for (None: the provider's default, or the task's own `model`)."""
    attempt: int
    name: str
    """Its worktree's and patch's file name: the task id when the task has one cell."""
    attempts: int = 1
    """The batch's attempts per task (for the patch's model name)."""

    @property
    def key(self) -> tuple[str, str, str, int]:
        """As `TaskResult.cell`: what a re-run of the batch matches results by."""
        return self.task.id, self.provider, self.model or "", self.attempt

    @property
    def spec(self) -> AgentRunSpec:
        if self.model is None or self.model == self.task.spec.model:
            return self.task.spec
        return self.task.spec.model_copy(update={"model": self.model})

    @property
    def label(self) -> str:
        """How messages name it: `id`, or `id [provider, model, attempt 2]` for a task of several cells."""
        if self.name == self.task.id:
            return self.task.id
        said = [self.provider] + ([self.model] if self.model else []) + [f"attempt {self.attempt}"]
        return f"{self.task.id} [{', '.join(said)}]"


def model_name(provider: str, model: str | None, attempt: int, attempts: int) -> str:
    """A patch's `model_name_or_path` in predictions.jsonl: `harness/PROVIDER[/MODEL][/attempt-N]`."""
    return f"harness/{provider}" + (f"/{model}" if model else "") + (f"/attempt-{attempt}" if attempts > 1 else "")


def cells_of(tasks: Sequence[BatchTask], *, providers: Sequence[str | None], models: Sequence[str], attempts: int,
             resolve: Callable[[str | None], str]) -> tuple[list[Cell], dict[str, str]]:
    """Every cell of `tasks` in order (a task's cells together: provider, model, attempt), and {task id: problem}
    for tasks whose provider `resolve` (a name or alias, None: the default → the registered name) raises a
    `HarnessError` for."""
    cells: list[Cell] = []
    problems: dict[str, str] = {}
    for task in tasks:
        try:
            names = _unique(resolve(p) for p in ([task.provider] if task.provider else providers or [None]))
        except HarnessError as exc:
            problems[task.id] = exc.message
            continue
        pinned = task.spec.model is not None and "model" in task.spec.model_fields_set
        own_models: list[str | None] = [task.spec.model] if pinned else [*_unique(models)] or [None]
        several = (len(names) > 1, len(own_models) > 1, attempts > 1)
        for provider in names:
            for model in own_models:
                for attempt in range(1, attempts + 1):
                    name = _name(task.id, provider, model, attempt, several)
                    cells.append(Cell(task, provider, model, attempt, name, attempts))
    return cells, problems


def _unique(items: Iterable[_T]) -> list[_T]:
    seen: list[_T] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def _name(task_id: str, provider: str, model: str | None, attempt: int, several: tuple[bool, bool, bool]) -> str:
    parts = [_safe(provider)] if several[0] else []
    if several[1]:
        parts.append(_safe(model or "default"))
    if several[2]:
        parts.append(f"a{attempt}")
    if not parts:
        return task_id
    name = "+".join([task_id, *parts])
    if len(name) > _LONGEST:
        name = f"{task_id}+{_digest('+'.join(parts), 12)}+a{attempt}"
    return name


def _safe(part: str) -> str:
    """`part` as a file name's piece: other characters as '-', and then a digest of it so two never meet."""
    safe = _UNSAFE.sub("-", part)
    return safe if safe == part else f"{safe}-{_digest(part, 6)}"


def _digest(text: str, size: int) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:size]
