"""Background runs from Python: start a run in a detached worker, list runs, follow one, answer, cancel.

Layer: public API (the library side of `harness run --background`, `attach`, `approve`, `cancel`, `runs`).
Knows the run API's checks, the worker launcher (`jobs/launcher.py`), the run store and the answers file; knows
nothing of providers, the CLI's rendering or click. Usage: docs/jobs-and-batches.md (from Python).
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
from collections.abc import AsyncGenerator, Callable, Iterable
from pathlib import Path

import anyio
import anyio.lowlevel
import anyio.to_thread

from harness_core._run.probe import prepare
from harness_core._run.run_files import check_writable
from harness_core._run.started import capabilities_of
from harness_core._run.tool_serving import check_tools_for, checked_tools, served_tools
from harness_core.errors import HarnessError, InvalidSpecError
from harness_core.events import ApprovalDecision, ApprovalRequested, Done, HarnessEvent, HarnessResult
from harness_core.jobs.answers import AnswersFile, answers_path
from harness_core.jobs.driver_facts import is_harness_run, process_argv, process_state
from harness_core.jobs.launcher import JobPlan, Launched, launch
from harness_core.plugins import get_host
from harness_core.spec import AgentRunSpec
from harness_core.store import (
    BadLine,
    RunSummary,
    find_run,
    follow_events_async,
    list_runs,
    log_path,
    new_run_id,
    pending_approvals,
    resolve_runs_dir,
    summarize,
    writer_pid,
)
from harness_core.tools.reference import references
from harness_core.tools.tool import Tool

__all__ = ["Job", "JobNotRunningError", "get", "list_jobs", "start"]

_POLL = 0.05


class JobNotRunningError(HarnessError):
    """The job has ended (or was lost): there is nothing to answer or cancel."""

    code = "job_not_running"


class Job:
    """One background run, by its log: status, events (followed live), answers to its approvals, cancel."""

    def __init__(self, run_id: str, runs_dir: Path, *, pid: int | None = None) -> None:
        self.run_id = run_id
        self.runs_dir = runs_dir
        self.log_path = log_path(runs_dir, run_id)
        self.pid = pid
        """The worker's pid when this process started it (else None; `cancel` finds the worker by its lock)."""

    def __repr__(self) -> str:
        return f"Job({self.run_id!r}, status={self.status!r})"

    @property
    def summary(self) -> RunSummary:
        return summarize(self.log_path)

    @property
    def status(self) -> str:
        """`running`, `waiting for approval`, `success`, `failed`, `interrupted`, `lost` (as `harness runs`)."""
        return self.summary.status

    def events(self, *, poll: float = _POLL,
               on_bad_line: Callable[[BadLine], None] | None = None) -> AsyncGenerator[HarnessEvent, None]:
        """The run's events from the first, then each one as the worker writes it, until `done` (or until the
        worker is gone without it: a lost run). The log is read only as fast as you consume it; waiting is
        `anyio.sleep`, so an iteration you leave early holds nothing (close it with `contextlib.aclosing` to end
        it at once). Bad lines are skipped, or given to `on_bad_line` (called in your task).

        Raises (while iterating): OSError when the log cannot be read (removed, a failing disk)."""
        return follow_events_async(self.log_path, poll=poll, on_bad_line=on_bad_line or _skip)

    async def wait(self, *, poll: float = _POLL) -> HarnessResult | None:
        """The run's result once it is done; None when the run was lost."""
        async with contextlib.aclosing(self.events(poll=poll)) as events:
            async for event in events:
                if isinstance(event, Done):
                    return event.result
        return None

    def pending_approvals(self) -> list[ApprovalRequested]:
        """The approval requests waiting for an answer, oldest first."""
        return list(pending_approvals(self.log_path).values())

    def approve(self, request_id: str, decision: ApprovalDecision | str, *, by: str = "harness_core.jobs") -> None:
        """Answer one waiting approval request: `approve` (or `allow`), `deny`, or `abort` (deny and stop the
        turn). The worker takes it within ~0.1 s; the first answer to a request wins. `by` says who answered (the
        run log's `approval_resolved` names it: `harness view`, a bot, ...).

        Raises:
            JobNotRunningError: the run is over.
            InvalidSpecError: not a background run, or no such request waiting.
        """
        answers = answers_path(self.runs_dir, self.run_id)
        if not answers.exists():
            raise InvalidSpecError(f"run {self.run_id} is not a background run: answer it with the approver of "
                                   "the program that runs it")
        self._require_running("answer")
        waiting = [r.request_id for r in self.pending_approvals()]
        if request_id not in waiting:
            raise InvalidSpecError(f"request {request_id!r} of run {self.run_id} is not waiting for an answer "
                                   f"(waiting: {', '.join(waiting) or 'none'})")
        AnswersFile(answers).answer(request_id, _decision(decision), by=by)

    async def cancel(self, *, timeout: float = 30.0) -> RunSummary:  # noqa: ASYNC109 (bounds the wait for the end)
        """Interrupt the run through its provider (result `interrupted`) and wait up to `timeout` seconds for it
        to end; a second call stops it at once. Works for any run a `harness run` process drives (a background
        worker or a foreground run in a terminal). A finished run is left as it is. Returns the run's summary:
        its status is `interrupted` (or how it ended meanwhile), or `lost` if its worker died meanwhile.

        Raises:
            JobNotRunningError: the run was already lost.
            HarnessError: the run did not end in time; its process is stopped (Ctrl-Z, SIGSTOP); it is driven
                by a program that is not `harness run` (interrupt it there: `LiveRun.interrupt()`).
        """
        if not (math.isfinite(timeout) and timeout >= 0):
            raise ValueError(f"timeout must be a finite number of seconds, 0 or more, not {timeout}")
        summary = self.summary
        if summary.done is not None:
            return summary
        pid = writer_pid(self.log_path)
        if pid is None:
            self._require_running("cancel")
            raise HarnessError(f"cannot tell which process drives run {self.run_id}; `harness cancel "
                               f"{self.run_id}` says more")
        if not is_harness_run(process_argv(pid)):
            raise HarnessError(f"run {self.run_id} is not driven by a `harness run` process (process {pid}); "
                               "interrupt it in the program that runs it (LiveRun.interrupt())")
        with contextlib.suppress(ProcessLookupError):  # it ended just now
            os.kill(pid, signal.SIGINT)
        with anyio.move_on_after(timeout):
            while (summary := self.summary).done is None and summary.writer_alive:
                if process_state(pid) in ("T", "t"):
                    raise HarnessError(f"run {self.run_id}'s Harness (process {pid}) is stopped, so the interrupt "
                                       f"takes effect only once it continues (`kill -CONT {pid}`)")
                await anyio.sleep(_POLL)
        summary = self.summary
        if summary.done is None and summary.writer_alive:
            raise HarnessError(f"run {self.run_id} has not ended after {timeout:g} s; cancel it again to stop it "
                               "at once")
        return summary

    def _require_running(self, what: str) -> None:
        status = self.status
        if status not in ("running", "waiting for approval"):
            raise JobNotRunningError(f"run {self.run_id} is {status}: there is nothing to {what}")


