"""Background runs: what a detached worker is asked to run (`JobPlan`), and starting one (`launch`).

Layer: core runtime (the owner side of a background run). Knows the spec model, the error hierarchy and the
worker's command line (`python -m harness_core run --background-worker`: a `harness run` process, so
`harness cancel` may signal it); knows nothing of providers, rendering or click.

The worker is started in its own session (no controlling terminal: closing the terminal that started it sends
it nothing), with stdin and stdout pipes to the starter. The starter writes the plan as one JSON document to
the worker's stdin (never to a file: `spec.env` may hold secrets) and closes it; the worker opens the run's log
(so `attach`, `cancel` and `runs` see it from then on) and answers one JSON line on stdout — ``{"ready": true,
"run_id", "log", "workspace"}`` or ``{"error": message, "code": code}`` — then lets go of stdout and stderr.
The worker owns the run from then on: its agents run under the process supervisor with the worker as their
owner, so a SIGKILLed worker leaves no agent behind and its run reads as `lost`.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict

from harness_core.errors import HarnessError, _all_subclasses
from harness_core.spec import AgentRunSpec

__all__ = ["WORKER_FLAG", "JobPlan", "Launched", "OfflinePlan", "launch", "ready_line", "error_line"]

WORKER_FLAG = "--background-worker"
_READY_DEADLINE = 120.0
"""How long the starter waits for the worker to open its run (a slow CLI probe, a cold disk)."""


class OfflinePlan(BaseModel):
    """`harness run --offline` settings for the worker (see `harness run --help`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scenario: str
    explicit_cwd: bool = False
    keep_workspace: bool = False


class JobPlan(BaseModel):
    """Everything a worker needs to play one run. Sent over a pipe, never written to a file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    spec: AgentRunSpec
    run_id: str
    provider: str | None = None
    runs_dir: Path | None = None
    record_wire: bool = False
    offline: OfflinePlan | None = None


class Launched(BaseModel):
    """A background run that has started: its id, its log, and (offline, temporary) its workspace."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    log: Path
    pid: int
    workspace: Path | None = None


def launch(plan: JobPlan, *, python: str | None = None, deadline: float = _READY_DEADLINE) -> Launched:
    """Start a detached worker for `plan` and return once it has opened the run's log.

    Raises:
        HarnessError: what the worker raised before its run started (the same class and message as a
            foreground run would raise: a missing CLI, a clashing run id, ...).
        OSError: the worker could not be started.
    """
    from harness_core.store import resolve_runs_dir

    plan = plan.model_copy(update={"runs_dir": resolve_runs_dir(plan.runs_dir).absolute(),
                                   "spec": plan.spec.model_copy(update={"cwd": plan.spec.cwd.absolute()})})
    argv = [python or sys.executable, "-m", "harness_core", "run", WORKER_FLAG]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None, env=env,
                            start_new_session=True, close_fds=True, cwd="/")
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(plan.model_dump_json().encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the worker died at once: its answer (or its absence) says why
    try:
        answer = _read_answer(proc, proc.stdout, deadline)
    except BaseException:  # Ctrl-C (or any failure) before the id could be given: the run must not go on unseen
        with contextlib.suppress(OSError):
            proc.send_signal(signal.SIGINT)  # before its run: the worker just exits; after: the run is interrupted
        raise
    finally:
        proc.stdout.close()
    if "error" in answer:
        proc.wait(timeout=10)
        raise _error(str(answer.get("code", "")), str(answer["error"]))
    workspace = answer.get("workspace")
    return Launched(run_id=str(answer["run_id"]), log=Path(str(answer["log"])), pid=proc.pid,
                    workspace=Path(workspace) if workspace else None)


def _read_answer(proc: subprocess.Popen[bytes], stdout: IO[bytes], deadline: float) -> dict[str, Any]:
    import selectors

    until = time.monotonic() + deadline
    buffer = b""
    with selectors.DefaultSelector() as selector:
        selector.register(stdout, selectors.EVENT_READ)
        while b"\n" not in buffer:
            left = until - time.monotonic()
            if left <= 0:
                proc.kill()
                raise HarnessError(f"the background worker did not start its run within {deadline:g} s (it was "
                                   "stopped); run the same command without --background to see why")
            if not selector.select(timeout=min(left, 1.0)):
                continue
            chunk = os.read(stdout.fileno(), 65536)
            if not chunk:
                break
            buffer += chunk
    line = buffer.split(b"\n", 1)[0]
    try:
        answer = json.loads(line)
        if isinstance(answer, dict) and ("error" in answer or "run_id" in answer):
            return answer
    except ValueError:
        pass
    status = proc.wait(timeout=10)
    raise HarnessError(f"the background worker ended before starting its run (exit status {status}); run the "
                       "same command without --background to see why")


def ready_line(run_id: str, log: Path, workspace: Path | None = None) -> str:
    """The worker's answer once its run's log is open."""
    return json.dumps({"ready": True, "run_id": run_id, "log": str(log),
                       "workspace": str(workspace) if workspace else None})


def error_line(exc: BaseException) -> str:
    """The worker's answer when its run could not start."""
    if isinstance(exc, HarnessError):
        return json.dumps({"error": exc.message, "code": exc.code})
    return json.dumps({"error": f"{type(exc).__name__}: {exc}", "code": "harness_error"})


def _error(code: str, message: str) -> HarnessError:
    """The worker's error as the class it was raised as (same code, same exit status)."""
    cls = next((c for c in _all_subclasses(HarnessError) if c.code == code), HarnessError)
    error = cls.__new__(cls)
    HarnessError.__init__(error, message)
    return error
