"""The background worker: `harness run --background-worker` plays one run detached from any terminal.

Layer: CLI (imported only when a worker starts). Knows the worker protocol of `harness_core._background`, the
run API, the answers file (`harness_core._answers`: how a background run's approvals are decided) and the
offline support; knows nothing of any concrete provider.

Started by `launch` in its own session with the plan on stdin. It opens the run (the log exists and is locked
from then on), answers "ready" on stdout, lets go of the starter's stdout and stderr (the terminal may close),
then consumes the run to its `done`. SIGINT/SIGTERM/SIGHUP interrupt the turn as for a foreground run (a
second one stops it at once): that is how `harness cancel` reaches it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio

from harness_core import AgentRunSpec, HarnessError, open_run
from harness_core._answers import AnswersFile, answers_path
from harness_core._background import JobPlan, error_line, ready_line
from harness_core.cli._live import exit_status_for, watch_signals
from harness_core.errors import EXIT_FAILED, EXIT_INTERRUPTED
from harness_core.store import resolve_runs_dir

__all__ = ["serve"]


def serve() -> int:
    """Read the plan from stdin, play it, return the exit status (the run's, as for `harness run`)."""
    raw = sys.stdin.buffer.read()
    _to_devnull(0)
    answered = False

    def ready(run_id: str, log: Path, workspace: Path | None) -> None:
        nonlocal answered
        _answer(ready_line(run_id, log, workspace))
        answered = True

    try:
        plan = JobPlan.model_validate_json(raw)
        with _workspace(plan) as (spec, workspace):
            return int(anyio.run(_play, plan, spec, workspace, ready))
    except BaseException as exc:
        if answered:
            raise
        _answer(error_line(exc))
        if isinstance(exc, HarnessError):
            return exc.exit_status
        if isinstance(exc, KeyboardInterrupt):
            return EXIT_INTERRUPTED
        return EXIT_FAILED


@contextlib.contextmanager
def _workspace(plan: JobPlan) -> Iterator[tuple[AgentRunSpec, Path | None]]:
    """The spec to run: as planned, or (offline) pointed at the scripted backend, in a temporary workspace unless
    the plan names one; the temporary workspace is removed afterwards unless it is to be kept."""
    offline = plan.offline
    if offline is None:
        yield plan.spec, None
        return
    from harness_core.offline import offline_spec, scenario_named, seed_workspace

    played = scenario_named(offline.scenario)
    spec = plan.spec
    temporary = None
    if not offline.explicit_cwd:
        temporary = Path(tempfile.mkdtemp(prefix="harness-offline-ws-"))
        spec = spec.model_copy(update={"cwd": temporary})
    try:
        seed_workspace(played, spec.cwd)
        with offline_spec(spec, plan.provider, played) as offline_run:
            yield offline_run, temporary
    finally:
        if temporary is not None and not offline.keep_workspace:
            shutil.rmtree(temporary, ignore_errors=True)


async def _play(plan: JobPlan, spec: AgentRunSpec, workspace: Path | None,
                ready: Callable[[str, Path, Path | None], None]) -> int:
    directory = resolve_runs_dir(plan.runs_dir)
    answers = AnswersFile(answers_path(directory, plan.run_id))
    approver = answers.approver()
    hard_stop = anyio.CancelScope()
    with hard_stop:
        async with open_run(spec, plan.provider, approver=approver, runs_dir=directory,
                            record_wire=plan.record_wire, run_id=plan.run_id) as live, anyio.create_task_group() as tg:
            assert live.log_path is not None
            answers.create()  # the run's log is open: from now on it takes approvals from its answers file
            ready(live.run_id, live.log_path, workspace)
            _to_devnull(1)
            _to_devnull(2)
            tg.start_soon(watch_signals, live, None, hard_stop)
            async for _ in live:
                pass
            tg.cancel_scope.cancel()
    if hard_stop.cancelled_caught:
        return EXIT_INTERRUPTED
    return exit_status_for(live.result)


def _answer(line: str) -> None:
    with contextlib.suppress(OSError):
        os.write(1, (line + "\n").encode())


def _to_devnull(fd: int) -> None:
    """Point `fd` at /dev/null: the starter's pipe and terminal are let go of (the terminal may close)."""
    null = os.open(os.devnull, os.O_RDWR)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)
