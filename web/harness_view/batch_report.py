"""A batch's figures per provider/model (pass rate with its 95% Wilson interval, pass@k, cost, tokens, time) and
per task, from its results rows: the viewer's stand-in for `harness report` until `harness_core.eval` has one.

Pure: rows in, figures out. Knows the rows (`batches.BatchRow`); knows nothing of files, HTTP or drawing.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from harness_view.batches import BatchRow

__all__ = ["Cell", "Group", "Report", "TaskLine", "pass_at_k", "percentile", "report", "wilson"]

_Z95 = 1.959963984540054


def wilson(passed: int, total: int, z: float = _Z95) -> tuple[float, float]:
    """The Wilson score interval of `passed` out of `total` (95% by default): (low, high); (0, 1) for none."""
    if total == 0:
        return 0.0, 1.0
    p = passed / total
    denom = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one task with `n` attempts of which `c` passed (Chen et al., 2021)."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def percentile(values: list[float], q: float) -> float | None:
    """The `q` quantile (0..1) of `values`, interpolated linearly; None for none."""
    if not values:
        return None
    ordered = sorted(values)
    at = (len(ordered) - 1) * q
    low, high = math.floor(at), math.ceil(at)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


@dataclass(frozen=True)
class Cell:
    """What one provider/model did on one task: its attempts' rows."""

    rows: tuple[BatchRow, ...]

    @property
    def passed(self) -> int:
        return sum(row.passed for row in self.rows)


@dataclass
class Group:
    """One provider/model's figures over the batch."""

    provider: str
    model: str | None
    tasks: int = 0
    runs: int = 0
    passed_tasks: int = 0
    """Tasks with at least one passing attempt."""
    attempts: int = 0
    passed_attempts: int = 0
    cost_usd: float = 0.0
    costed: int = 0
    """Attempts that reported a cost."""
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    pass_k: dict[int, float] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.provider} / {self.model}" if self.model else self.provider

    @property
    def rate(self) -> float:
        return self.passed_attempts / self.attempts if self.attempts else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.passed_attempts, self.attempts)

    @property
    def cost_per_solved(self) -> float | None:
        """Cost over the tasks solved (None when nothing reported a cost or nothing was solved)."""
        if not self.costed or not self.passed_tasks:
            return None
        return self.cost_usd / self.passed_tasks

    @property
    def partial_cost(self) -> bool:
        """Some attempts reported a cost and some did not: the cost (and the cost per solved task) is a floor."""
        return 0 < self.costed < self.attempts

    @property
    def p50(self) -> float | None:
        return percentile(self.seconds, 0.5)

    @property
    def p95(self) -> float | None:
        return percentile(self.seconds, 0.95)


@dataclass(frozen=True)
class TaskLine:
    """One task across the groups: its cell per group label (None where the group did not play it)."""

    task_id: str
    cells: dict[str, Cell]


@dataclass
class Report:
    """The figures of one batch."""

    groups: list[Group]
    tasks: list[TaskLine]
    verified: bool
    """Whether passing means a verifier's verdict (else: the run succeeded)."""


def report(rows: list[BatchRow], models: dict[str, str | None] | None = None) -> Report:
    """Figures of `rows`; `models` gives a run's model (from its log) where the row does not name one."""
    models = models or {}
    by_cell: dict[tuple[str, str], list[BatchRow]] = {}
    groups: dict[str, Group] = {}
    for row in rows:
        model = row.model or models.get(row.result.run_id)
        group = groups.get(_label(row.result.provider, model))
        if group is None:
            group = groups[_label(row.result.provider, model)] = Group(row.result.provider, model)
        by_cell.setdefault((row.result.id, group.label), []).append(row)
    lines: dict[str, dict[str, Cell]] = {}
    for (task_id, label), cell_rows in by_cell.items():
        cell = Cell(tuple(sorted(cell_rows, key=lambda r: r.attempt or 0)))
        lines.setdefault(task_id, {})[label] = cell
        _add(groups[label], cell)
    for group in groups.values():
        _pass_k(group, [line[group.label] for line in lines.values() if group.label in line])
    verified = any(row.verified is not None or row.reward is not None for row in rows)
    ordered = sorted(groups.values(), key=lambda g: g.label)
    return Report(ordered, [TaskLine(t, lines[t]) for t in sorted(lines)], verified)


def _label(provider: str, model: str | None) -> str:
    return f"{provider} / {model}" if model else provider


def _add(group: Group, cell: Cell) -> None:
    group.tasks += 1
    group.passed_tasks += cell.passed > 0
    for row in cell.rows:
        result = row.result
        group.attempts += 1
        group.runs += result.attempts
        group.passed_attempts += row.passed
        if result.cost_usd is not None:
            group.cost_usd += result.cost_usd
            group.costed += 1
        group.input_tokens += result.usage.input_tokens
        group.output_tokens += result.usage.output_tokens
        group.seconds.append(result.duration_ms / 1000)
        if not row.passed:
            group.errors[result.error_code or ("not verified" if result.ok else result.status)] += 1


def _pass_k(group: Group, cells: list[Cell]) -> None:
    """pass@k for each k up to the fewest attempts any task had (only when tasks had more than one)."""
    least = min((len(c.rows) for c in cells), default=0)
    if least < 2:
        return
    for k in range(1, least + 1):
        group.pass_k[k] = sum(pass_at_k(len(c.rows), c.passed, k) for c in cells) / len(cells)
