"""The batch driver: every task checked before anything starts, then at most `concurrency` live at once through an
executor, retries of what failed for a transient reason, workspaces and patches, results as tasks end.
Layer: batch (the loop people otherwise write by hand). Knows the run API's checks, the executor interface, the
workspaces, the results file and the retry policy; knows no provider, no engine and no rendering (the CLI polls
`Batch.stats` and gets `on_update` calls).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import math
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
import anyio.to_thread

from harness_core._logging import get_logger
from harness_core._run.probe import preflight, prepare
from harness_core._run.run_files import check_writable
from harness_core.batch.attempt import play_attempt
from harness_core.batch.cells import Cell, cells_of, model_name
from harness_core.batch.engines import executor_named
from harness_core.batch.patches import Patches
from harness_core.batch.results import ResultsFile, TaskResult
from harness_core.batch.retry import RetryPolicy
from harness_core.batch.tasks import BatchTask, TaskFileError, TaskLike, as_tasks
from harness_core.batch.verifier import DEFAULT_VERIFY_TIMEOUT, Verdict, not_verified, output_path, run_verifier
from harness_core.batch.workspaces import Workspace, Workspaces, WorktreePlan
from harness_core.errors import HarnessError, LogWriteFailedError
from harness_core.events import ErrorInfo, HarnessResult, RunStatus
from harness_core.executor import Executor, TaskAttempt, WorkerLostError
from harness_core.files.scratch import Leftover, sweep_scratch
from harness_core.mcp import server_secrets
from harness_core.offline import DEFAULT_SCENARIO, scenario_named
from harness_core.offline._setup import _cannot_run_offline, can_run_offline, workspace_conflict
from harness_core.plugins import PluginHost, get_host
from harness_core.redaction import RunSecrets, public_env_value
from harness_core.scripted.scenarios import Scenario
from harness_core.spec import AgentRunSpec
from harness_core.store import log_path, new_run_id, resolve_runs_dir
from harness_core.tools.reference import references
from harness_core.tools.tool import Tool
from harness_core.trajectory import write_trajectory

__all__ = ["Batch", "BatchStats", "BatchUpdate"]

_log = get_logger(__name__)


@dataclass
class BatchStats:
    """Counts of a batch's cells as it plays (read by progress displays; only the driver writes them). A cell is a
    task played by one provider and model, one of its attempts; a batch without a matrix has a cell per task."""

    total: int = 0
    tasks: int = 0
    skipped: int = 0
    """Finished in the results file by an earlier run of the batch: not run again."""
    queued: int = 0
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    interrupted: int = 0
    not_started: int = 0
    """Left queued because the batch was interrupted or its cost limit was reached."""
    failed_earlier: int = 0
    """Of the skipped: those whose result in the file is `failed` (`--rerun-failed` plays them again)."""
    retries: int = 0
    verifying: int = 0
    """Cells whose verifier runs now."""
    passed: int = 0
    """Cells played now whose verifier's reward reached PASS_REWARD."""
    not_passed: int = 0
    """Cells played now whose verification failed (or whose run failed, with a verifier to pass)."""
    passed_earlier: int = 0
    """Of the skipped: those that passed their verification."""
    no_verdict_earlier: int = 0
    """Of the skipped: runs that succeeded but whose verifier gave no verdict (`--rerun-failed` plays them again)."""
    unjudged_earlier: int = 0
    """Of the skipped: cells that now have a verifier but finished before one was given (never judged: a new
    results file judges them)."""
    verifiers: bool = False
    """Some cell has a verifier (the counts above mean something)."""
    cost_usd: float = 0.0
    peak_running: int = 0
    started: float = field(default_factory=time.monotonic)
    durations: list[float] = field(default_factory=list)

    @property
    def done(self) -> int:
        return self.succeeded + self.failed + self.interrupted


@dataclass(frozen=True)
class BatchUpdate:
    """Something that happened to a task, for `on_update`."""

    kind: Literal["started", "retrying", "verifying", "finished"]
    task_id: str
    attempt: int
    """The try of the cell (1 + retries so far); the cell's place among `--attempts` is in `label` and `result`."""
    run_id: str = ""
    result: TaskResult | None = None
    error: ErrorInfo | None = None
    delay: float = 0.0
    label: str = ""
    """How to name the cell in messages: the task id, or `id [provider, model, attempt N]`."""


