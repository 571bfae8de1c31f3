"""What batches came to (`harness report`, `report(...)`): their results files read back, the last line of each cell
of a file kept, and per provider/model (per file too, where files share one) the pass rate, pass@k, reward, cost,
tokens, times and failures; per task its cells.

Layer: batch (reads results files; the statistics are `batch.scores`). Knows no provider, executor or terminal.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness_core.batch.results import RESULTS_LIMIT, TaskResult
from harness_core.batch.scores import mean_pass_at_k, percentile, wilson_interval
from harness_core.errors import InvalidSpecError
from harness_core.files.inputs import InputFileError, read_input

__all__ = ["GroupReport", "Report", "TaskCells", "TaskRow", "build_report", "read_results", "report"]

SolvedBy = Literal["verifier", "status", "mixed"]


class GroupReport(BaseModel):
    """One provider and model of a report: its cells (task x attempt) summed up. Rates are fractions (0..1)."""

    model_config = ConfigDict(frozen=True)

    label: str = Field(description="`provider` or `provider/model` (the columns of the per-task grid); "
                                   "`FILE-STEM: provider[/model]` when several results files have this group.")
    provider: str
    model: str | None = Field(description="None: the provider's default model.")
    file: str | None = Field(default=None, description="The results file its cells are from (a group is never "
                                                       "merged across files); None: results in hand.")
    tasks: int = Field(description="Distinct task ids.")
    runs: int = Field(description="Cells: task x attempt (the last line of each).")
    succeeded: int = Field(description="Cells whose run ended `success` (verified or not).")
    failed: int
    interrupted: int = Field(description="Cells a stopped batch left interrupted (a re-run plays them): out of the "
                                         "rates, pass@k, rewards and times.")
    solved_by: SolvedBy = Field(description="What `solved` counts: `verifier` (every cell has one: verified), "
                                            "`status` (none has: the run succeeded), `mixed` (each cell by its own).")
    solved: int = Field(description="Cells solved: verified True, or status success for a cell without a verifier.")
    verified_runs: int = Field(description="Finished cells with a verifier's verdict: the pass rate's denominator.")
    passed: int = Field(description="Of those, the cells verified True (reward >= PASS_REWARD).")
    no_verdict: int = Field(default=0, description="Finished cells whose verifier gave no verdict (out of the rate).")
    pass_rate: float | None = Field(description="passed / verified_runs; None without a verifier.")
    pass_rate_low: float | None = Field(description="The Wilson 95% confidence interval of pass_rate: low end.")
    pass_rate_high: float | None
    attempts: int = Field(description="The most verified attempts a task of this group has (K of pass@K).")
    pass_at_k: dict[int, float] = Field(description="k -> the unbiased pass@k averaged over the tasks with a "
                                                    "verifier, for each k every such task has at least k of.")
    pass_at_k_note: str | None = Field(default=None, description="Why pass@k is missing for some k (1..attempts).")
    mean_reward: float | None = Field(description="The mean reward of the cells with a verdict (None: none).")
    cost_usd: float | None = Field(description="Summed over every cell that reported a cost (None: none did).")
    cost_per_solved_usd: float | None = Field(description="cost_usd / solved (None: nothing solved or no cost).")
    input_tokens: int
    cached_input_tokens: int
    output_tokens: int
    duration_p50_ms: int | None = Field(description="Median cell time of the finished cells (nearest rank).")
    duration_p95_ms: int | None
    errors: dict[str, int] = Field(description="Failed cells by error code (`unknown`: the line has none).")


class TaskCells(BaseModel):
    """One task's cells in one group: how many were solved, of how many."""

    model_config = ConfigDict(frozen=True)

    group: str = Field(description="The group's label.")
    cells: int
    solved: int
    interrupted: int = 0
    run_ids: list[str] = Field(default_factory=list, description="Each cell's run, by attempt (`harness show`).")


class TaskRow(BaseModel):
    """One task of a report: its cells in each group that played it."""

    model_config = ConfigDict(frozen=True)

    id: str
    groups: list[TaskCells]


