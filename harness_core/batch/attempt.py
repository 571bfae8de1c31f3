"""Playing one attempt of a batch in this process (`play_attempt`): what the driver binds every executor to, and
what a Ray worker calls where it plays.

Layer: batch. Knows the run API, `offline_spec` and the executor contract; knows no provider and no engine.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio

from harness_core._run.api import open_run
from harness_core.errors import HarnessError
from harness_core.events import EVENT_ADAPTER, Done, ErrorInfo, HarnessResult, RunStatus
from harness_core.executor import TaskAttempt
from harness_core.files.scratch import Scratch
from harness_core.offline import offline_spec
from harness_core.plugins import PluginHost
from harness_core.spec import AgentRunSpec
from harness_core.tools.reference import load_references

__all__ = ["play_attempt"]


async def play_attempt(attempt: TaskAttempt, interrupted: anyio.Event, *, host: PluginHost | None = None,
                       on_line: Callable[[bytes], None] | None = None) -> HarnessResult:
    """Play `attempt` here: offline against its scenario's scripted backend when it has one, and write its log in
    `attempt.runs_dir` — or, with `on_line`, hand each of the log's lines (secrets scrubbed, no newline) to it and
    write no file here. `interrupted` being set interrupts the run cleanly.

    The result is the one the log's `done` line holds, secrets scrubbed as in every file Harness writes.
    A check that fails before anything is spawned (no CLI, bad options) is a failed result, not an exception, and
    leaves no log: the batch driver checks those before the batch starts.
    """
    with _played_spec(attempt, host) as spec:
        if on_line is None:
            return await _play(spec, attempt, interrupted, host=host, runs_dir=attempt.runs_dir, on_line=None)
        with Scratch("harness-attempt-") as scratch:  # the run's own log, thrown away
            return await _play(spec, attempt, interrupted, host=host, runs_dir=scratch, on_line=on_line)


@contextlib.contextmanager
def _played_spec(attempt: TaskAttempt, host: PluginHost | None) -> Iterator[AgentRunSpec]:
    if attempt.scenario is None:
        yield attempt.spec
        return
    with offline_spec(attempt.spec, attempt.provider, attempt.scenario, host=host) as spec:
        yield spec


async def _play(spec: AgentRunSpec, attempt: TaskAttempt, interrupted: anyio.Event, *, host: PluginHost | None,
                runs_dir: Path, on_line: Callable[[bytes], None] | None) -> HarnessResult:
    try:
        tools = load_references(attempt.tools)  # imported again here, where the attempt plays (a Ray node too)
        async with open_run(spec, attempt.provider, run_id=attempt.run_id, runs_dir=runs_dir, host=host,
                            record_wire=attempt.record_wire, tools=tools) as live:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_interrupt_when, interrupted, live.interrupt)
                take = live.share_log_lines() if on_line is not None else None
                final: bytes | None = None
                async for event in live:
                    line = take(event) if take is not None else None
                    if line is not None and on_line is not None:
                        on_line(line)
                    if type(event) is Done:
                        final = line if line is not None else live.log_line(event)
                result = await live.wait()
                tg.cancel_scope.cancel()
            if final is not None:  # the result as the log holds it: secrets scrubbed (the results file's source)
                done = EVENT_ADAPTER.validate_json(final)
                if isinstance(done, Done):
                    return done.result
            return result
    except HarnessError as exc:  # refused before anything was spawned
        return HarnessResult(status=RunStatus.FAILED, run_id=attempt.run_id, provider=attempt.provider or "",
                             error=ErrorInfo(code=exc.code, message=exc.message, retryable=exc.retryable))


async def _interrupt_when(interrupted: anyio.Event, interrupt: Callable[[], None]) -> None:
    await interrupted.wait()
    interrupt()
