"""The `local` executor: every attempt of a batch played in the driver's own process and event loop, bounded by the
batch's concurrency. The plugin host loads it as a default plugin (`plugins.DEFAULT_PLUGINS`).

Layer: a plugin below the host. Plays what the driver binds it to (`Executor.bind`); knows no run API, no provider.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import anyio

from harness_core.events import HarnessResult
from harness_core.executor import AttemptPlayer, Executor, ExecutorOptions, TaskAttempt
from harness_core.hookspecs import hookimpl

__all__ = ["LocalExecutor", "harness_register_executors"]


class LocalExecutor(Executor):
    """Every attempt a run in this process, under the driver's event loop."""

    name: ClassVar[str] = "local"
    description: ClassVar[str] = "runs every task in this process (anyio), bounded by --concurrency"

    def __init__(self, options: ExecutorOptions | None = None) -> None:
        super().__init__(options)
        self._play_here: AttemptPlayer | None = None

    def bind(self, play_here: AttemptPlayer) -> None:
        self._play_here = play_here

    def describe(self) -> str:
        return "local (this process)"

    async def play(self, attempt: TaskAttempt, interrupted: anyio.Event) -> HarnessResult:
        if self._play_here is None:
            raise RuntimeError("LocalExecutor.play before bind: give the executor to a Batch (or run_batch), which "
                               "binds it")
        return await self._play_here(attempt, interrupted)


@hookimpl
def harness_register_executors(register: Callable[[type[Executor]], None]) -> None:
    """The default plugin `local` (`harness_core.plugins.DEFAULT_PLUGINS`)."""
    register(LocalExecutor)