class Batch:
    """A batch of tasks to play. `results()` plays it (once); `interrupt()` stops it cleanly from anywhere in
    the same event loop (live runs are interrupted and recorded as such; queued tasks are not started)."""

    def __init__(self, tasks: Iterable[TaskLike], *, provider: str | None = None,
                 providers: Sequence[str] | None = None, models: Sequence[str] = (), attempts: int = 1,
                 verify: str | None = None, verify_timeout: float | None = None, concurrency: int = 4,
                 executor: Executor | str = "local", executor_options: dict[str, Any] | None = None,
                 runs_dir: str | Path | None = None, results: str | Path | None = None, retry: int = 0,
                 retry_backoff: float = 2.0, offline: bool = False, scenario: Scenario | str = DEFAULT_SCENARIO,
                 worktrees: WorktreePlan | None = None, patches: str | Path | None = None, keep: bool = False,
                 max_cost_usd: float | None = None, record_wire: bool = False, rerun_failed: bool = False,
                 trajectories: str | Path | None = None, host: PluginHost | None = None,
                 on_update: Callable[[BatchUpdate], None] | None = None, tools: Iterable[Tool] | None = None) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {concurrency}")
        if max_cost_usd is not None and not (math.isfinite(max_cost_usd) and max_cost_usd > 0):
            raise ValueError(f"max_cost_usd must be a finite number of USD more than 0 (None: no limit), not "
                             f"{max_cost_usd}")
        if patches is not None and worktrees is None:
            raise ValueError("patches need worktrees: a task's patch is the diff of its own worktree")
        if provider is not None and providers:
            raise ValueError("pass `provider` or `providers`, not both")
        if attempts < 1:
            raise ValueError(f"attempts must be at least 1, not {attempts}")
        if verify_timeout is not None and not (math.isfinite(verify_timeout) and verify_timeout > 0):
            raise ValueError(f"verify_timeout must be a finite number of seconds more than 0, not {verify_timeout}")
        if verify is not None and not verify.strip():
            raise ValueError("verify must be a shell command (None: no verifier but the tasks' own)")
        self.host = host or get_host()
        self.tool_refs = references(tools or ())  # every attempt imports them again where it plays
        self.tasks = as_tasks(tasks)
        self.provider = provider
        self.providers: list[str | None] = [*providers] if providers else [provider]
        self.models = [*models]
        self.attempts = attempts
        self.verify = verify
        self.verify_timeout = verify_timeout
        self.cells: list[Cell] = []
        """Every cell of the batch, in order (made by `check`)."""
        self.concurrency = concurrency
        self.executor = executor if isinstance(executor, Executor) else executor_named(
            executor, executor_options, host=self.host)
        self.executor.bind(functools.partial(play_attempt, host=self.host))
        self.runs_dir = resolve_runs_dir(runs_dir)
        self.results_path = Path(results) if results is not None else None
        self.retry = RetryPolicy(retries=retry, backoff=retry_backoff)
        self.offline = offline
        self.scenario = scenario_named(scenario) if isinstance(scenario, str) else scenario
        self.workspaces = Workspaces(worktrees, offline=offline, keep=keep)
        self.patches_dir = Path(patches) if patches is not None else None
        self.trajectories_dir = Path(trajectories) if trajectories is not None else None
        self.max_cost_usd = max_cost_usd
        self.record_wire = record_wire
        self.rerun_failed = rerun_failed
        self.on_update = on_update
        self.stats = BatchStats(total=len(self.tasks), tasks=len(self.tasks))
        self._interrupted = anyio.Event()
        self.swept: list[Leftover] = []
        """The temporary directories killed Harness processes had left (this batch's, killed before it resumed;
        any other's), removed as the batch started."""
        self._checked = False
        self._budget_reached = False
        self._write_failure: LogWriteFailedError | None = None
        self._run_ids: dict[tuple[str, str, str, int], list[str]] = {}  # cell → the runs of its tries so far
        self.batch_id = ""
        """This play's id (`batch-<run id>`), set when `results()` starts: what the batch hooks and the batch's
        trace context name."""
        self._observed = False  # `harness_batch_started` was called: `harness_batch_ended` is owed

    # --- before anything starts ------------------------------------------------------------------------------

    async def check(self, earlier: Sequence[tuple[int | None, str]] = (), source: str = "tasks") -> None:
        """Everything that can be checked before a task starts, every problem of every task: its providers, options
        and capabilities (with each model of its cells), that it can run offline (with `offline`), its `cwd` (it
        must exist: it is never made), the refs of its worktree, the CLIs (probed once per provider), the runs
        directory; makes the batch's cells (`cells`). Creates nothing but
        the runs directory, and that only when all is well. `earlier`: problems found before, reading the tasks
        (`TaskFileError.problems`, the batch made of its `tasks`): said with these, in line order.

        Raises:
            TaskFileError: every problem of every task, each with its line (one that many tasks share, such as a
                CLI that is not installed, is said once, naming them all), as found in `source`.
            InvalidSpecError: the worktree repository or the runs directory cannot be used.
        """
        found: dict[str, list[BatchTask]] = {}  # problem → the tasks that have it, in order
        probed: dict[str, str | None] = {}  # provider name → problem of its probe (None: fine)
        ref_problems = self.workspaces.open(self.tasks, self._key())
        self.cells, unknown = cells_of(self.tasks, providers=self.providers, models=self.models,
                                       attempts=self.attempts, resolve=lambda name: self.host.get(name).name)
        played: dict[str, list[Cell]] = {}  # task id → one cell of each provider and model
        counts = Counter(cell.task.id for cell in self.cells)
        for cell in self.cells:
            if cell.attempt == 1:
                played.setdefault(cell.task.id, []).append(cell)
        for task in self.tasks:
            said = [unknown[task.id]] if task.id in unknown else []
            for cell in played.get(task.id, []):
                said += await self._provider_problems(cell, probed)
            for problem in [*said, *self._problems(task, ref_problems, counts[task.id])]:
                if task not in found.setdefault(problem, []):
                    found[problem].append(task)
        problems = [*earlier, *(_shared(tasks, problem) for problem, tasks in found.items())]
        if problems:
            raise TaskFileError(source, sorted(problems, key=lambda item: (item[0] is None, item[0] or 0)))
        check_writable(self.runs_dir)
        self.stats.total = len(self.cells)
        self.stats.verifiers = any(self._verifier(cell) for cell in self.cells)
        self._checked = True

    async def _provider_problems(self, cell: Cell, probed: dict[str, str | None]) -> list[str]:
        """The problems of a task with one provider and model (`probed`: each provider's probe outcome, filled as
        providers are met: each is probed once)."""
        try:
            registered = self.host.get(cell.provider)
            if self.offline and not can_run_offline(registered.cls):
                raise _cannot_run_offline(registered.name, self.host)
            preflight(cell.spec, registered.name, self.host)
            if registered.name not in probed:
                probed[registered.name] = await _probe_problem(cell.spec, registered.name, self.host)
            if probed[registered.name] is not None:
                return [str(probed[registered.name])]
        except HarnessError as exc:
            return [exc.message]
        return []

    def _problems(self, task: BatchTask, ref_problems: dict[str, str], cells: int = 1) -> list[str]:
        """The problems of one task whoever plays it: its worktree's ref, its `cwd` (`cells`: how many cells it
        has; a `cwd` is one directory, which they would share)."""
        problems: list[str] = []
        own_cwd = "cwd" in task.spec.model_fields_set
        if task.id in ref_problems:
            problems.append(ref_problems[task.id])
        if own_cwd and self.workspaces.plan is None and cells > 1:
            instead = "" if self.offline else " with --offline"
            problems.append(f"`cwd` is one directory, and this task has {cells} cells (providers x models x "
                            "attempts): each needs a fresh workspace. Use --worktrees REPO (a worktree per cell), "
                            f"or leave `cwd` out{instead} (a temporary workspace per cell)")
        elif (not own_cwd and not self.offline and self.workspaces.plan is None and cells > 1
              and task.workspace_files is None):
            problems.append(f"this task has {cells} cells (providers x models x attempts) and no workspace of its "
                            f"own: they would all play in {task.spec.cwd} at once. Use --worktrees REPO (a "
                            "worktree per cell)")
        if self.workspaces.plan is not None and own_cwd:
            problems.append("with --worktrees a task plays in its own worktree; remove its `cwd`")
        elif own_cwd and not task.spec.cwd.is_dir():
            what = "is not a directory: name one" if task.spec.cwd.exists() else "does not exist: create it first"
            instead = "leave `cwd` out for a temporary workspace" if self.offline else "correct the path"
            problems.append(f"cwd {task.spec.cwd} {what}, or {instead} (Harness never creates a task's directory)")
        elif self.offline and self.workspaces.plan is None and own_cwd:
            conflict = workspace_conflict(self._scenarios(task)[0], task.spec.cwd)
            if conflict is not None:
                problems.append(f"{conflict}; leave `cwd` out for a temporary workspace")
        return problems

    def _key(self) -> str:
        """A name for this batch (its worktrees' directory): from its results file, else from its task ids."""
        named = str(self.results_path.absolute()) if self.results_path is not None else \
            "\n".join(t.id for t in self.tasks)
        return "batch-" + hashlib.sha256(named.encode("utf-8", "surrogateescape")).hexdigest()[:10]

    def _scenarios(self, task: BatchTask) -> tuple[Scenario, ...]:
        return task.scenarios or (self.scenario,)

    # --- playing -----------------------------------------------------------------------------------------------

    def interrupt(self) -> None:
        """Interrupt every live run cleanly and start no more tasks (idempotent)."""
        self._interrupted.set()

    @property
    def interrupted(self) -> bool:
        return self._interrupted.is_set()

    @property
    def budget_reached(self) -> bool:
        return self._budget_reached

    async def results(self) -> AsyncIterator[TaskResult]:
        """Play the batch, yielding each cell's result as it ends (in the order they end). Cells the results
        file holds as finished are skipped (`stats.skipped`). Leave early with `contextlib.aclosing`."""
        if not self._checked:
            await self.check()
        results_file = ResultsFile(self.results_path) if self.results_path is not None else None
        patches = Patches(self.patches_dir) if self.patches_dir is not None else None
        finished = results_file.finished() if results_file is not None else {}
        if self.rerun_failed:  # also a finished run whose verifier gave no verdict
            finished = {key: r for key, r in finished.items() if r.ok and not _no_verdict(r)}
        earlier = {cell.key: found for cell in self.cells if (found := _earlier(cell, finished)) is not None}
        pending = [cell for cell in self.cells if cell.key not in earlier]
        self.stats.skipped = len(earlier)
        self.stats.failed_earlier = sum(1 for r in earlier.values() if not r.ok)
        self.stats.passed_earlier = sum(1 for r in earlier.values() if r.verified)
        self.stats.no_verdict_earlier = sum(1 for r in earlier.values() if r.ok and _no_verdict(r))
        self.stats.unjudged_earlier = sum(1 for cell in self.cells if cell.key in earlier and
                                          earlier[cell.key].verification is None and self._verifier(cell))
        self.stats.queued = len(pending)
        send, receive = anyio.create_memory_object_stream[TaskResult](len(pending) or 1)
        self.swept = await anyio.to_thread.run_sync(sweep_scratch)  # what a killed run of this batch left
        self.batch_id = f"batch-{new_run_id()}"
        try:
            self._observe_started(len(pending))
            await self.executor.start()
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._feed, pending, send, results_file, patches)
                async with receive:
                    async for result in receive:
                        yield result
            if self._write_failure is not None:
                raise self._write_failure
        finally:
            with anyio.CancelScope(shield=True):
                await self.executor.close()
            if results_file is not None:
                results_file.close()
            self.workspaces.close()
            self._observe_ended()

    # --- observers ---------------------------------------------------------------------------------------------

    def _name(self) -> str:
        """The batch's name for observers: its results file's (``tasks`` for ``tasks.results.jsonl``), else
        ``batch``."""
        if self.results_path is None:
            return "batch"
        name = self.results_path.name
        for suffix in (".results.jsonl", ".jsonl"):
            if name.endswith(suffix) and len(name) > len(suffix):
                return name[: -len(suffix)]
        return name

    def _observe_started(self, cells: int) -> None:
        """`harness_batch_started` (skipped, with the cells' trace context, when no plugin observes batches)."""
        if not self.host.observes_batches:
            return
        self._observed = True
        try:
            self.host.pm.hook.harness_batch_started(batch_id=self.batch_id, name=self._name(), cells=cells,
                                                    ts=time.time())
        except Exception:  # noqa: BLE001 - observers must not break a batch
            _log.exception("harness_batch_started plugin raised; ignored")

    def _observe_ended(self) -> None:
        """`harness_batch_ended`, once, for a batch `harness_batch_started` was called for."""
        if not self._observed:
            return
        self._observed = False
        s = self.stats
        status = ("interrupted" if self.interrupted or s.interrupted else
                  "failed" if s.failed or s.not_started else "success")
        counts: dict[str, float] = {
            "cells": s.total, "succeeded": s.succeeded, "failed": s.failed, "interrupted": s.interrupted,
            "not_started": s.not_started, "skipped": s.skipped, "retries": s.retries, "passed": s.passed,
            "not_passed": s.not_passed, "cost_usd": s.cost_usd,
        }
        try:
            self.host.pm.hook.harness_batch_ended(batch_id=self.batch_id, status=status, counts=counts,
                                                  ts=time.time())
        except Exception:  # noqa: BLE001
            _log.exception("harness_batch_ended plugin raised; ignored")

    async def _feed(self, pending: list[Cell], send: Any, results_file: ResultsFile | None,
                    patches: Patches | None) -> None:
        limiter = anyio.Semaphore(self.concurrency)
        try:
            async with send, anyio.create_task_group() as tg:
                for cell in pending:
                    await limiter.acquire()
                    if self._interrupted.is_set() or self._budget_reached:
                        limiter.release()
                        break
                    self.stats.queued -= 1
                    tg.start_soon(self._task, cell, limiter, send.clone(), results_file, patches)
        finally:  # also when stopped at once (a second Ctrl-C): what was never started is said
            self.stats.not_started = self.stats.queued

    async def _task(self, cell: Cell, limiter: anyio.Semaphore, send: Any,
                    results_file: ResultsFile | None, patches: Patches | None) -> None:
        self.stats.running += 1
        self.stats.peak_running = max(self.stats.peak_running, self.stats.running)
        began = time.monotonic()
        secrets = self._secrets(cell)
        try:
            async with send:
                try:
                    result = await self._play_cell(cell, patches, secrets)
                except anyio.get_cancelled_exc_class():  # stopped at once: still recorded, as its run log is
                    with anyio.CancelScope(shield=True):
                        await self._record_stopped(cell, results_file, time.monotonic() - began)
                    raise
                except Exception as exc:  # noqa: BLE001 - one task's trouble must not end the others
                    result = _broken(cell, exc, verified=self._verifier(cell) is not None)
                result = _scrubbed(result.model_copy(update={"duration_ms": int((time.monotonic() - began) * 1000)}),
                                   secrets)
                if results_file is not None:
                    try:
                        await anyio.to_thread.run_sync(results_file.write, result)  # fsync off the event loop
                    except LogWriteFailedError as exc:  # a full disk: stop the batch, say why at its end
                        self._write_failure = self._write_failure or exc
                        self.interrupt()
                self._count(result, time.monotonic() - began)
                self._update(BatchUpdate("finished", cell.task.id, result.attempts, result.run_id, result=result,
                                         label=cell.label))
                await send.send(result)
        finally:
            self.stats.running -= 1
            limiter.release()

    async def _record_stopped(self, cell: Cell, results_file: ResultsFile | None, seconds: float) -> None:
        """A cell whose live run was stopped without waiting for it (the batch's task group cancelled): its
        `interrupted` line in the results file (a re-run plays it again) and its count."""
        run_ids = tuple(self._run_ids.get(cell.key, ()))
        result = TaskResult(id=cell.task.id, run_id=run_ids[-1] if run_ids else "", status="interrupted",
                            provider=cell.provider, model=cell.model, attempt=cell.attempt, error_code="interrupted",
                            error="stopped at once (a second interrupt); run the batch again to play it",
                            attempts=len(run_ids), run_ids=run_ids, duration_ms=int(seconds * 1000))
        if results_file is not None:
            with contextlib.suppress(LogWriteFailedError):  # a full disk: the run log still says interrupted
                await anyio.to_thread.run_sync(results_file.write, result)
        self._count(result, seconds)
        self._update(BatchUpdate("finished", cell.task.id, result.attempts, result.run_id, result=result,
                                 label=cell.label))

    def _secrets(self, cell: Cell) -> RunSecrets:
        """The secrets of the task's runs (its `env` and `verify_env` but their public values, its secret-bearing
        options, the secret-looking variables of this process's environment), hidden in its result, its patch and
        its verifier's output as in its run log."""
        task = cell.task
        try:
            info = self.host.get(cell.provider).cls.info
        except HarnessError:  # checked before the batch started: only a host changed since gets here
            secret_flags, public_env = frozenset[str](), frozenset[str]()
        else:
            secret_flags, public_env = frozenset(info.secret_flags), frozenset(info.public_env)
        verify_env = [value for name, value in task.verify_env.items()
                      if not public_env_value(name, value, public_env)]
        return RunSecrets.of_run(task.spec.env, task.spec.provider_options, secret_flags=secret_flags,
                                 public_env=public_env).with_values(
            [*server_secrets(task.spec.mcp_servers), *verify_env])

    async def _play_cell(self, cell: Cell, patches: Patches | None, secrets: RunSecrets) -> TaskResult:
        task = cell.task
        scenarios = self._scenarios(task) if self.offline else ()
        workspace = await self.workspaces.prepare(task, scenarios, cell.name)
        try:
            outcomes: list[HarnessResult] = []
            cut_short = False
            for number in range(1, self.retry.retries + 2):
                if number > 1:  # a retry starts from the task's base again, not from what the failed one left
                    workspace = await self.workspaces.reset(task, scenarios, workspace, cell.name)
                spec = cell.spec.model_copy(update={"cwd": workspace.path})
                if self._observed:  # the batch's trace context, carried to where the cell plays
                    spec = self.host.with_trace_context(spec, self.batch_id)
                attempt = TaskAttempt(task.id, number, new_run_id(), spec, cell.provider, self.runs_dir,
                                      task.scenario_for(number, self.scenario) if self.offline else None,
                                      self.record_wire, self.tool_refs)
                self._run_ids.setdefault(cell.key, []).append(attempt.run_id)
                self._update(BatchUpdate("started", task.id, number, attempt.run_id, label=cell.label))
                outcome = await self._attempt(attempt, task.agent_timeout)
                outcomes.append(outcome)
                self._spend(outcome)
                if not self.retry.should_retry(outcome, number):
                    break
                if self._interrupted.is_set() or self._budget_reached:
                    cut_short = True  # it would have been retried: a re-run must play it again
                    break
                delay = self.retry.delay(number)
                self.stats.retries += 1
                self._update(BatchUpdate("retrying", task.id, number, attempt.run_id, error=outcome.error,
                                         delay=delay, label=cell.label))
                with anyio.move_on_after(delay):
                    await self._interrupted.wait()
                if self._interrupted.is_set():
                    cut_short = True
                    break
            result = TaskResult.of(task.id, outcomes, duration_ms=0).model_copy(update={
                "provider": cell.provider, "model": cell.model, "attempt": cell.attempt,
                **({"status": "interrupted"} if cut_short else {})})
            result = await self._patch(cell, result, workspace, patches, secrets)
            result = await self._verified(cell, result, workspace, secrets)
            await self._trajectory(cell, result)
            return result
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(_CLEANUP_DEADLINE):
                await self.workspaces.release(workspace)  # also under a hard stop: no worktree left behind

    async def _attempt(self, attempt: TaskAttempt, limit: float | None) -> HarnessResult:
        """One try, interrupted by the batch's interrupt or, past the task's agent timeout (`limit` seconds), by
        that (then a failed try: `agent_timeout`)."""
        stop = self._interrupted if limit is None else anyio.Event()
        timed_out = False

        async def watch() -> None:
            nonlocal timed_out
            with anyio.move_on_after(limit):
                await self._interrupted.wait()
            timed_out = not self._interrupted.is_set()
            stop.set()

        failure: Exception | None = None
        async with anyio.create_task_group() as tg:  # what play raises is caught inside: the group would wrap it
            if limit is not None:
                tg.start_soon(watch)
            try:
                outcome = await self.executor.play(attempt, stop)
            except Exception as exc:  # noqa: BLE001 - raised again below, as it came
                failure = exc
            finally:
                tg.cancel_scope.cancel()
        if isinstance(failure, WorkerLostError):
            return HarnessResult(status=RunStatus.FAILED, run_id=attempt.run_id, provider=attempt.provider or "",
                                 error=failure.to_info())
        if failure is not None:
            raise failure
        if timed_out and outcome.status is not RunStatus.SUCCESS:
            message = (f"the agent did not finish within the task's agent timeout ({limit:g} s) and was "
                       "interrupted; raise the timeout (task.toml's [agent] timeout_sec) or make the task smaller")
            outcome = outcome.model_copy(update={"status": RunStatus.FAILED, "error": ErrorInfo(
                code="agent_timeout", message=message, retryable=False)})
        return outcome

    async def _trajectory(self, cell: Cell, result: TaskResult) -> None:
        """With `trajectories`: the cell's run written there as an ATIF trajectory (`CELL.json`)."""
        if self.trajectories_dir is None or not result.run_id:
            return
        log = log_path(self.runs_dir, result.run_id)
        if not log.exists():
            return
        try:
            await anyio.to_thread.run_sync(functools.partial(
                write_trajectory, log, self.trajectories_dir / f"{cell.name}.json", "atif"))
        except (HarnessError, OSError) as exc:  # the cell's result stands; its trajectory is said missing
            _log.warning("trajectory not written; `harness export RUN --format atif` writes it from the log",
                         run_id=result.run_id, error=str(exc))

    async def _patch(self, cell: Cell, result: TaskResult, workspace: Workspace, patches: Patches | None,
                     secrets: RunSecrets) -> TaskResult:
        """With `patches`: the cell's patch written (before its verifier runs: that is the agent's change)."""
        if patches is None or not result.finished:
            return result
        patch = secrets.text(await self.workspaces.patch(workspace) or "")  # a file the agent wrote may hold one
        name = model_name(cell.provider, cell.model, cell.attempt, cell.attempts)
        path = await anyio.to_thread.run_sync(patches.write, cell.name, patch, name, cell.task.id)
        return result.model_copy(update={"patch": str(path)})

    def _verifier(self, cell: Cell) -> str | None:
        return cell.task.verify or self.verify

    async def _verified(self, cell: Cell, result: TaskResult, workspace: Workspace,
                        secrets: RunSecrets) -> TaskResult:
        """`result` with its cell's verification: the verifier run in its workspace when its run succeeded, or
        ended past the task's agent timeout (judged on the workspace as it was left, as Harbor does; the cell
        stays failed, `agent_timeout`)."""
        command = self._verifier(cell)
        if command is None:
            return result
        if result.status == "failed" and result.error_code != "agent_timeout":  # past it: judged as left (Harbor)
            verdict = not_verified(f"not verified: the agent's run failed ({result.error_code or 'failed'})")
        elif result.status == "interrupted":
            verdict = not_verified("not verified: the run was interrupted; a re-run plays the cell again",
                                   reward=None)
        else:
            timeout = cell.task.verify_timeout or self.verify_timeout or DEFAULT_VERIFY_TIMEOUT
            self.stats.verifying += 1
            self._update(BatchUpdate("verifying", cell.task.id, result.attempts, result.run_id, label=cell.label))
            try:
                verdict = await run_verifier(command, workspace.path, seconds=timeout, env=cell.task.verify_env,
                                             output=output_path(self.runs_dir, result.run_id), secrets=secrets,
                                             stop=self._interrupted,
                                             needs_reward=cell.task.verify_needs_reward and bool(cell.task.verify))
            finally:
                self.stats.verifying -= 1
        return _with_verdict(result, verdict)

    def _spend(self, outcome: HarnessResult) -> None:
        if outcome.usage.cost_usd is not None:
            self.stats.cost_usd += outcome.usage.cost_usd
        if self.max_cost_usd is not None and self.stats.cost_usd >= self.max_cost_usd:
            self._budget_reached = True

    def _count(self, result: TaskResult, seconds: float) -> None:
        if result.verified is not None and result.finished:
            if result.verified:
                self.stats.passed += 1
            else:
                self.stats.not_passed += 1
        if result.status == "success":
            self.stats.succeeded += 1
        elif result.status == "failed":
            self.stats.failed += 1
        else:
            self.stats.interrupted += 1
        self.stats.durations.append(seconds)

    def _update(self, update: BatchUpdate) -> None:
        if self.on_update is not None:
            self.on_update(update)


