"""The fake `claude`'s two pipes: stream-json lines out, and the control protocol coming in on stdin.

Layer: testing (fake CLI), stdlib only. Knows the messages a driver writes to `claude -p --input-format
stream-json` (the user message, `control_request` `interrupt`, `control_response` answers to `can_use_tool`);
knows nothing of scenarios or of what the lines it prints mean. A reader thread owns stdin; the turn waits on it.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
from typing import Any, TextIO

from harness_claude.testing import shapes

__all__ = ["Wire"]

_POLL = 0.02
"""Seconds between checks for an interrupt while waiting for an answer."""


class Wire:
    """stdout (one JSON object per line, written whole even when two threads print) and stdin (read by a
    thread: interrupts are noticed at once, everything else is queued for `next_message` and `ask`)."""

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None, *,
                 ignore: frozenset[str] = frozenset()) -> None:
        self.ignore = ignore
        """Control request subtypes never answered nor acted on (a CLI that ignores an interrupt, say)."""
        self._stdin = stdin or sys.stdin
        self._stdout = stdout or sys.stdout
        self._out = threading.Lock()
        self._inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._interrupt = threading.Event()

    @property
    def interrupted(self) -> bool:
        """The driver sent an `interrupt` control request."""
        return self._interrupt.is_set()

    def emit(self, line: dict[str, Any]) -> None:
        with self._out:
            self._stdout.write(json.dumps(line) + "\n")
            self._stdout.flush()

    def start(self) -> None:
        """Start reading stdin (a daemon thread; it ends when stdin closes)."""
        threading.Thread(target=self._read, name="fake-claude-stdin", daemon=True).start()

    def _read(self) -> None:
        for line in self._stdin:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if not isinstance(msg, dict):
                continue
            request = msg.get("request") if msg.get("type") == "control_request" else None
            if isinstance(request, dict) and request.get("subtype") == "interrupt" and "interrupt" not in self.ignore:
                self._interrupt.set()
                self.emit(shapes.interrupt_response(msg.get("request_id")))
            self._inbox.put(msg)
        self._inbox.put(None)

    def reset(self) -> None:
        """A new turn: an interrupt of the last one is over."""
        self._interrupt.clear()

    def next_message(self) -> dict[str, Any] | None:
        """The next message on stdin; None once stdin is closed."""
        return self._inbox.get()

    def drain(self) -> None:
        """Stay until stdin closes, as the real CLI does after its `result` line."""
        while self._inbox.get() is not None:
            pass

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; False if an interrupt arrived (at once, not at the end)."""
        return not self._interrupt.wait(max(seconds, 0))

    def ask(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """Send a `control_request` and wait for the driver's `control_response` to it: the response body, or
        None when the turn was interrupted or stdin closed first."""
        request_id = request["request_id"]
        self.emit(request)
        while not self._interrupt.is_set():
            try:
                msg = self._inbox.get(timeout=_POLL)
            except queue.Empty:
                continue
            if msg is None:
                self._inbox.put(None)  # stdin is closed: `drain` must see it too
                return None
            response = msg.get("response") if msg.get("type") == "control_response" else None
            if isinstance(response, dict) and response.get("request_id") == request_id:
                body = response.get("response")
                return dict(body) if isinstance(body, dict) else {}
        return None