class Report(BaseModel):
    """A batch's report: `harness report --json` prints it (`model_dump`); `Report.model_validate` reads it back."""

    model_config = ConfigDict(frozen=True)

    files: list[str] = Field(default_factory=list, description="The results files read, in order.")
    lines: int = Field(default=0, description="Result lines read.")
    cells: int = Field(default=0, description="Cells kept: distinct (task, provider, model, attempt) in each file.")
    groups: list[GroupReport] = Field(default_factory=list)
    tasks: list[TaskRow] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="What the reader should know: lines replaced, "
                                                               "a torn last line left out, pass@k undefined, "
                                                               "groups kept apart by file.")


def report(*paths: str | Path) -> Report:
    """The report of one or more results files (`harness batch`'s JSONL). Within a file the last line of each cell
    counts (a resumed batch appends). Each file is a batch of its own: its cells are kept whatever another file
    holds, and a provider/model that several files have is a group per file (`FILE-STEM: provider[/model]`), so two
    batches of the same tasks (two prompts, say) compare side by side. A file given twice is read once.

    Raises:
        InvalidSpecError: a file cannot be read, or a line of it is not a task result (file:line and what to do).
    """
    if not paths:
        raise InvalidSpecError("no results file to report on; give one or more, such as tasks.results.jsonl")
    notes: list[str] = []
    batches: dict[str, list[TaskResult]] = {}
    for path in paths:
        if str(path) in batches:
            notes.append(f"{path} is given more than once: read once")
            continue
        batches[str(path)] = read_results(path, notes)
    return build_report(batches, notes=notes)


def read_results(path: str | Path, notes: list[str] | None = None) -> list[TaskResult]:
    """Every result line of `path`, in order. A last line without its newline that is not a whole result (a live
    batch writing it, or a killed one) is left out, and said in `notes`; a whole one counts.

    Raises:
        InvalidSpecError: the file cannot be read, or a line of it is not a task result.
    """
    try:
        data = read_input(path, what="the results file", limit=RESULTS_LIMIT)
    except InputFileError as exc:
        if Path(path).exists():
            raise
        raise InputFileError(f"{exc.message}; give the results file of a batch (`harness batch TASKS.jsonl` writes "
                             "TASKS.results.jsonl beside the tasks file, or where --results says)",
                             path=str(path)) from None
    lines = data.split(b"\n")
    torn = lines.pop()  # after the last newline: empty, or a line not (yet) ended
    found: list[TaskResult] = []
    for number, line in enumerate(lines, 1):
        if line.strip():
            found.append(_result(path, number, line))
    if torn.strip():
        try:
            found.append(TaskResult.model_validate_json(torn))
        except ValidationError:
            if notes is not None:
                notes.append(f"{path}:{len(lines) + 1}: an unfinished last line (a batch still writing it, or "
                             "killed mid-line) is left out")
    return found


def _result(path: str | Path, number: int, line: bytes) -> TaskResult:
    try:
        value = json.loads(line)
    except ValueError as exc:
        raise InvalidSpecError(f"{path}:{number}: not a task result: not JSON ({exc}); is it a batch's results "
                               "file? Fix or remove the line, or leave the file out") from None
    try:
        return TaskResult.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "line"
        hint = ""
        if isinstance(value, dict) and "prompt" in value and "status" not in value:
            hint = " (it looks like a tasks file: report on the results file the batch wrote, TASKS.results.jsonl)"
        elif isinstance(value, dict) and "type" in value and "seq" in value:
            hint = " (it looks like a run log: `harness show RUN` shows a run)"
        raise InvalidSpecError(f"{path}:{number}: not a task result ({where}: {first['msg']}){hint}; give a "
                               "batch's results file, or fix or remove the line") from None


