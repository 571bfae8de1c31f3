"""What runs on a Ray node: one attempt played with `harness_core.batch.play_attempt`, its log's lines streamed back
as the items of a Ray streaming generator (listed in executors/ray/README.md); and the interrupt actor.

Layer: executor plugin (the node side). Knows the batch executor contract (`play_attempt`, `TaskAttempt`) and
Ray; knows no provider and nothing of the driver's files (the driver writes the log, this side writes nothing).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections import deque
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import ray
from harness_core import HarnessResult
from harness_core.batch import TaskAttempt, play_attempt

__all__ = ["InterruptSwitch", "play_remote"]

_ray: Any = ray  # Ray's annotations are partial: its calls are typed as Any here

Item = tuple[str, Any]
_POLL = 0.1  # seconds between looks at the interrupt switch while no line comes
_JOIN_GRACE = 60.0  # after an interrupt, how long the run may take to end before the worker gives up on it


class _Outbox:
    """Lines from the run's thread to the generator, and the run's end."""

    def __init__(self) -> None:
        self._lines: deque[bytes] = deque()
        self._ready = threading.Condition()
        self.result: HarnessResult | None = None
        self.failure: BaseException | None = None
        self.finished = False

    def put(self, line: bytes) -> None:
        with self._ready:
            self._lines.append(line)
            self._ready.notify()

    def finish(self, result: HarnessResult | None, failure: BaseException | None) -> None:
        with self._ready:
            self.result, self.failure, self.finished = result, failure, True
            self._ready.notify()

    def take(self, max_bytes: int, timeout: float) -> tuple[list[bytes], bool]:
        """Every line available (waiting up to `timeout` for the first), up to about `max_bytes`; and whether
        the run is over with nothing left to take."""
        with self._ready:
            if not self._lines and not self.finished:
                self._ready.wait(timeout)
            batch: list[bytes] = []
            size = 0
            while self._lines and (not batch or size + len(self._lines[0]) <= max_bytes):
                line = self._lines.popleft()
                batch.append(line)
                size += len(line) + 1
            return batch, self.finished and not self._lines


class _Run:
    """The attempt's run, under its own anyio event loop in a thread of this worker."""

    def __init__(self, attempt: TaskAttempt, outbox: _Outbox) -> None:
        self._attempt = attempt
        self._outbox = outbox
        self._token: Any = None
        self._interrupted: anyio.Event | None = None
        self._started = threading.Event()
        self._asked = threading.Event()
        self.thread = threading.Thread(target=self._main, name=f"harness-{attempt.run_id}", daemon=True)

    def start(self) -> None:
        self.thread.start()
        self._started.wait(30.0)

    def _main(self) -> None:
        try:
            result = anyio.run(self._play)
        except BaseException as exc:  # noqa: BLE001 - handed to the generator, which re-raises it on the node
            self._outbox.finish(None, exc)
        else:
            self._outbox.finish(result, None)

    async def _play(self) -> HarnessResult:
        self._interrupted = anyio.Event()
        self._token = anyio.lowlevel.current_token()
        self._started.set()
        if self._asked.is_set():
            self._interrupted.set()
        return await play_attempt(self._attempt, self._interrupted, on_line=self._outbox.put)

    def interrupt(self) -> None:
        """Interrupt the run cleanly (from any thread; idempotent)."""
        if self._asked.is_set():
            return
        self._asked.set()
        event, token = self._interrupted, self._token
        if event is None or token is None or self._outbox.finished:
            return
        with contextlib.suppress(RuntimeError):  # its loop has just ended: nothing left to interrupt
            anyio.from_thread.run_sync(event.set, token=token)


def play_remote(attempt: TaskAttempt, switch: Any, max_bytes: int) -> Iterator[Item]:
    """The body of the Ray task (what it yields: executors/ray/README.md, "What streams back"). `switch` is the
    driver's `InterruptSwitch`: once it says this run is interrupted, the run is interrupted cleanly and its
    remaining lines, `done` included, still stream back. A Ray cancellation does the same."""
    context = ray.get_runtime_context()
    yield ("hello", {"pid": os.getpid(), "node_id": context.get_node_id(),
                     "node_ip": _ray.util.get_node_ip_address()})
    outbox = _Outbox()
    run = _Run(attempt, outbox)
    stop = switch.wait.remote(attempt.run_id)
    run.start()
    try:
        while True:
            try:
                batch, over = outbox.take(max_bytes, _POLL)
                if batch:
                    yield ("lines", batch)
                if over:
                    break
                ready, _ = ray.wait([stop], timeout=0)
                if ready:
                    run.interrupt()
            except KeyboardInterrupt:  # ray.cancel(ref): interrupt the run, stream the rest as ever
                run.interrupt()
        if outbox.failure is not None:
            raise outbox.failure
        assert outbox.result is not None
        yield ("result", outbox.result.model_dump_json())
    finally:
        if run.thread.is_alive():  # the driver let go early: no run may outlive the task
            run.interrupt()
            run.thread.join(_JOIN_GRACE)
        switch.forget.remote(attempt.run_id)  # its waiter, if the run ended on its own


@_ray.remote(num_cpus=0, max_restarts=0, max_concurrency=10_000)
class InterruptSwitch:
    """The driver's interrupts, for the nodes: `wait(run_id)` returns once that run (or every run) is
    interrupted."""

    def __init__(self) -> None:
        self._runs: dict[str, asyncio.Event] = {}
        self._all = asyncio.Event()

    def _event(self, run_id: str) -> asyncio.Event:
        return self._runs.setdefault(run_id, asyncio.Event())

    async def wait(self, run_id: str) -> bool:
        mine = asyncio.ensure_future(self._event(run_id).wait())
        every = asyncio.ensure_future(self._all.wait())
        try:
            await asyncio.wait({mine, every}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            mine.cancel()
            every.cancel()
            self._runs.pop(run_id, None)
        return True

    async def interrupt(self, run_id: str | None = None) -> None:
        """Interrupt run `run_id` (None: every run, also those not started yet)."""
        if run_id is None:
            self._all.set()
        else:
            self._event(run_id).set()

    async def forget(self, run_id: str) -> None:
        """The run is over: release its waiter."""
        event = self._runs.pop(run_id, None)
        if event is not None:
            event.set()

    async def ping(self) -> bool:
        return True
