"""Approvals asked on the terminal during `harness run --approval ...` and `harness chat`: one question at a
time, on stderr, the renderer paused while it is on screen.

Layer: CLI, loaded when a run executes; knows the approval events and the run API's `Approver` type; nothing of
any provider. (`harness approve` answers a background run: `runs.approve`.)
"""

from __future__ import annotations

import contextlib
import functools
import os
import select
import sys
import termios
import threading
from collections.abc import Awaitable, Callable

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread

from harness_core import ApprovalDecision, ApprovalRequested
from harness_core.cli.render import Renderer
from harness_core.cli.render.diffview import approval_diff
from harness_core.cli.render.format import tool_label
from harness_core.cli.render.layout import fit_text, output_width
from harness_core.cli.render.terminal import use_plain
from harness_core.cli.render.tools import TERMINAL_REASON

__all__ = ["abandon_questions", "parse_answer", "question", "terminal_approver"]

_ANSWERS = {
    "y": ApprovalDecision.APPROVE, "yes": ApprovalDecision.APPROVE,
    "n": ApprovalDecision.DENY, "no": ApprovalDecision.DENY, "": ApprovalDecision.DENY,
    "a": ApprovalDecision.ABORT, "abort": ApprovalDecision.ABORT,
}


Answer = tuple[ApprovalDecision, str]


def terminal_approver(renderer: Renderer | None) -> Callable[[ApprovalRequested], Awaitable[Answer]]:
    """Ask on the terminal, one request at a time: [y]es approves, [n]o (or Enter) denies, [a]bort stops. The
    decision comes with the reason `TERMINAL_REASON` (the live view says "approved by you")."""
    lock = anyio.Lock()

    def line_ended() -> bool:  # a line of the view (e.g. "interrupting…") already ended the question's line
        return renderer is not None and renderer.prompt_line_ended

    async def approve(request: ApprovalRequested) -> Answer:
        async with lock:
            if renderer is not None:
                renderer.hold()
            try:
                return await _ask(request, line_ended, renderer.cwd if renderer is not None else None), TERMINAL_REASON
            finally:
                if renderer is not None:
                    renderer.release()

    return approve


def question(request: ApprovalRequested, cwd: str | None = None, width: int | None = None) -> str:
    """The question asked for `request`: ``[approval] Running command ls (why) — allow? [y]es / [n]o (Enter) /
    [a]bort: ``; a path inside `cwd` (the run's) reads relative to it, as in the live view. Wider than `width` (a
    terminal's): the action broken between words, the answers whole on the last line."""
    label = tool_label(request.display, cwd=cwd)
    reason = f" ({request.reason})" if request.reason and request.reason not in label else ""
    asked, answers = f"[approval] {label}{reason}", "— allow? [y]es / [n]o (Enter) / [a]bort: "
    if width is None or len(asked) + 1 + len(answers) < width:  # the cursor needs a column after the question
        return f"{asked} {answers}"
    return "\n".join([*fit_text(asked, width - 1), answers])


def parse_answer(line: str) -> ApprovalDecision | None:
    """The decision a typed answer stands for (Enter denies); None for anything else."""
    return _ANSWERS.get(line.strip().lower())


async def _ask(request: ApprovalRequested, line_ended: Callable[[], bool] = lambda: False,
               cwd: str | None = None) -> ApprovalDecision:
    if shown := approval_diff(request.display.changes, colour=not use_plain(sys.stderr), cwd=cwd):
        sys.stderr.write(shown + "\n")  # the change, before the question about it
    while True:
        sys.stderr.write(question(request, cwd, output_width(sys.stderr)))
        sys.stderr.flush()
        line = await _read_terminal_line(line_ended)
        if line is None:
            sys.stderr.write("\n")
            return ApprovalDecision.DENY
        decision = parse_answer(line)
        if decision is not None:
            return decision
        sys.stderr.write("please answer y, n or a\n")


_SLICE = 0.05
"""Seconds between two looks at the cancel flag while the reader waits for a key."""
_JOIN_DEADLINE = 2.0
"""Seconds an abandoned reader gets to notice (it needs one slice)."""
_OPEN: dict[threading.Thread, threading.Event] = {}
"""The readers of the questions waiting for a typed answer, each with its cancel flag."""


def abandon_questions() -> bool:
    """Stop reading the terminal for every question still waiting for an answer (the run or turn that asked it is
    over: the agent withdrew it, or it ended without one), and wait until the readers let go of stdin; what was
    typed for them is dropped. The questions stay unanswered. True when there was one (then it says so on stderr).

    For a caller about to read the terminal itself (the chat's next prompt): no reader may take its keys.
    """
    readers = list(_OPEN.items())
    for _, abandoned in readers:
        abandoned.set()
    for reader, _ in readers:
        reader.join(_JOIN_DEADLINE)
    if readers:
        sys.stderr.write("\n(question withdrawn)\n")
        sys.stderr.flush()
    return bool(readers)


async def _read_terminal_line(line_ended: Callable[[], bool] = lambda: False) -> str | None:
    """One line from stdin without blocking the event loop; None at end of input. `line_ended` says whether
    something else already ended the question's line (then the withdrawal needs no newline of its own).

    A daemon thread reads the file descriptor in short `select()` slices (as the prompt's readline does: nothing is
    left in a Python buffer for it to miss). A question abandoned while the human is still thinking — cancelled
    here, or by `abandon_questions` — stops its reader, and what was typed for it is dropped: nothing of it may
    read, or steal, the keys typed at the next prompt. Abandoned by `abandon_questions`, it waits (unanswered)
    until cancelled.
    """
    token = anyio.lowlevel.current_token()
    answered = anyio.Event()
    abandoned = threading.Event()
    box: list[str | None] = []

    def read() -> None:
        try:
            box.append(_read_line(abandoned))
        finally:
            _OPEN.pop(reader, None)
        if not abandoned.is_set():
            with contextlib.suppress(RuntimeError):  # the event loop is gone: nobody is waiting any more
                anyio.from_thread.run_sync(answered.set, token=token)

    reader = threading.Thread(target=read, name="harness-approval-prompt", daemon=True)
    _OPEN[reader] = abandoned
    reader.start()
    try:
        await answered.wait()
    finally:
        if not abandoned.is_set() and not box:
            abandoned.set()
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(functools.partial(reader.join, _JOIN_DEADLINE))
            sys.stderr.write("(question withdrawn)\n" if line_ended() else "\n(question withdrawn)\n")
            sys.stderr.flush()
    return box[0]


def _read_line(abandoned: threading.Event) -> str | None:
    """The next line typed on stdin (None at end of input, or once `abandoned` is set: then what was typed for the
    question but not sent with Enter is discarded, so it does not turn up at the next prompt)."""
    try:
        fd = sys.stdin.fileno()
    except (OSError, ValueError):  # no descriptor to wait on (a stream in memory): it never blocks
        try:
            return sys.stdin.readline() or None
        except (OSError, ValueError):
            return None
    encoding = getattr(sys.stdin, "encoding", None) or "utf-8"
    typed = b""
    try:
        while not abandoned.is_set():
            ready, _, _ = select.select([fd], [], [], _SLICE)
            if not ready or abandoned.is_set():
                continue
            chunk = os.read(fd, 4096)  # a terminal in canonical mode gives one whole line (or what Ctrl-D sent)
            if not chunk:
                return typed.decode(encoding, errors="replace") or None
            typed += chunk
            if typed.endswith(b"\n"):
                return typed.decode(encoding, errors="replace")
        if os.isatty(fd):
            termios.tcflush(fd, termios.TCIFLUSH)
    except (OSError, ValueError):
        pass
    return None