def build_report(results: Iterable[TaskResult] | Mapping[str, Iterable[TaskResult]], *, files: Sequence[str] = (),
                 notes: Sequence[str] = ()) -> Report:
    """The report of `results` in the order written: one batch's (`run_batch`'s, or read back), or a mapping of
    results file -> its results, each file a batch of its own (as `report` reads several). Within a batch the last
    result of each cell (`TaskResult.cell`) counts; a provider/model that several files have is a group per file.
    `files`: the files read, when `results` is one batch read from them."""
    batches: list[tuple[str | None, list[TaskResult]]]
    if isinstance(results, Mapping):
        batches = [(str(name), list(found)) for name, found in results.items()]
        files = [str(name) for name in results]
    else:
        batches = [(files[0] if len(files) == 1 else None, list(results))]
    said = list(notes)
    lines = 0
    kept: list[tuple[str | None, TaskResult]] = []
    for name, every in batches:
        cells: dict[tuple[str, str, str, int], TaskResult] = {}
        for result in every:
            cells[result.cell] = result
        lines += len(every)
        kept += [(name, result) for result in cells.values()]
        if len(every) > len(cells):
            where = f"{name}: " if len(batches) > 1 else ""
            said.append(f"{where}{len(every) - len(cells)} earlier line(s) replaced by a later line of the same "
                        "cell (a resumed or re-run batch): the last counts")
    files_of: dict[tuple[str, str], set[str | None]] = {}
    for name, result in kept:
        files_of.setdefault((result.provider, result.model or ""), set()).add(name)
    shared = [key for key, names in files_of.items() if len(names) > 1]
    stems = _stems([name for name, _ in batches if name is not None])
    by_group: dict[tuple[str | None, str, str], list[TaskResult]] = {}
    file_of: dict[tuple[str | None, str, str], str | None] = {}
    for name, result in kept:
        key = (result.provider, result.model or "")
        group_key = (name if key in shared else None, *key)
        by_group.setdefault(group_key, []).append(result)
        file_of[group_key] = name
    if shared:
        labels = ", ".join(_label(provider, model or None) for provider, model in shared)
        said.append(f"{len(batches)} results files, each a batch of its own (a cell's lines replace each other only "
                    f"within its file); {labels}: in several of them, so a group per file "
                    "(`FILE-STEM: provider[/model]`)")
    groups = [_group(cells, said, file_of[key], None if key[0] is None else stems.get(key[0]))
              for key, cells in by_group.items()]
    task_ids = list(dict.fromkeys(result.id for _, result in kept))
    rows = []
    for task_id in task_ids:
        row = []
        for group, members in zip(groups, by_group.values(), strict=True):
            mine = sorted((r for r in members if r.id == task_id), key=lambda r: r.attempt)
            if mine:
                row.append(TaskCells(group=group.label, cells=len(mine), solved=sum(_solved(r) for r in mine),
                                     interrupted=sum(r.status == "interrupted" for r in mine),
                                     run_ids=[r.run_id for r in mine]))
        rows.append(TaskRow(id=task_id, groups=row))
    return Report(files=list(files), lines=lines, cells=len(kept), groups=groups, tasks=rows, notes=said)


def _stems(names: Sequence[str]) -> dict[str, str]:
    """Each results file's short name for a group label: its name without `.jsonl` and `.results` (`a` for
    `a.results.jsonl`); the path as given where two files would share one."""
    def stem(name: str) -> str:
        short = Path(name).name
        for suffix in (".jsonl", ".results"):
            short = short.removesuffix(suffix)
        return short or name

    counts = Counter(stem(name) for name in names)
    return {name: stem(name) if counts[stem(name)] == 1 else name for name in names}


def _has_verifier(result: TaskResult) -> bool:
    return result.verified is not None or result.verification is not None


def _no_verdict(result: TaskResult) -> bool:
    """Its verifier ran and decided nothing (timed out, could not start, an unreadable or ambiguous reward): out
    of the pass rate. A run that failed was not verified: a fail (reward 0), as the results say."""
    verification = result.verification
    return _has_verifier(result) and (result.verified is None or (
        verification is not None and verification.ran and not verification.verdict))


def _solved(result: TaskResult) -> bool:
    """Verified True; or, for a cell without a verifier, the run succeeded."""
    return result.verified is True if _has_verifier(result) else result.status == "success"


def _label(provider: str, model: str | None) -> str:
    name = provider or "(no provider)"
    return f"{name}/{model}" if model else name


