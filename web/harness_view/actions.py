"""What the viewer may change: answer a background run's approval request, and cancel a run — the same answers
file and interrupt as `harness approve` and `harness cancel`, through `harness_core.jobs`.

Knows the jobs API; nothing of HTTP or pages (the caller has checked the CSRF token and shows the outcome).
"""

from __future__ import annotations

from pathlib import Path

from harness_core import HarnessError, jobs

__all__ = ["ANSWERER", "CANCEL_TIMEOUT", "DECISIONS", "answer", "cancel"]

ANSWERER = "harness view"
"""Who answered, as the run log's `approval_resolved` says it (`answered with harness view`)."""
DECISIONS = ("approve", "deny", "abort")
CANCEL_TIMEOUT = 20.0


def answer(runs_dir: Path, run_id: str, request_id: str, decision: str) -> str:
    """Answer `request_id` of run `run_id`; what to tell the user.

    Raises:
        HarnessError: the run is over, is not a background run, the request is not waiting, the decision is
            not one of `DECISIONS` (the message says what to do).
    """
    if decision not in DECISIONS:
        raise HarnessError(f"{decision!r} is not an answer: approve, deny or abort")
    jobs.get(run_id, runs_dir=runs_dir).approve(request_id, decision, by=ANSWERER)
    return {"approve": "Approved", "deny": "Denied", "abort": "Denied; the turn stops"}[decision] + \
        f" (request {request_id}); the run goes on from its answer."


async def cancel(runs_dir: Path, run_id: str) -> str:
    """Interrupt run `run_id` and wait (up to `CANCEL_TIMEOUT` s) for it to end; what to tell the user.

    Raises:
        HarnessError: it was lost, did not end in time, or no `harness run` process drives it.
    """
    job = jobs.get(run_id, runs_dir=runs_dir)
    if job.status not in ("running", "waiting for approval"):
        raise jobs.JobNotRunningError(f"run {run_id} is {job.status}: there is nothing to cancel")
    summary = await job.cancel(timeout=CANCEL_TIMEOUT)
    return f"Run {run_id} ended: {summary.status}."
