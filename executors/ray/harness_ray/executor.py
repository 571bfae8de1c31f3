"""The `ray` executor: each attempt a Ray task (a streaming generator) on a node offering the resources asked for;
its log lines come back as the task's items and are written here, in the driver's runs directory.

Layer: executor plugin (the driver side). Knows the executor interface, the run store's writer and the event
models; knows no provider. Ray is imported in `start`, not before.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import anyio
import anyio.to_thread
from harness_core import (
    EVENT_ADAPTER,
    Done,
    ErrorEvent,
    ErrorInfo,
    HarnessError,
    HarnessEvent,
    HarnessResult,
    InvalidSpecError,
    RunStatus,
    SpawnFailedError,
)
from harness_core.batch import Executor, ExecutorOptions, TaskAttempt, WorkerLostError
from harness_core.store import LogWriter, log_path

from harness_ray.cluster import RAY_MISSING, Cluster, connect, ray_installed
from harness_ray.options import RayOptions

__all__ = ["Placement", "RayExecutor"]

_STEP = 1.0  # seconds one wait for the next item may block a thread
_GET_TIMEOUT = 120.0  # an item known to be ready, fetched from its node


@dataclass(frozen=True)
class Placement:
    """Where an attempt plays: the Ray worker process and its node."""

    pid: int
    node_id: str
    node_ip: str


class RayExecutor(Executor):
    """Every attempt a Ray task, its log streamed back (see the module docstring)."""

    name: ClassVar[str] = "ray"
    description: ClassVar[str] = "runs every task as a Ray task on a node that has the agent CLI (harness-ray)"
    options_model: ClassVar[type[ExecutorOptions]] = RayOptions

    def __init__(self, options: ExecutorOptions | None = None) -> None:
        """Raises: InvalidSpecError: Ray itself is not installed (an extra: the message says how to add it)."""
        if not ray_installed():
            raise InvalidSpecError(RAY_MISSING)
        super().__init__(options)
        self.placements: dict[str, Placement] = {}
        """Run id → where it played (filled as each attempt starts on its node)."""
        self._cluster: Cluster | None = None
        self._switch: Any = None
        self._remote: Any = None
        self._task_options: dict[str, Any] = {}
        self._limiter = anyio.CapacityLimiter(64)

    @property
    def ray_options(self) -> RayOptions:
        assert isinstance(self.options, RayOptions)
        return self.options

    async def start(self) -> None:
        """Join or start the cluster, check that a node offers what each attempt asks for, and make the switch
        that interrupts attempts.

        Raises:
            SpawnFailedError: the cluster cannot be reached or started, or no node offers the resources.
            InvalidSpecError: a bad `address`.
        """
        if self._cluster is not None:
            return
        opts = self.ray_options
        # ray.init must run on the main thread (in another it hangs): it blocks this loop for its few seconds
        self._cluster = connect(opts.address, local_cpus=opts.local_cpus, connect_timeout=opts.connect_timeout)
        try:
            import ray

            from harness_ray.worker import InterruptSwitch, play_remote

            _check_resources(cast(Any, ray).cluster_resources(), opts)
            self._switch = InterruptSwitch.remote()  # type: ignore[attr-defined]
            self._remote = ray.remote(play_remote)
            self._task_options = {"num_returns": "streaming", "max_retries": 0, "num_cpus": opts.num_cpus,
                                  "resources": dict(opts.resources),
                                  "_generator_backpressure_num_objects": opts.backpressure}
            await anyio.to_thread.run_sync(lambda: ray.get(self._switch.ping.remote(), timeout=60))
        except BaseException:
            await self.close()
            raise

    def describe(self) -> str:
        if self._cluster is not None:
            return self._cluster.describe()
        address = self.ray_options.address
        return f"ray at {address}" if address is not None else "ray (local cluster)"  # asked before `start`

    async def close(self) -> None:
        cluster, self._cluster = self._cluster, None
        self._switch = self._remote = None
        if cluster is not None:
            await anyio.to_thread.run_sync(cluster.close)

    async def play(self, attempt: TaskAttempt, interrupted: anyio.Event) -> HarnessResult:
        if self._remote is None:
            raise SpawnFailedError("the ray executor is not started: call `await executor.start()` first")
        import ray

        stream = _Stream(attempt)
        gen = self._remote.options(name=f"harness:{attempt.task_id}#{attempt.attempt}", **self._task_options).remote(
            attempt, self._switch, self.ray_options.batch_bytes)
        outcome: list[HarnessResult | WorkerLostError] = []
        try:
            async with anyio.create_task_group() as tg:  # raising in here would come out as an ExceptionGroup
                tg.start_soon(self._relay_interrupt, interrupted, attempt.run_id)
                try:
                    outcome.append(await self._follow(gen, attempt, stream))
                except WorkerLostError as exc:
                    outcome.append(exc)
                finally:
                    tg.cancel_scope.cancel()
            if isinstance(outcome[0], WorkerLostError):
                raise outcome[0]
            return outcome[0]
        except anyio.get_cancelled_exc_class():
            ray.cancel(gen, force=True)  # a hard stop: the node's run is killed, its log ended here
            stream.end(RunStatus.INTERRUPTED, ErrorInfo(code="interrupted", message="the batch was stopped at once: "
                                                        "the attempt's Ray task was cancelled"))
            raise
        finally:
            stream.close()

    async def _follow(self, gen: Any, attempt: TaskAttempt, stream: _Stream) -> HarnessResult:
        from ray.exceptions import RayError, RayTaskError

        deadline = time.monotonic() + self.ray_options.schedule_timeout
        returned: HarnessResult | None = None
        while True:
            try:
                item = await anyio.to_thread.run_sync(_next_item, gen, limiter=self._limiter,
                                                      abandon_on_cancel=True)
            except RayTaskError as exc:  # the attempt's own code raised on the node
                cause = exc.cause if isinstance(exc.cause, BaseException) else exc
                if _is_lost(cause):
                    raise self._lost(stream, cause) from exc
                stream.end(RunStatus.FAILED, ErrorInfo(code="executor_error", message=f"the Ray task failed: "
                                                       f"{type(cause).__name__}: {cause}"))
                return stream.result(attempt)
            except RayError as exc:  # the worker, its node or the attempt's objects are gone
                raise self._lost(stream, exc) from exc
            if item is None:
                if not self.placements.get(attempt.run_id) and time.monotonic() > deadline:
                    import ray

                    ray.cancel(gen, force=True)
                    raise WorkerLostError(f"no Ray node took the attempt within {self.ray_options.schedule_timeout:g}"
                                          " s: check `ray status` for free CPUs and the resources "
                                          f"{dict(self.ray_options.resources) or '(none)'}, or raise "
                                          "-E schedule_timeout")
                continue
            kind, payload = item
            if kind == "end":
                break
            if kind == "hello":
                self.placements[attempt.run_id] = Placement(int(payload["pid"]), str(payload["node_id"]),
                                                            str(payload["node_ip"]))
            elif kind == "lines":
                stream.write(payload)
            elif kind == "result":
                returned = HarnessResult.model_validate_json(payload)
        if stream.done is not None:
            return stream.done
        if returned is not None and stream.last_seq < 0:  # refused before anything was spawned: no log
            return returned
        raise self._lost(stream, RuntimeError("the attempt's stream ended before its `done` event"))

    def _lost(self, stream: _Stream, cause: BaseException) -> WorkerLostError:
        where = self.placements.get(stream.attempt.run_id)
        place = f" (worker pid {where.pid} on {where.node_ip})" if where is not None else ""
        error = WorkerLostError(f"the Ray worker playing {stream.attempt.task_id!r}{place} went away mid-attempt: "
                                f"{type(cause).__name__}: {_first_line(cause)}; --retry N plays it again")
        stream.end(RunStatus.FAILED, error.to_info())
        return error

    async def _relay_interrupt(self, interrupted: anyio.Event, run_id: str) -> None:
        await interrupted.wait()
        switch = self._switch
        if switch is not None:
            switch.interrupt.remote(run_id)


def _next_item(gen: Any) -> tuple[str, Any] | None:
    """The next item of `gen` (("end", None) past the last), or None when none came within `_STEP`."""
    import ray

    try:
        ref = gen._next_sync(timeout_s=_STEP)
    except StopIteration:
        return ("end", None)
    if ref.is_nil():
        return None
    item: tuple[str, Any] = ray.get(ref, timeout=_GET_TIMEOUT)
    return item


def _is_lost(exc: BaseException) -> bool:
    from ray.exceptions import RayError

    return isinstance(exc, RayError) and not isinstance(exc, HarnessError)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _check_resources(total: dict[str, float], opts: RayOptions) -> None:
    wanted = {"CPU": opts.num_cpus, **opts.resources}
    missing = {k: v for k, v in wanted.items() if v > 0 and total.get(k, 0.0) < v}
    if missing:
        have = ", ".join(f"{k}={v:g}" for k, v in sorted(total.items()) if not k.startswith(("node:", "memory",
                                                                                             "object_store")))
        raise SpawnFailedError(f"no node of the Ray cluster offers {missing} (it has: {have or 'nothing'}); start "
                               "nodes that have the agent CLI with `ray start --address HEAD:6379 --resources "
                               "'{\"NAME\": N}'`, or change -E resources / -E num_cpus")


class _Stream:
    """The attempt's log in the driver's runs directory, written as its lines arrive."""

    def __init__(self, attempt: TaskAttempt) -> None:
        self.attempt = attempt
        self.last_seq = -1
        self.provider = attempt.provider or ""
        self.done: HarnessResult | None = None
        self._writer: LogWriter | None = None

    def write(self, lines: list[bytes]) -> None:
        if not lines:
            return
        if self._writer is None:
            self._writer = LogWriter(log_path(self.attempt.runs_dir, self.attempt.run_id))
        for line in lines:
            self._writer.write_line(line)
        self._writer.flush()
        if self.last_seq < 0:
            first = EVENT_ADAPTER.validate_json(lines[0])
            self.provider = getattr(first, "provider", None) or self.provider
        last = EVENT_ADAPTER.validate_json(lines[-1])
        self.last_seq = last.seq
        if isinstance(last, Done):
            self.done = last.result

    def end(self, status: RunStatus, error: ErrorInfo) -> None:
        """Complete a log the node could not finish: an `error` and a `done` (once; not after a `done`)."""
        if self.done is not None:
            return
        result = self.result_of(status, error)
        events: list[HarnessEvent] = [ErrorEvent(error=error), Done(result=result)]
        lines = []
        for event in events:
            self.last_seq += 1
            stamped = event.model_copy(update={"run_id": self.attempt.run_id, "seq": self.last_seq, "ts": time.time()})
            lines.append(stamped.model_dump_json().encode())
        if self._writer is None:
            self._writer = LogWriter(log_path(self.attempt.runs_dir, self.attempt.run_id))
        for line in lines:
            self._writer.write_line(line)
        self._writer.flush()
        self.done = result

    def result_of(self, status: RunStatus, error: ErrorInfo) -> HarnessResult:
        return HarnessResult(status=status, run_id=self.attempt.run_id, provider=self.provider, error=error)

    def result(self, attempt: TaskAttempt) -> HarnessResult:
        assert self.done is not None
        return self.done

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