def _group(cells: list[TaskResult], notes: list[str], file: str | None = None,
           stem: str | None = None) -> GroupReport:
    """One group's figures; `stem` (the file's short name) starts its label when the group is one file's of several."""
    first = cells[0]
    label = _label(first.provider, first.model)
    if stem is not None:
        label = f"{stem}: {label}"
    finished = [c for c in cells if c.status != "interrupted"]
    scored = [c for c in finished if _has_verifier(c) and c.verified is not None and not _no_verdict(c)]
    with_verifier = sum(_has_verifier(c) for c in cells)
    solved_by: SolvedBy = ("verifier" if with_verifier == len(cells) else "status" if not with_verifier
                           else "mixed")
    passed = sum(c.verified is True for c in scored)
    low, high = wilson_interval(passed, len(scored)) if scored else (None, None)
    no_verdict = sum(_has_verifier(c) and _no_verdict(c) for c in finished)
    if no_verdict:
        notes.append(f"{label}: {no_verdict} finished run(s) have a verifier but no verdict (their "
                     "`verification.reason` says why): left out of the pass rate")
    pass_at, attempts, pass_note = _pass_at_k(cells, scored, label)
    if pass_note:
        notes.append(pass_note)
    rewards = [c.reward for c in scored if c.reward is not None]
    costs = [c.cost_usd for c in cells if c.cost_usd is not None]
    cost = math.fsum(costs) if costs else None
    solved = sum(_solved(c) for c in cells)
    times = [c.duration_ms for c in finished]
    p50, p95 = percentile(times, 50), percentile(times, 95)
    errors = Counter(c.error_code or "unknown" for c in cells if c.status == "failed")
    return GroupReport(
        label=label, provider=first.provider, model=first.model, file=file, tasks=len({c.id for c in cells}),
        runs=len(cells),
        succeeded=sum(c.status == "success" for c in cells), failed=sum(c.status == "failed" for c in cells),
        interrupted=len(cells) - len(finished), solved_by=solved_by, solved=solved, verified_runs=len(scored),
        passed=passed, no_verdict=no_verdict,
        pass_rate=passed / len(scored) if scored else None, pass_rate_low=low, pass_rate_high=high,
        attempts=attempts, pass_at_k=pass_at, pass_at_k_note=pass_note,
        mean_reward=math.fsum(rewards) / len(rewards) if rewards else None, cost_usd=cost,
        cost_per_solved_usd=cost / solved if cost is not None and solved else None,
        input_tokens=sum(c.usage.input_tokens for c in cells),
        cached_input_tokens=sum(c.usage.cached_input_tokens for c in cells),
        output_tokens=sum(c.usage.output_tokens for c in cells),
        duration_p50_ms=None if p50 is None else int(p50), duration_p95_ms=None if p95 is None else int(p95),
        errors=dict(sorted(errors.items(), key=lambda item: (-item[1], item[0]))))


def _pass_at_k(cells: list[TaskResult], scored: list[TaskResult],
               label: str) -> tuple[dict[int, float], int, str | None]:
    """pass@k for k = 1..K (K: the most verified attempts of a task), where every task with a verifier has at least
    k verified attempts; K; and why the larger k are missing, if they are."""
    tasks = list(dict.fromkeys(c.id for c in cells if _has_verifier(c)))
    if not tasks:
        return {}, 0, None
    counts = {task: [0, 0] for task in tasks}
    for cell in scored:
        counts[cell.id][0] += 1
        counts[cell.id][1] += cell.verified is True
    most = max(n for n, _ in counts.values())
    least_task, (least, _) = min(counts.items(), key=lambda item: item[1][0])
    values = {k: value for k in range(1, most + 1)
              if (value := mean_pass_at_k(((n, c) for n, c in counts.values()), k)) is not None}
    if least >= most:
        return values, most, None
    wanted = "pass@k" if not values else f"pass@k for k > {least}"
    return values, most, (f"{label}: {wanted} is not defined: task {least_task} has {least} verified attempt(s) "
                          f"of the {most} another has (interrupted, or not played yet)")