def _shared(tasks: list[BatchTask], problem: str) -> tuple[int | None, str]:
    """One problem of one or more tasks, said once: at the first one's line, naming the others."""
    first = tasks[0]
    if len(tasks) == 1:
        return first.line, f"{first.id}: {problem}"
    others = [t.id + (f" on line {t.line}" if t.line is not None else "") for t in tasks[1:]]
    shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
    return first.line, f"{first.id} (also {shown}): {problem}"


_CLEANUP_DEADLINE = 60.0


def _scrubbed(result: TaskResult, secrets: RunSecrets) -> TaskResult:
    """`result` with the task's secrets hidden in every string (its answer, its error), as its run log hides them."""
    line = result.model_dump_json().encode()
    scrubbed = secrets.json_line(line)
    return result if scrubbed is line else TaskResult.model_validate_json(scrubbed)


def _broken(cell: Cell, exc: Exception, *, verified: bool) -> TaskResult:
    """A cell the driver could not play (its workspace, its patch, an executor's own failure): a failed result
    naming what went wrong, so the other cells go on."""
    code = exc.code if isinstance(exc, HarnessError) else "batch_internal"
    message = exc.message if isinstance(exc, HarnessError) else f"{type(exc).__name__}: {exc}"
    result = TaskResult(id=cell.task.id, run_id="", status="failed", provider=cell.provider, model=cell.model,
                        attempt=cell.attempt, error_code=code, attempts=0,
                        error=f"{message} (the task did not run to its end; fix the cause and run the batch again "
                              "with --rerun-failed)")
    return _with_verdict(result, not_verified("not verified: the cell did not run")) if verified else result


