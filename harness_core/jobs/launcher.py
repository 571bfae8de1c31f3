"""Background runs: what a detached worker is asked to run (`JobPlan`), and starting one (`launch`).

Layer: core runtime (the owner side of a background run). Knows the spec model (carrying the starter's trace context,
from the plugin host), the error hierarchy and the worker's command line (`python -m harness_core run
--background-worker`); knows nothing of providers, rendering or click. The handshake: docs/jobs-and-batches.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict

from harness_core.errors import HarnessError, _all_subclasses
from harness_core.plugins import get_host
from harness_core.spec import AgentRunSpec
from harness_core.store import resolve_runs_dir
from harness_core.tools.reference import ToolReference

__all__ = ["WORKER_FLAG", "JobPlan", "Launched", "OfflinePlan", "error_line", "launch", "pid_line",
           "ready_line"]

WORKER_FLAG = "--background-worker"
_READY_DEADLINE = 120.0
"""How long the starter waits for the worker to open its run (a slow CLI probe, a cold disk)."""


# These models are built when a background run is launched or served (defer_build), not by every foreground run.
class OfflinePlan(BaseModel):
    """`harness run --offline` settings for the worker (see `harness run --help`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    scenario: str
    explicit_cwd: bool = False
    keep_workspace: bool = False


class JobPlan(BaseModel):
    """Everything a worker needs to play one run. Sent over a pipe, never written to a file."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    spec: AgentRunSpec
    run_id: str
    provider: str | None = None
    runs_dir: Path | None = None
    record_wire: bool = False
    offline: OfflinePlan | None = None
    tools: tuple[ToolReference, ...] = ()
    """The run's Python tools: where the worker imports each function from, and the options it applies again."""


class Launched(BaseModel):
    """A background run that has started: its id, its log, and (offline, temporary) its workspace."""

    model_config = ConfigDict(frozen=True, defer_build=True)

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
    spec = get_host().with_trace_context(plan.spec)  # the starter's trace context, for the worker's observers
    plan = plan.model_copy(update={"runs_dir": resolve_runs_dir(plan.runs_dir).absolute(),
                                   "spec": spec.model_copy(update={"cwd": spec.cwd.absolute()})})
    document = plan.model_dump_json().encode()  # before anything starts: a plan that cannot be sent starts nothing
    argv = [python or sys.executable, "-m", "harness_core", "run", WORKER_FLAG]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None, env=env,
                            start_new_session=True, close_fds=True, cwd=_cwd())
    assert proc.stdin is not None and proc.stdout is not None
    with contextlib.suppress(BrokenPipeError):  # the worker died at once: its answer (or its absence) says why
        proc.stdin.write(document)
        proc.stdin.close()
    lines = _Lines(proc.stdout, time.monotonic() + deadline)
    worker: int | None = None
    try:
        first = lines.next()
        worker = int(first["worker"]) if first is not None and "worker" in first else None
        answer = lines.next() if worker is not None else first
        if answer is None or not ("error" in answer or "run_id" in answer):
            raise HarnessError("the background worker ended before starting its run; run the same command without "
                               "--background to see why")
    except BaseException as exc:  # Ctrl-C, a deadline, a broken answer: the run must not go on unseen
        _stop(worker)
        if isinstance(exc, TimeoutError):
            stopped = ("it was asked to stop" if worker is not None
                       else "it never said its pid, so it could not be stopped")
            raise HarnessError(f"the background worker did not start its run within {deadline:g} s ({stopped}); run "
                               "the same command without --background to see why") from None
        raise
    finally:
        proc.stdout.close()
        _reap(proc)  # the first worker process exits at once (the worker proper is its child)
    if "error" in answer:
        raise _error(str(answer.get("code", "")), str(answer["error"]), answer.get("details"))
    workspace = answer.get("workspace")
    return Launched(run_id=str(answer["run_id"]), log=Path(str(answer["log"])), pid=worker or proc.pid,
                    workspace=Path(workspace) if workspace else None)


def _cwd() -> str:
    """The starter's directory (relative paths in options mean the same to the worker), or / if it is gone."""
    try:
        return os.getcwd()
    except OSError:
        return "/"


class _Lines:
    """The worker's JSON answer lines, each read before `until` (monotonic) or TimeoutError."""

    def __init__(self, stdout: IO[bytes], until: float) -> None:
        self._fd = stdout.fileno()
        self._until = until
        self._buffer = b""

    def next(self) -> dict[str, Any] | None:
        """The next line as a JSON object; None at the end of output or for a line that is not one."""
        with selectors.DefaultSelector() as selector:
            selector.register(self._fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = self._until - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                if not selector.select(timeout=min(left, 1.0)):
                    continue
                chunk = os.read(self._fd, 65536)
                if not chunk:
                    return None
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            answer = json.loads(line)
        except ValueError:
            return self.next()  # not the worker's (a plugin printing at import): skip it
        return answer if isinstance(answer, dict) else self.next()


def _stop(worker: int | None) -> None:
    """Interrupt a worker that will not be reported (before its run: it just exits; after: the run ends
    `interrupted`, its log complete)."""
    if worker is not None:
        with contextlib.suppress(OSError):
            os.kill(worker, signal.SIGINT)


def _reap(proc: subprocess.Popen[bytes]) -> int | None:
    try:
        return proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        return None


def pid_line(pid: int) -> str:
    """The worker's first line: its pid (the process that owns the run)."""
    return json.dumps({"worker": pid})


def ready_line(run_id: str, log: Path, workspace: Path | None = None) -> str:
    """The worker's answer once its run's log is open."""
    return json.dumps({"ready": True, "run_id": run_id, "log": str(log),
                       "workspace": str(workspace) if workspace else None})


def error_line(exc: BaseException) -> str:
    """The worker's answer when its run could not start."""
    if isinstance(exc, HarnessError):
        return json.dumps({"error": exc.message, "code": exc.code, "details": exc.details}, default=str)
    return json.dumps({"error": f"{type(exc).__name__}: {exc}", "code": "harness_error"})


def _error(code: str, message: str, details: object = None) -> HarnessError:
    """The worker's error as the class it was raised as (same code, message, details and exit status)."""
    cls = next((c for c in _all_subclasses(HarnessError) if c.code == code), HarnessError)
    error = cls.__new__(cls)
    HarnessError.__init__(error, message, **(details if isinstance(details, dict) else {}))
    return error
