"""Approvals asked on the terminal during `harness run --approval ...`: one question at a time, on stderr.

Layer: CLI (imported only when a run executes). Knows the approval events and the `Approver` callback type of
the run API, and the renderer it must pause while a question is on screen; nothing of any provider.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Awaitable, Callable

import anyio
import anyio.from_thread
import anyio.lowlevel

from harness_core import ApprovalDecision, ApprovalRequested
from harness_core.cli._format import tool_label
from harness_core.cli.render import Renderer

__all__ = ["parse_answer", "question", "terminal_approver"]

_ANSWERS = {
    "y": ApprovalDecision.APPROVE, "yes": ApprovalDecision.APPROVE,
    "n": ApprovalDecision.DENY, "no": ApprovalDecision.DENY, "": ApprovalDecision.DENY,
    "a": ApprovalDecision.ABORT, "abort": ApprovalDecision.ABORT,
}


def terminal_approver(renderer: Renderer | None) -> Callable[[ApprovalRequested], Awaitable[ApprovalDecision]]:
    """Ask on the terminal, one request at a time: [y]es approves, [n]o (or Enter) denies, [a]bort stops."""
    lock = anyio.Lock()

    async def approve(request: ApprovalRequested) -> ApprovalDecision:
        async with lock:
            if renderer is not None:
                renderer.hold()
            try:
                return await _ask(request)
            finally:
                if renderer is not None:
                    renderer.release()

    return approve


def question(request: ApprovalRequested) -> str:
    """The question asked for `request`: ``[approval] Running command ls (why) — allow? [y]es / [n]o / [a]bort: ``."""
    reason = f" ({request.reason})" if request.reason else ""
    return f"[approval] {tool_label(request.display)}{reason} — allow? [y]es / [n]o / [a]bort: "


def parse_answer(line: str) -> ApprovalDecision | None:
    """The decision a typed answer stands for (Enter denies); None for anything else."""
    return _ANSWERS.get(line.strip().lower())


async def _ask(request: ApprovalRequested) -> ApprovalDecision:
    while True:
        sys.stderr.write(question(request))
        sys.stderr.flush()
        line = await _read_terminal_line()
        if line is None:
            sys.stderr.write("\n")
            return ApprovalDecision.DENY
        decision = parse_answer(line)
        if decision is not None:
            return decision
        sys.stderr.write("please answer y, n or a\n")


async def _read_terminal_line() -> str | None:
    """One line from stdin without blocking the event loop; None at end of input.

    A daemon thread rather than `anyio.to_thread`: if the run is cancelled while the human is still thinking,
    the abandoned read must not keep the process alive at exit.
    """
    token = anyio.lowlevel.current_token()
    answered = anyio.Event()
    box: list[str] = []

    def read() -> None:
        try:
            box.append(sys.stdin.readline())
        except (OSError, ValueError):
            box.append("")
        with contextlib.suppress(RuntimeError):  # the event loop is gone: nobody is waiting any more
            anyio.from_thread.run_sync(answered.set, token=token)

    threading.Thread(target=read, name="harness-approval-prompt", daemon=True).start()
    await answered.wait()
    return box[0] or None
