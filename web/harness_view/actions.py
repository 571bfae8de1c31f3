"""What the viewer may change: answer a background run's approval request, and cancel a run — the same answers
file and interrupt as `harness approve` and `harness cancel`; an answer is confirmed from the run's log (what the
run recorded, and who answered first), as `harness approve` does.

Knows the jobs API and the log's approval events; nothing of HTTP or pages (the caller checked the CSRF token).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from pathlib import Path

import anyio
from harness_core import ApprovalResolved, HarnessError, jobs
from harness_core.store import LogFollower, validate_run_id

from harness_view.files import own_log
from harness_view.stopping import cut_on_stop, never

__all__ = ["ANSWERER", "CANCEL_TIMEOUT", "CONFIRM_DEADLINE", "DECISIONS", "answer", "cancel"]

ANSWERER = "harness view"
"""Who answered, as the run log's `approval_resolved` says it (`answered with harness view`)."""
DECISIONS = ("approve", "deny", "abort")
CANCEL_TIMEOUT = 20.0
CONFIRM_DEADLINE = 10.0
"""Seconds an answer waits for the run to record it (as `harness approve`)."""
_POLL = 0.05


class AnsweredFirstError(HarnessError):
    """Someone else's answer to the request was taken first (the message says whose, and what it was)."""


async def answer(runs_dir: Path, run_id: str, request_id: str, decision: str, *,
                 stopping: Callable[[], bool] = never) -> ApprovalResolved:
    """Answer `request_id` of run `run_id` (an exact run id, as the viewer's URLs name runs) and wait up to
    `CONFIRM_DEADLINE` s (or until `stopping()`: the viewer stops) for the run to record it; how the run
    resolved it, this answer's.

    Raises:
        AnsweredFirstError: another answer (`harness approve`, `harness attach`, another tab) was taken first.
        HarnessError: not a run id, the run is over or not a background run, the request is not waiting, the
            decision is not one of `DECISIONS`, or the run has not taken the answer in time (the message says
            what to do).
    """
    if decision not in DECISIONS:
        raise HarnessError(f"{decision!r} is not an answer: approve, deny or abort")
    job = jobs.Job(validate_run_id(run_id), runs_dir)
    path = await anyio.to_thread.run_sync(own_log, runs_dir, run_id)
    if path is None:
        raise HarnessError(f"no run {run_id} in {runs_dir} (or its log is not a run's own file)")
    try:
        await anyio.to_thread.run_sync(functools.partial(job.approve, request_id, decision, by=ANSWERER))
    except HarnessError:
        earlier = await _resolution(path, request_id, deadline=0.0)  # answered already: say by whom
        if earlier is not None:
            raise _first(run_id, earlier) from None
        raise
    resolved = await _resolution(path, request_id, deadline=CONFIRM_DEADLINE, stopping=stopping)
    if resolved is None and stopping():
        raise HarnessError(f"the answer to request {request_id} is recorded; the viewer stopped before run {run_id} "
                           f"took it: `harness show {run_id}` shows what the run did")
    if resolved is None:
        raise HarnessError(f"the answer to request {request_id} is recorded, but run {run_id} has not taken it in "
                           f"{CONFIRM_DEADLINE:.0f} s; this page shows it when it does (reload it)")
    if resolved.decision.value != decision or resolved.reason != f"answered with {ANSWERER}":
        raise _first(run_id, resolved)
    return resolved


def _first(run_id: str, resolved: ApprovalResolved) -> AnsweredFirstError:
    by = f" ({resolved.reason})" if resolved.reason else ""
    return AnsweredFirstError(f"request {resolved.request_id} of run {run_id} was answered first{by}: "
                              f"{resolved.decision.value}; that is what the run did")


async def _resolution(path: Path, request_id: str, *, deadline: float,
                      stopping: Callable[[], bool] = never) -> ApprovalResolved | None:
    """How the run resolved `request_id`, following its log for up to `deadline` s (0: what it holds now) or
    until `stopping()`; None if it has not (busy, or over without it). Reads in a worker thread."""
    bounded = anyio.move_on_after(deadline) if deadline > 0 else contextlib.nullcontext()  # 0: one whole read
    with LogFollower(path, on_bad_line=lambda _bad: None) as follower, bounded:
        while True:
            for event in await anyio.to_thread.run_sync(follower.read):
                if isinstance(event, ApprovalResolved) and event.request_id == request_id:
                    return event
            if follower.over or deadline <= 0 or stopping():
                return None
            await anyio.sleep(_POLL)
    return None


async def cancel(runs_dir: Path, run_id: str, *, stopping: Callable[[], bool] = never) -> str:
    """Interrupt run `run_id` (an exact run id) and wait (up to `CANCEL_TIMEOUT` s, or until `stopping()`: the
    viewer stops) for it to end; what to tell the user.

    Raises:
        HarnessError: not a run id, it was lost, did not end in time, or no `harness run` process drives it.
    """
    job = jobs.Job(validate_run_id(run_id), runs_dir)
    status = await anyio.to_thread.run_sync(lambda: job.status)
    if status not in ("running", "waiting for approval"):
        raise jobs.JobNotRunningError(f"run {run_id} is {status}: there is nothing to cancel")
    with anyio.CancelScope() as waiting:  # the interrupt is sent first: a viewer that stops cuts only the wait
        async with anyio.create_task_group() as watch:
            watch.start_soon(cut_on_stop, stopping, waiting)
            summary = await job.cancel(timeout=CANCEL_TIMEOUT)
            watch.cancel_scope.cancel()
    if waiting.cancelled_caught:
        return f"Cancel asked of run {run_id}; the viewer stopped before it ended."
    return f"Run {run_id} ended: {summary.status}."