def _skip(_bad: BadLine) -> None:
    """Bad lines are skipped by default (a reader shows what is readable)."""


_DECISIONS = {"allow": ApprovalDecision.APPROVE}


def _decision(value: ApprovalDecision | str) -> ApprovalDecision:
    if isinstance(value, ApprovalDecision):
        return value
    try:
        return _DECISIONS.get(value) or ApprovalDecision(value)
    except ValueError:
        raise InvalidSpecError(f"{value!r} is not an answer: use approve (or allow), deny or abort") from None


async def start(spec: AgentRunSpec, provider: str | None = None, *, runs_dir: str | Path | None = None,
                record_wire: bool = False, run_id: str | None = None, tools: Iterable[Tool] | None = None) -> Job:
    """Check `spec` as `open_run` would (provider, options, capabilities, the CLI), start it in a detached worker,
    and return its `Job` once the run's log is open. The worker owns the run: it survives this process, and no
    agent process survives the worker. Approvals (a spec with an approval policy) wait for `Job.approve`,
    `harness attach` or `harness approve`. `tools` (`@tool` functions) are imported again by the worker, from
    the module or file that defines them (so they must be defined at a module's top level).

    Raises (nothing started): what `open_run` raises before it spawns anything; `InvalidSpecError` for an
    unwritable runs directory, a run id in use, or a tool the worker could not import.
    """
    given = checked_tools(tools, spec)
    refs = references(given)
    host = get_host()
    probed = await prepare(spec, provider, host)
    check_tools_for(probed.name, capabilities_of(probed), served_tools(given, spec), host.providers_with)
    directory = check_writable(runs_dir)
    plan = JobPlan(spec=spec, run_id=run_id or new_run_id(), provider=provider, runs_dir=directory,
                   record_wire=record_wire, tools=refs)
    with anyio.CancelScope(shield=True):  # a launch cannot be taken back half-way: finish it, then honour a cancel
        started: Launched = await anyio.to_thread.run_sync(launch, plan)
    job = Job(started.run_id, directory, pid=started.pid)
    try:
        await anyio.lowlevel.checkpoint()  # cancelled meanwhile: the run must not go on with nobody knowing of it
    except BaseException:
        with contextlib.suppress(OSError):
            os.kill(started.pid, signal.SIGINT)
        raise
    return job


def get(ref: str, *, runs_dir: str | Path | None = None) -> Job:
    """The job (any run of the runs directory) named by a run id, a unique prefix of one, or `last`.

    Raises:
        InvalidSpecError: no such run, or an ambiguous prefix (the message names the candidates).
    """
    directory = resolve_runs_dir(runs_dir)
    return Job(find_run(directory, ref), directory)


def list_jobs(*, runs_dir: str | Path | None = None) -> list[RunSummary]:
    """Every run of the runs directory (background or not), newest first, as `harness runs --json` lists them."""
    return list_runs(resolve_runs_dir(runs_dir))
