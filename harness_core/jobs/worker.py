"""The background worker: `harness run --background-worker` plays one run detached from any terminal.

Layer: jobs (imported only when a worker starts). Knows the worker protocol of `harness_core.jobs.launcher`, the
run API, the answers file, the run's secrets (its stderr goes to a scrubbed worker log) and the offline support;
knows nothing of any provider. Its life, from the plan on stdin to `done`: docs/jobs-and-batches.md.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.lowlevel

from harness_core._run.api import open_run
from harness_core._run.approvals import Approver
from harness_core._run.signals import interrupt_on_signals
from harness_core.errors import EXIT_FAILED, EXIT_INTERRUPTED, HarnessError, LogWriteFailedError, exit_status_for
from harness_core.events import ApprovalDecision, ApprovalRequested
from harness_core.jobs.answers import AnswersFile, answers_path
from harness_core.jobs.launcher import JobPlan, error_line, pid_line, ready_line
from harness_core.mcp import server_secrets
from harness_core.offline import offline_workspace
from harness_core.plugins import get_host
from harness_core.redaction import RunSecrets
from harness_core.spec import AgentRunSpec
from harness_core.store import WORKER_LOG_SUFFIX, open_run_file, resolve_runs_dir
from harness_core.tools.reference import load_references

__all__ = ["serve"]


def serve() -> int:
    """Read the plan from stdin, play it, return the exit status (the run's, as for `harness run`)."""
    raw = sys.stdin.buffer.read()
    _to_devnull(0)
    for sig in (signal.SIGTERM, signal.SIGHUP):  # until the run's own handlers: end cleanly, never half-started
        signal.signal(sig, signal.default_int_handler)
    if os.fork():
        os._exit(0)  # the starter reaps this one at once; the worker below is nobody's session leader
    starter = _Starter()
    starter.say(pid_line(os.getpid()))
    try:
        plan = JobPlan.model_validate_json(raw)
        with contextlib.ExitStack() as after_ready, _workspace(plan) as (spec, workspace):
            starter.after_ready = after_ready  # the worker log, entered once ready, closes last
            return int(anyio.run(_play, plan, spec, workspace, starter))
    except BaseException as exc:
        if starter.answered:
            raise  # after ready: the worker log has the traceback (written as it left the `with`)
        starter.say(error_line(exc))
        if isinstance(exc, HarnessError):
            return exc.exit_status
        if isinstance(exc, KeyboardInterrupt):
            return EXIT_INTERRUPTED
        return EXIT_FAILED


class _Starter:
    """The process that launched this worker, at the other end of stdout until the run is ready."""

    def __init__(self) -> None:
        self.answered = False
        self.after_ready: contextlib.ExitStack | None = None

    def say(self, line: str) -> bool:
        """Say `line`; False when the starter is gone (its pipe is closed)."""
        try:
            os.write(1, (line + "\n").encode())
        except OSError:
            return False
        return True

    def ready(self, run_id: str, log: Path, workspace: Path | None) -> bool:
        """Say the run is ready, and let go of stdout; False when the starter was gone."""
        heard = self.say(ready_line(run_id, log, workspace))
        self.answered = True
        _to_devnull(1)
        return heard


@contextlib.contextmanager
def _workspace(plan: JobPlan) -> Iterator[tuple[AgentRunSpec, Path | None]]:
    """The spec to run: as planned, or (offline) pointed at the scripted backend, in a temporary workspace unless
    the plan names one; the temporary workspace is removed afterwards unless it is to be kept."""
    offline = plan.offline
    if offline is None:
        yield plan.spec, None
        return
    with offline_workspace(plan.spec, plan.provider, offline.scenario, temporary=not offline.explicit_cwd,
                           keep=offline.keep_workspace, force=True) as offline_run:  # checked before it started
        yield offline_run, None if offline.explicit_cwd else offline_run.cwd


async def _play(plan: JobPlan, spec: AgentRunSpec, workspace: Path | None, starter: _Starter) -> int:
    directory = resolve_runs_dir(plan.runs_dir)
    answers = AnswersFile(answers_path(directory, plan.run_id))
    created = answers.create()  # before the provider starts: its first request may come at once (False: a stale
    # file of an earlier run with this id; emptied below once the log, created exclusively, proves the id is ours)
    try:
        return await _drive(plan, spec, workspace, starter, answers, directory, stale_answers=not created)
    except BaseException:
        if created and not starter.answered:
            answers.path.unlink(missing_ok=True)  # the run never started: no answers file without a log
        raise


async def _drive(plan: JobPlan, spec: AgentRunSpec, workspace: Path | None, starter: _Starter, answers: AnswersFile,
                 directory: Path, *, stale_answers: bool) -> int:
    hard_stop = anyio.CancelScope()
    tools = load_references(plan.tools)  # the tools the starter gave, made again here (raises before the run)
    unstarted: LogWriteFailedError | None = None
    with hard_stop:
        async with open_run(spec, plan.provider, approver=_approver(answers, spec), runs_dir=directory,
                            record_wire=plan.record_wire, run_id=plan.run_id,
                            tools=tools) as live, anyio.create_task_group() as tg:
            assert live.log_path is not None
            if stale_answers:
                answers.clear()
            tg.start_soon(interrupt_on_signals, live, hard_stop)  # no one to tell
            await anyio.lowlevel.checkpoint()  # the signal handlers are in place before the id is given out
            events = live.__aiter__()
            await events.__anext__()  # `run_started` is on disk before the id is given out, else the run is not
            try:  # started and the starter says why (a full disk: no log line, no worker log could say it)
                live.flush_log()
            except LogWriteFailedError as exc:
                unstarted = exc
                tg.cancel_scope.cancel()
            if unstarted is None:
                if not starter.ready(live.run_id, live.log_path, workspace):
                    live.interrupt()  # the starter died before it could print the run id: nobody knows of this run
                assert starter.after_ready is not None
                starter.after_ready.enter_context(_worker_log(directory / f"{plan.run_id}{WORKER_LOG_SUFFIX}",
                                                              spec, plan.provider))
                async for _ in events:
                    pass
                tg.cancel_scope.cancel()
    if unstarted is not None:
        assert live.log_path is not None
        with contextlib.suppress(OSError):
            if live.log_path.stat().st_size == 0:
                live.log_path.unlink()  # not a line of it fitted: there is no run to list
        raise unstarted
    if hard_stop.cancelled_caught:
        return EXIT_INTERRUPTED
    return exit_status_for(live.result)


def _approver(answers: AnswersFile, spec: AgentRunSpec) -> Approver:
    """A `harness_approve` plugin decides first (as it would for a run with no approver); else the request waits
    for an answer in the run's answers file (`harness approve`, `harness attach`, `Job.approve`)."""
    hook = get_host().pm.hook.harness_approve

    async def approve(request: ApprovalRequested) -> tuple[ApprovalDecision, str]:
        decided = hook(request=request, spec=spec)
        if decided is not None:
            return ApprovalDecision(decided), "decided by a harness_approve plugin"
        decision, by = await answers.wait_for(request)
        return decision, f"answered with {by}"

    return approve


@contextlib.contextmanager
def _worker_log(path: Path, spec: AgentRunSpec, provider: str | None) -> Iterator[None]:
    """Send stderr (the library's warnings, a crash's traceback) through the run's secrets to `path` (0600),
    line by line, while the run plays; the file is removed if nothing was written."""
    try:
        info = get_host().get(provider).cls.info
        secret_flags, public_env = info.secret_flags, info.public_env
    except HarnessError:
        secret_flags, public_env = frozenset(), frozenset()
    secrets = RunSecrets.of_run(spec.env, spec.provider_options, secret_flags=secret_flags,
                                public_env=public_env).with_values(server_secrets(spec.mcp_servers))
    read_end, write_end = os.pipe()
    sys.stderr.flush()
    os.dup2(write_end, 2)
    os.close(write_end)
    fd = open_run_file(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)

    def copy() -> None:
        writable = True
        with os.fdopen(read_end, "rb") as source:
            for line in source:  # read to the end whatever happens: a writer to stderr must never block
                if writable:
                    try:
                        os.write(fd, secrets.text(line.decode("utf-8", "replace")).encode())
                    except OSError:  # a full disk: the run's own log says why it stopped (log_write_failed)
                        writable = False

    copier = threading.Thread(target=copy, name="harness-worker-log", daemon=True)
    copier.start()
    try:
        yield
    except Exception:
        traceback.print_exc()
        raise
    finally:
        sys.stderr.flush()
        _to_devnull(2)  # the pipe's last writer closes: the copier reads to its end
        copier.join(timeout=5)
        os.close(fd)
        with contextlib.suppress(OSError):
            if path.stat().st_size == 0:
                path.unlink()


def _to_devnull(fd: int) -> None:
    """Point `fd` at /dev/null: the starter's pipe and terminal are let go of (the terminal may close)."""
    null = os.open(os.devnull, os.O_RDWR)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)
