"""`harness approve`'s body: a background run's approval request answered through its answers file; and the
question `harness attach` asks for it (a foreground run asks its own terminal: docs/jobs-and-batches.md).

Layer: CLI, loaded when a command runs; knows the run log's approval events and the answers file
(`harness_core.jobs.answers`); nothing of providers or of the runner.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import click

from harness_core import ApprovalDecision, ApprovalRequested, ApprovalResolved, HarnessEvent, RunStarted
from harness_core.cli.exits import EXIT_FAILED, EXIT_USAGE, fail
from harness_core.cli.foreground.terminal_approvals import parse_answer, question
from harness_core.cli.render import Renderer
from harness_core.cli.render.diffview import approval_diff
from harness_core.cli.render.terminal import use_plain
from harness_core.jobs.answers import AnswersFile, answers_path
from harness_core.store import (
    LogFollower,
    find_run,
    log_path,
    open_approvals,
    pending_approvals,
    resolve_runs_dir,
    summarize,
)

__all__ = ["AnswerHints", "TerminalAnswers", "approve"]

_DECISIONS = {"allow": "approve", "approve": "approve", "deny": "deny", "abort": "abort"}
_SAID = {"approve": "allowed", "deny": "denied", "abort": "aborted"}  # the words of the answer, past tense
_CONFIRM_DEADLINE = 10.0


def approve(run_id: str, request_id: str | None, decision: str | None, runs_dir: Path | None) -> None:
    """Answer an approval request of a background run: `harness approve RUN_ID REQUEST_ID allow|deny|abort`
    (abort denies and stops the turn). With RUN_ID alone, list the requests waiting for an answer.

    RUN_ID and REQUEST_ID may be unique prefixes (RUN_ID also `last`). Exit status: 0 the run took the answer;
    1 it has not taken it in 10 s, or the run is over; 2 no such run or request.
    """

    directory = resolve_runs_dir(runs_dir)
    found = find_run(directory, run_id)
    path = log_path(directory, found)
    answers = answers_path(directory, found)
    if not answers.exists():
        fail(f"run {found} was not started with --background: it asks the terminal that runs it (or its "
             "program's approver), so answer it there", EXIT_USAGE)
    summary = summarize(path)
    status = summary.status
    pending = pending_approvals(path)
    if status not in ("running", "waiting for approval"):
        fail(f"run {found} is over ({status}): there is nothing to approve", EXIT_FAILED)
    if request_id is None:
        if not pending:
            click.echo(f"run {found} has no approval request waiting")
            return

        cwd = _run_cwd(summary.started)
        for rid, request in pending.items():
            click.echo(f"{rid}  {question(request, cwd).removeprefix('[approval] ').split(' — ')[0]}")
            if shown := approval_diff(request.display.changes, colour=not use_plain(sys.stdout), cwd=cwd):
                click.echo("\n".join(f"    {line}" for line in shown.splitlines()))
        click.echo(f"answer with `harness approve {found} REQUEST_ID allow|deny|abort`", err=True)
        return
    if decision is None:
        raise click.UsageError("missing the answer: allow, deny or abort (after REQUEST_ID)")
    matches = [rid for rid in pending if rid == request_id] or [rid for rid in pending if rid.startswith(request_id)]
    if len(matches) != 1:
        waiting = ", ".join(pending) or "none"
        what = "matches several requests" if matches else "is not waiting for an answer"
        fail(f"request {request_id!r} of run {found} {what} (waiting: {waiting}); `harness approve {found}` lists "
             "them", EXIT_USAGE)
    chosen = matches[0]
    mine = ApprovalDecision(_DECISIONS[decision])
    file = AnswersFile(answers)
    file.answer(chosen, mine, by="harness approve")
    resolved = _resolution(path, chosen)
    if resolved is None:
        fail(f"the answer to request {chosen} is recorded, but run {found} has not taken it yet; `harness attach "
             f"{found}` shows what it does", EXIT_FAILED)
    first = file.decisions().get(chosen)
    if resolved != mine:
        who = f" by {first[1]}" if first is not None and first[0] == resolved else ""
        fail(f"request {chosen} of run {found} was answered first{who}: {resolved.value}", EXIT_FAILED)
    click.echo(f"run {found}: request {chosen} {_SAID[resolved.value]}")


def _run_cwd(started: RunStarted | None) -> str | None:
    """The run's working directory, from its `run_started` (paths inside it read relative to it)."""
    cwd = started.spec.get("cwd") if started is not None else None
    return cwd if isinstance(cwd, str) else None


def _resolution(path: Path, request_id: str) -> ApprovalDecision | None:
    """How the run resolved `request_id`, following its log from the start for up to 10 s; None if it has not
    (the run may be busy, or over without it)."""

    deadline = time.monotonic() + _CONFIRM_DEADLINE
    with LogFollower(path, on_bad_line=lambda _bad: None) as follower:
        while time.monotonic() < deadline:
            for event in follower.read():
                if isinstance(event, ApprovalResolved) and event.request_id == request_id:
                    return event.decision
            if follower.over:
                return None
            time.sleep(0.05)
    return None