def _with_verdict(result: TaskResult, verdict: Verdict) -> TaskResult:
    status = "interrupted" if verdict.stopped else result.status
    return result.model_copy(update={"verification": verdict.verification, "reward": verdict.reward,
                                     "rewards": verdict.rewards, "verified": verdict.verified, "status": status})


def _no_verdict(result: TaskResult) -> bool:
    """A cell whose verifier ran, or should have, and decided no reward (it timed out, could not start, wrote an
    unreadable reward)."""
    return result.verification is not None and not result.verification.verdict


def _earlier(cell: Cell, finished: dict[tuple[str, str, str, int], TaskResult]) -> TaskResult | None:
    """The result the results file holds for `cell`: its own line; else one with no provider (a task that broke
    before it had one); else, for a cell of attempt 1, a line written before batches had cells (no `attempt`)."""
    task_id, provider, model, attempt = cell.key
    found = finished.get(cell.key) or finished.get((task_id, "", model, attempt))
    if found is None and attempt == 1:
        found = next((r for key, r in finished.items() if key[0] == task_id and key[1] in ("", provider)
                      and "attempt" not in r.model_fields_set), None)
    return found


async def _probe_problem(spec: AgentRunSpec, provider: str, host: PluginHost) -> str | None:
    try:
        await prepare(spec, provider, host)
    except HarnessError as exc:
        return f"provider {provider!r}: {exc.message}"
    return None
