"""Many runs: a batch of tasks played at most N at once, each in its own workspace, with a result (and a patch)
per task, resumable, retrying what failed for a transient reason; here or on an engine such as Ray.

Layer: public API (the library side of `harness batch`; executors implement `Executor`). Importing it starts
nothing. Usage (`run_batch`, `Batch`, `load_tasks`): docs/jobs-and-batches.md.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

from harness_core.batch.attempt import play_attempt
from harness_core.batch.driver import Batch, BatchStats, BatchUpdate
from harness_core.batch.engines import executor_named, executor_names
from harness_core.batch.report import GroupReport, Report, build_report, report
from harness_core.batch.results import PASS_REWARD, ResultsFile, TaskResult, Verification
from harness_core.batch.retry import RetryPolicy
from harness_core.batch.tasks import BatchTask, TaskFileError, TaskLike, load_tasks, parse_tasks
from harness_core.batch.workspaces import WorktreePlan
from harness_core.executor import AttemptPlayer, Executor, ExecutorOptions, TaskAttempt, WorkerLostError
from harness_core.local_executor import LocalExecutor, harness_register_executors

__all__ = [
    "AttemptPlayer",
    "Batch",
    "BatchStats",
    "BatchTask",
    "BatchUpdate",
    "Executor",
    "ExecutorOptions",
    "GroupReport",
    "LocalExecutor",
    "PASS_REWARD",
    "Report",
    "ResultsFile",
    "RetryPolicy",
    "TaskAttempt",
    "TaskFileError",
    "TaskLike",
    "TaskResult",
    "Verification",
    "WorkerLostError",
    "WorktreePlan",
    "build_report",
    "executor_named",
    "executor_names",
    "harness_register_executors",  # the local executor's hook (the old harness_core.batch.local had it)
    "load_tasks",
    "parse_tasks",
    "play_attempt",
    "report",
    "run_batch",
]


async def run_batch(tasks: Iterable[TaskLike], *, concurrency: int = 4, executor: Executor | str = "local",
                    results: str | Path | None = None, **options: Any) -> AsyncIterator[TaskResult]:
    """Play `tasks` (`BatchTask`s or `(id, spec[, provider])` tuples) at most `concurrency` at once on `executor`
    (`"local"`, `"ray"` with harness-ray, or an `Executor`), yielding each cell's result as it ends: a cell is a
    task played by each of `providers` and `models` (unless the task pins its own), each of `attempts` times. With
    `results`, each result is also appended to that JSONL file, and cells it holds as finished are skipped.
    `verify` (a shell command; a task's own `verify` wins) judges each cell whose run succeeded, within
    `verify_timeout` seconds (default 600). Other keyword arguments are `Batch`'s: `provider`, `runs_dir`,
    `retry`, `retry_backoff`, `offline`, `scenario`, `worktrees`, `patches`, `keep`, `max_cost_usd`,
    `executor_options`, `host`, `on_update`.

    Raises (before any task starts): TaskFileError (every task that cannot run, and why), InvalidSpecError.
    """
    batch = Batch(tasks, concurrency=concurrency, executor=executor, results=results, **options)
    async for result in batch.results():
        yield result
