"""A batch's results: one `TaskResult` per task, and the JSONL file they go to, which also makes a batch resumable.

Layer: batch (storage edge). Knows the result and usage models; knows no provider, executor or task source.
Every line is written whole and fsynced as the task ends, to a file created 0600 (the caller scrubs it), so a
batch killed at any instant leaves a file whose complete lines are all true (a torn last one is dropped).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness_core.errors import InvalidSpecError, LogWriteFailedError
from harness_core.events import HarnessResult, RunStatus, Usage
from harness_core.files.inputs import InputFileError, read_input
from harness_core.files.private import append_private

__all__ = ["FINISHED", "PASS_REWARD", "ResultsFile", "TaskResult", "TaskStatus", "Verification"]

TaskStatus = Literal["success", "failed", "interrupted"]
FINISHED: frozenset[str] = frozenset({"success", "failed"})
"""Statuses a re-run skips; an interrupted task runs again."""


PASS_REWARD = 1.0
"""A verified cell passed when its reward is at least this (full marks; pass rates and pass@k count these)."""


class Verification(BaseModel):
    """How a cell's verifier went: the command the task's `verify` ran in its workspace after the agent."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    ran: bool = Field(description="False: not run (the agent's run failed, or the batch was stopped); `reason`.")
    exit_code: int | None = Field(default=None, description="The verifier's exit status (None: killed or not run).")
    duration_ms: int = 0
    output_tail: str = Field(default="", description="The end of its output (stdout and stderr), secrets hidden.")
    output: str | None = Field(default=None, description="The file holding its whole output, beside the run log.")
    reason: str | None = Field(default=None, description="Why it gave no verdict or failed (timed out, crashed, "
                                                         "an unreadable reward file, the run failed), with the "
                                                         "next step.")
    verdict: bool = Field(default=False, description="True: the verifier decided a reward (the reward file it "
                                                     "wrote, else its exit status). False: no verdict (not run, "
                                                     "could not start, timed out, an unreadable or ambiguous "
                                                     "reward, no reward file where one is needed): `reason` says "
                                                     "why; `--rerun-failed` plays the cell again.")


class TaskResult(BaseModel):
    """What became of one cell of a batch (a task, played by one provider and model, one of its attempts): its
    last try's outcome (retries of transient failures are tries of the same cell), what every try cost together,
    and its verification."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    run_id: str = Field(description="The last attempt's run (its log: `harness show RUN_ID`).")
    status: TaskStatus
    provider: str = ""
    error_code: str | None = None
    error: str | None = Field(default=None, description="The last attempt's error message.")
    retryable: bool = False
    attempts: int = Field(default=1, description="Tries of this cell: 1 + the retries of transient failures.")
    run_ids: tuple[str, ...] = Field(default=(), description="Every attempt's run, in order.")
    usage: Usage = Field(default_factory=Usage, description="Summed over the attempts.")
    cost_usd: float | None = Field(default=None, description="Summed over the attempts that reported one.")
    duration_ms: int = Field(default=0, description="From the first attempt's start to the last one's end.")
    files_changed: tuple[str, ...] = ()
    final_text: str = ""
    patch: str | None = Field(default=None, description="The task's patch file (with --patches).")
    attempt: int = Field(default=1, description="Which of the batch's `--attempts` this cell is (1-based).")
    model: str | None = Field(default=None, description="The model the cell asked for (None: the provider's "
                                                        "default).")
    verified: bool | None = Field(default=None, description="None: the task has no verifier. True: the verifier "
                                                            "ran and its reward is at least PASS_REWARD.")
    reward: float | None = Field(default=None, description="The verifier's reward: reward.json's `reward` (else "
                                                           "its only number; several and no `reward`: no verdict), "
                                                           "else reward.txt, else 1.0 for exit status 0 and 0.0 "
                                                           "otherwise; 0.0 when the run failed (but for an agent "
                                                           "timeout, which is verified) or the verifier gave no "
                                                           "verdict (`verification.verdict`).")
    rewards: dict[str, float] | None = Field(default=None, description="reward.json's named numbers.")
    verification: Verification | None = None

    @property
    def cell(self) -> tuple[str, str, str, int]:
        """What a re-run of the batch matches results by: task id, provider, model ('' for the default), attempt."""
        return self.id, self.provider, self.model or "", self.attempt

    @property
    def ok(self) -> bool:
        return self.status == "success"

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @classmethod
    def of(cls, task_id: str, results: list[HarnessResult], *, duration_ms: int, patch: str | None = None,
           files_changed: tuple[str, ...] | None = None) -> TaskResult:
        """The result of a task from its attempts' results (the last decides)."""
        last = results[-1]
        usage = Usage()
        for each in results:
            usage = usage + each.usage
        status: TaskStatus = ("success" if last.status is RunStatus.SUCCESS else
                              "interrupted" if last.status is RunStatus.INTERRUPTED else "failed")
        return cls(id=task_id, run_id=last.run_id, status=status, provider=last.provider,
                   error_code=last.error.code if last.error else None,
                   error=last.error.message if last.error else None,
                   retryable=bool(last.error and last.error.retryable), attempts=len(results),
                   run_ids=tuple(r.run_id for r in results), usage=usage, cost_usd=usage.cost_usd,
                   duration_ms=duration_ms,
                   files_changed=last.files_changed if files_changed is None else files_changed,
                   final_text=last.final_text, patch=patch)


RESULTS_LIMIT = 1 << 30
"""A results file read to resume a batch holds at most this many bytes."""


class ResultsFile:
    """The results JSONL of a batch: the finished results it holds (read once, at open), and appends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.earlier: dict[tuple[str, str, str, int], TaskResult] = {}
        """The last result of each cell already in the file (finished or interrupted), by `TaskResult.cell`."""
        try:
            # unbuffered: a failed write leaves nothing behind
            self._handle = os.fdopen(append_private(path), "ab", buffering=0)
        except OSError as exc:
            raise InvalidSpecError(f"cannot write the results file {path}: {exc}; pass --results with a path you "
                                   "can write") from None
        try:  # one batch at a time per results file: two would both play every task
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._handle.close()
            raise InvalidSpecError(f"another batch is using the results file {path}; wait for it to end, or pass "
                                   "another --results") from None
        self._read()

    def finished(self) -> dict[tuple[str, str, str, int], TaskResult]:
        """Cells a re-run skips, by `TaskResult.cell`: their last result in the file is `success` or `failed`."""
        return {cell: r for cell, r in self.earlier.items() if r.finished}

    def write(self, result: TaskResult) -> None:
        """Append `result` (one line, synced to disk).

        Raises:
            LogWriteFailedError: the line could not be written (a full disk); the file keeps its complete lines.
        """
        line = result.model_dump_json(exclude_none=False).encode() + b"\n"
        with self._lock:
            fd = self._handle.fileno()
            size = os.fstat(fd).st_size
            try:
                done = 0
                while done < len(line):
                    done += os.write(fd, line[done:])
                os.fsync(fd)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)  # no torn line: the next batch reads the file whole
                raise LogWriteFailedError(self.path, exc, what="the batch's results file",
                                          outcome="the batch was stopped (the file keeps the results written "
                                                  "before; a re-run plays the rest)") from None

    def close(self) -> None:
        with self._lock:
            if not self._handle.closed:
                self._handle.close()

    def _read(self) -> None:
        if not self.path.exists():
            return
        try:
            data = read_input(self.path, what="the results file", limit=RESULTS_LIMIT)
        except InputFileError as exc:
            raise InvalidSpecError(f"{exc.message}; pass another --results path") from None
        lines = data.split(b"\n")
        torn = lines.pop()  # after the last newline: empty, or a line a killed batch did not finish
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                result = TaskResult.model_validate(json.loads(line))
            except (ValueError, ValidationError):
                raise InvalidSpecError(
                    f"{self.path} line {number} is not a task result; is it a batch's results file? Pass another "
                    "--results path (or remove the line)") from None
            self.earlier[result.cell] = result
        if torn.strip():  # truncate it, so the next line written starts on a line of its own
            with self.path.open("r+b") as handle:
                handle.truncate(len(data) - len(torn))
