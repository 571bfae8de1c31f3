"""What the terminal can take: plain text or colour, Unicode marks or ASCII, and the control codes themselves;
and `Output`, the live view's writes held in memory and written in one piece.

Layer: CLI presentation. Knows streams and environment variables only: nothing of events, runs or providers.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TextIO

__all__ = [
    "ASCII_MARKS",
    "BOLD",
    "CYAN",
    "DIM",
    "ERASE_LINE",
    "GREEN",
    "HOLD_TEXT_AT_MOST",
    "Output",
    "RED",
    "RESET",
    "SPINNER_ASCII",
    "SPINNER_UNICODE",
    "UNICODE_MARKS",
    "UNSAFE",
    "YELLOW",
    "can_encode",
    "use_plain",
]

RESET = "\x1b[0m"
BOLD = "\x1b[1m"
DIM = "\x1b[2m"
RED = "\x1b[31m"
GREEN = "\x1b[32m"
YELLOW = "\x1b[33m"
CYAN = "\x1b[36m"
ERASE_LINE = "\r\x1b[2K"

UNICODE_MARKS: Mapping[str, str] = {
    "ok": "✓", "fail": "✗", "declined": "⊘", "stop": "■", "more": "…", "sep": "·", "dash": "—",
}
"""The marks of a terminal that can encode them (`can_encode`)."""
ASCII_MARKS: Mapping[str, str] = {
    "ok": "ok", "fail": "FAIL", "declined": "declined", "stop": "stopped", "more": "...", "sep": "|", "dash": "-",
}
"""The same marks for a stream that cannot encode Unicode."""
SPINNER_UNICODE = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPINNER_ASCII = "|/-\\"

# Model text, command output, paths and error messages are untrusted: a terminal must never receive their control
# characters (ESC starts sequences that can rewrite the screen, set the title or write the clipboard). Newlines and
# tabs stay; every other C0/C1 control character and DEL is dropped.
UNSAFE: Mapping[int, None] = dict.fromkeys([*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0)])
"""A `str.translate` table that drops every control character but newline and tab."""


def use_plain(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """True when `stream` must get plain text: not a terminal, ``NO_COLOR`` set, or ``TERM=dumb``."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return True
    isatty = getattr(stream, "isatty", None)
    return not (isatty is not None and isatty())


def can_encode(stream: TextIO, text: str) -> bool:
    """True when `stream`'s encoding (UTF-8 when it names none) can write `text`."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


HOLD_TEXT_AT_MOST = 0.05
"""Seconds streamed text may be held while more keeps coming (`Output.streamed`)."""


class Output:
    """What the live view writes to `stream`, kept in memory until `flush` writes it in one piece (one write
    and one flush: a terminal's write costs a system call, which on a pty is several times the cost of parsing
    one event).

    Streamed text (`text`, `streamed`) is written at once unless the owner set `on_held`: then it is held, and
    `on_held()` is called when text starts being held, so that the owner flushes as soon as the consumer has
    caught up with the stream (it must: nothing else writes held text, apart from `flush`, more text arriving
    `hold_for` seconds after the held text began, and the renderer's own non-text lines).
    """

    __slots__ = ("_clock", "_held_at", "_parts", "hold_for", "on_held", "stream")

    def __init__(self, stream: TextIO, clock: Callable[[], float], hold_for: float = HOLD_TEXT_AT_MOST) -> None:
        self.stream = stream
        self.hold_for = hold_for
        self.on_held: Callable[[], None] | None = None
        self._clock = clock
        self._parts: list[str] = []
        self._held_at: float | None = None  # when streamed text began to be held; None: none is

    def write(self, text: str) -> None:
        """Add `text` to what the next `flush` writes."""
        self._parts.append(text)

    def text(self, text: str) -> None:
        """Add streamed text: written now, or held (see the class)."""
        self._parts.append(text)
        self.streamed()

    def streamed(self) -> None:
        """What was added is streamed text: flush now, or hold it (see the class)."""
        if self.on_held is None:
            self.flush()
        elif self._held_at is None:
            self._held_at = self._clock()
            self.on_held()
        elif self._clock() - self._held_at >= self.hold_for:
            self.flush()

    def flush(self) -> None:
        """Write everything added, in one piece, and flush the stream."""
        self._held_at = None
        if self._parts:
            text = "".join(self._parts)
            self._parts.clear()
            self.stream.write(text)
        self.stream.flush()
