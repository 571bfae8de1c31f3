"""What the terminal can take: plain text or colour, Unicode marks or ASCII, and the control codes themselves.

Layer: CLI presentation. Knows streams and environment variables only: nothing of events, runs or providers.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TextIO

__all__ = [
    "ASCII_MARKS",
    "BOLD",
    "CYAN",
    "DIM",
    "ERASE_LINE",
    "GREEN",
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
