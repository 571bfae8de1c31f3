"""What `harness batch` shows while it plays: on a terminal a live progress bar (rich) and a line per task that did
not succeed; off a terminal a plain line per task. Everything goes to stderr: stdout is for `--json`.

Layer: CLI, loaded when `harness batch` runs; knows the batch's stats and updates, nothing of providers or engines.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn

if TYPE_CHECKING:
    from harness_core.batch import BatchStats, BatchUpdate, TaskResult

__all__ = ["BatchView", "clock", "outcome_line"]


def clock(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 3600:
        return f"{seconds // 60}:{seconds % 60:02d}"
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def outcome_line(result: TaskResult, label: str | None = None) -> str:
    """One line for a finished cell: its label (the task id, or `id [provider, model, attempt N]`), status, error,
    tries, its verifier's verdict, run id (for `harness show`)."""
    said: str = result.status
    if result.error_code and result.error_code != result.status:  # not "interrupted (interrupted)"
        said += f" ({result.error_code})"
    if result.attempts > 1:
        said += f" after {result.attempts} attempts"
    changed = f", {len(result.files_changed)} file(s) changed" if result.files_changed else ""
    verdict = ""
    if result.ok and result.verified is not None:
        reward = f"reward {result.reward:g}" if result.reward is not None else "no reward"
        verdict = f", {'passed' if result.verified else 'not passed'} ({reward})"
    why = _one_line(result.error) if result.error and not result.ok else \
        _one_line(result.verification.reason) if result.ok and result.verification and result.verification.reason \
        else ""
    return f"{label or result.id}: {said}{changed}{verdict} [run {result.run_id}]" + (f": {why}" if why else "")


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _console(stream: TextIO) -> Any:
    """A rich console on `stream` that never hides the cursor: a batch killed (SIGKILL) while its progress bar is
    up cannot show it again, and the terminal would be left without one."""

    class CursorKept(Console):
        def show_cursor(self, show: bool = True) -> bool:
            return True

    return CursorKept(file=stream)


class BatchView:
    """The progress display; `update` is the batch's `on_update`, `refresh` is called a few times a second."""

    def __init__(self, stats: BatchStats, *, engine: str, live: bool | None = None, stream: TextIO | None = None,
                 verbose: bool = False) -> None:
        self.stats = stats
        self.engine = engine
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.verbose = verbose
        self._progress: Any = None
        self._bar: Any = None

    def __enter__(self) -> BatchView:
        if self.live:
            console = _console(self.stream)
            self._progress = Progress(
                SpinnerColumn(), TextColumn("[bold]batch[/]"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"), TextColumn("{task.fields[clock]}"),
                console=console, transient=True, refresh_per_second=4,  # the summary, said last, replaces it
                # --json lines printed while the bar shows: above it on the terminal, but to the file or pipe
                # stdout is when it is one (rich would take them to the bar's stream)
                redirect_stdout=sys.stdout.isatty(),
            )
            self._progress.__enter__()
            self._bar = self._progress.add_task("batch", total=self._todo(), counts="", clock="")
            self.refresh()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._progress is not None:
            self.refresh()
            self._progress.__exit__(kind, exc, tb)
            self._progress = None

    def _todo(self) -> int:
        return self.stats.total - self.stats.skipped

    def say(self, text: str) -> None:
        if self._progress is not None:
            self._progress.console.print(text, markup=False, highlight=False)
        else:
            print(f"harness: {text}", file=self.stream, flush=True)

    def update(self, update: BatchUpdate) -> None:
        name = update.label or update.task_id
        if update.kind == "finished" and update.result is not None:
            result = update.result
            if not result.ok or result.verified is False or not self.live or self.verbose:
                self.say(outcome_line(result, name))
        elif update.kind == "retrying" and update.error is not None:
            self.say(f"{name}: try {update.attempt} failed ({update.error.code}); retrying in "
                     f"{update.delay:.1f} s [run {update.run_id}]")
        elif update.kind == "started" and self.verbose and not self.live:
            self.say(f"{name}: started try {update.attempt} [run {update.run_id}]")
        elif update.kind == "verifying" and self.verbose and not self.live:
            self.say(f"{name}: verifying [run {update.run_id}]")
        self.refresh()

    def counts(self) -> str:
        s = self.stats
        parts = [f"{s.succeeded} ok", f"{s.failed} failed"]
        if s.interrupted:
            parts.append(f"{s.interrupted} interrupted")
        if s.verifiers:
            parts.append(f"{s.passed} passed of {s.passed + s.not_passed} verified")
        parts += [f"{s.running - s.verifying} running", f"{s.queued} queued"]  # a cell verifying is not running
        if s.verifying:
            parts.append(f"{s.verifying} verifying")
        if s.retries:
            parts.append(f"{s.retries} retries")
        if s.cost_usd:
            parts.append(f"${s.cost_usd:.4f}")
        return " · ".join(parts)

    def eta(self) -> float | None:
        """Seconds until the queue is through at the pace so far (None before the first task ends)."""
        s = self.stats
        if not s.durations or s.done == 0:
            return None
        elapsed = time.monotonic() - s.started
        left = s.queued + s.running
        return elapsed / s.done * left

    def refresh(self) -> None:
        if self._progress is None:
            return
        elapsed = time.monotonic() - self.stats.started
        eta = self.eta()
        shown = f"{clock(elapsed)} elapsed" + (f", ETA {clock(eta)}" if eta is not None else "")
        self._progress.update(self._bar, completed=self.stats.done, total=self._todo(), counts=self.counts(),
                              clock=shown)
