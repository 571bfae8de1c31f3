"""The executor interface: what runs one attempt of a batch task somewhere (this process, a Ray cluster, ...).

Layer: plugin contract (beside `hookspecs` and the provider interface), found like providers through
`harness_register_executors`. Knows the spec, result, scenario and tool-reference models; knows no plugin host,
no provider and no engine. What the driver keeps and what an executor owes it: docs/jobs-and-batches.md (executors).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import anyio
from pydantic import BaseModel, ConfigDict, ValidationError

from harness_core.errors import HarnessError, InvalidSpecError
from harness_core.events import HarnessResult
from harness_core.scripted.scenarios import Scenario
from harness_core.spec import AgentRunSpec
from harness_core.tools.reference import ToolReference

__all__ = ["AttemptPlayer", "Executor", "ExecutorOptions", "TaskAttempt", "WorkerLostError"]


class WorkerLostError(HarnessError):
    """The process or node playing an attempt went away before the attempt ended (a crashed or killed worker).
    Retryable: the driver plays the attempt again when the batch allows retries."""

    code = "worker_lost"
    retryable = True


@dataclass(frozen=True)
class TaskAttempt:
    """One attempt at one task, as an executor gets it (plain data: it pickles, for engines that ship it)."""

    task_id: str
    attempt: int
    """1 for the first attempt, 2 for the first retry, ..."""
    run_id: str
    spec: AgentRunSpec
    """The spec to play, its `cwd` the task's workspace (prepared by the driver)."""
    provider: str | None
    runs_dir: Path
    """The driver's runs directory, where the attempt's log must be (`<runs_dir>/<run_id>.jsonl`)."""
    scenario: Scenario | None = None
    """Offline: what the scripted model plays (the executor starts the provider's backend where it plays)."""
    record_wire: bool = False
    tools: tuple[ToolReference, ...] = ()
    """The Python tools of the run, by reference (the function's `module:qualname` and the tool's options): made
    again where the attempt plays (`harness_core.tools.reference.load_references`)."""


AttemptPlayer = Callable[[TaskAttempt, anyio.Event], Awaitable[HarnessResult]]
"""How the driver plays one attempt in its own process (`harness_core.batch.play_attempt` with the batch's plugin
host): `await play_here(attempt, interrupted)`."""


class ExecutorOptions(BaseModel):
    """An executor's options (`harness batch -E KEY=VALUE`); subclasses add fields. Unknown keys are refused."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Executor(ABC):
    """Plays attempts. The driver calls `start` once, `play` for each attempt (many at once, up to the batch's
    concurrency), and `close` once, also after an error or an interrupt."""

    name: ClassVar[str]
    description: ClassVar[str] = ""
    options_model: ClassVar[type[ExecutorOptions]] = ExecutorOptions

    def __init__(self, options: ExecutorOptions | None = None) -> None:
        self.options = options if options is not None else self.options_model()

    def bind(self, play_here: AttemptPlayer) -> None:  # noqa: B027 - optional: an engine playing elsewhere has its own
        """Told how to play an attempt in this process (with the plugin host the batch found its providers with),
        before `start`; an engine playing attempts here calls it."""

    @classmethod
    def parse_options(cls, raw: dict[str, Any]) -> ExecutorOptions:
        """`raw` (from `-E KEY=VALUE` or Python) as this executor's options.

        Raises:
            InvalidSpecError: naming each bad key and what the executor takes.
        """
        try:
            return cls.options_model.model_validate(raw)
        except ValidationError as exc:
            known = ", ".join(cls.options_model.model_fields) or "none"
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'options'}: {e['msg']}" for e in exc.errors())
            raise InvalidSpecError(f"invalid options for executor {cls.name!r}: {problems} (it takes: {known})") \
                from None

    async def start(self) -> None:  # noqa: B027 - optional: an engine with nothing to start has no start
        """Get ready to play (connect to or start a cluster). Raises a `HarnessError` saying what to do if it
        cannot."""

    def describe(self) -> str:
        """One line for the progress display: where attempts play."""
        return self.name

    @abstractmethod
    async def play(self, attempt: TaskAttempt, interrupted: anyio.Event) -> HarnessResult:
        """Play `attempt` to its end and return its result; its log is in `attempt.runs_dir` by then. When
        `interrupted` is set, interrupt the run cleanly (its result is then `interrupted`, its log complete).
        Failures of the run are in the result; raise only for what the executor itself could not do (a lost
        worker: `harness_core.batch.WorkerLostError`, which the driver records and may retry)."""

    async def close(self) -> None:  # noqa: B027 - optional, as `start`
        """Release what `start` took (idempotent)."""