class _WaitHook:
    """Something `harness attach` polls while it waits for the log (between the view's ticks)."""

    def poll(self) -> None:
        raise NotImplementedError

    def and_then(self, tick: Callable[[], None] | None) -> Callable[[], None]:
        """The view's wait callback: `poll`, then `tick`."""

        def wait() -> None:
            self.poll()
            if tick is not None:
                tick()

        return wait


class TerminalAnswers(_WaitHook):
    """`harness attach` on a terminal, for a background run: ask each open approval request once the view has
    caught up with the log, and write the answer to the run's answers file. Another terminal (or `harness
    approve`) may answer first: then the question is withdrawn. Reading the terminal never blocks the view."""

    def __init__(self, answers: AnswersFile, renderer: Renderer, run_id: str) -> None:
        self._answers = answers
        self._run_id = run_id
        self._renderer = renderer
        self._pending: dict[str, ApprovalRequested] = {}
        self._answered: set[str] = set()
        self._asked: str | None = None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader: threading.Thread | None = None
        self._closed = False

    def feed(self, event: HarnessEvent) -> None:
        if isinstance(event, ApprovalRequested):
            self._pending[event.request_id] = event
        elif isinstance(event, ApprovalResolved):
            self._pending.pop(event.request_id, None)
            if self._asked == event.request_id:
                self._withdraw(f"answered elsewhere: {event.decision.value}")

    def poll(self) -> None:
        """Called while the view waits for the log: ask the next open request, take a typed answer."""
        if self._closed:
            return
        if self._asked is None:
            waiting = [rid for rid in self._pending if rid not in self._answered]
            if not waiting:
                return
            self._ask(waiting[0])
        try:
            line = self._lines.get_nowait()
        except queue.Empty:
            return
        self._take(line)

    def _ask(self, request_id: str) -> None:
        while not self._lines.empty():  # what was typed before the question is not its answer
            if self._lines.get_nowait() is None:
                self._closed = True
        if self._closed:  # the terminal's input ended between two questions
            sys.stderr.write(f"harness: run {self._run_id} waits for approval of {request_id}; no terminal input "
                             f"to ask on: `harness approve {self._run_id} {request_id} allow|deny`\n")
            sys.stderr.flush()
            return

        self._asked = request_id
        self._renderer.hold()
        cwd = self._renderer.cwd
        if shown := approval_diff(self._pending[request_id].display.changes, colour=not use_plain(sys.stderr),
                                  cwd=cwd):
            sys.stderr.write(shown + "\n")  # the change, before the question about it (as `harness run` asks)
        sys.stderr.write(question(self._pending[request_id], cwd))
        sys.stderr.flush()
        if self._reader is None:
            self._reader = threading.Thread(target=self._read, name="harness-attach-answers", daemon=True)
            self._reader.start()

    def _take(self, line: str | None) -> None:
        asked = self._asked
        if asked is None:
            return
        if line is None:
            self._closed = True
            self._withdraw(f"no terminal input; answer with `harness approve {self._run_id} {asked} allow|deny`")
            return
        decision = parse_answer(line)
        if decision is None:
            sys.stderr.write("please answer y, n or a\n" + question(self._pending[asked], self._renderer.cwd))
            sys.stderr.flush()
            return
        try:
            self._answers.answer(asked, decision, by="harness attach")
        except OSError as exc:
            self._withdraw(f"could not record the answer ({exc.strerror or exc}); try `harness approve`")
            return
        self._answered.add(asked)
        self._asked = None
        self._renderer.release()

    def _withdraw(self, why: str) -> None:
        sys.stderr.write(f"\n({why})\n")
        sys.stderr.flush()
        self._asked = None
        self._renderer.release()

    def _read(self) -> None:
        while True:
            try:
                line = sys.stdin.readline()
            except (OSError, ValueError):
                line = ""
            self._lines.put(line or None)
            if not line:
                return


class AnswerHints(_WaitHook):
    """`harness attach` without a terminal to ask on (piped, `--json`), for a background run: once the view has
    caught up with the log, name each request that waits for an answer, once, on stderr, with the command that
    answers it."""

    def __init__(self, run_id: str) -> None:
        self._run_id = run_id
        self._pending: dict[str, ApprovalRequested] = {}
        self._named: set[str] = set()
        self._cwd: str | None = None

    def feed(self, event: HarnessEvent) -> None:
        if isinstance(event, RunStarted):
            self._cwd = _run_cwd(event)
        elif event.type in ("approval_requested", "approval_resolved"):
            self._pending = open_approvals([*self._pending.values(), event])

    def poll(self) -> None:
        for request_id, request in self._pending.items():
            if request_id not in self._named:
                self._named.add(request_id)
                what = question(request, self._cwd).removeprefix("[approval] ").split(" — ")[0]
                sys.stderr.write(f"harness: run {self._run_id} waits for approval of {request_id} ({what}): "
                                 f"`harness approve {self._run_id} {request_id} allow|deny`\n")
                sys.stderr.flush()
