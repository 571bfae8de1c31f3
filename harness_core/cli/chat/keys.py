"""The signals of `harness chat`'s main thread: SIGINT, SIGTERM and SIGHUP raised only while it waits (at the
prompt, for a turn), never inside a portal call, and never lost.

Layer: CLI, loaded when `harness chat` runs. Knows the standard library's signals (and readline's line buffer and
key bindings) only: nothing of sessions, events or providers.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from collections.abc import Iterator
from types import FrameType, ModuleType

__all__ = ["Keys", "Signalled", "line_typed", "multiline_editing", "read_line"]


class Signalled(BaseException):
    """SIGTERM or SIGHUP arrived (raised in the main thread, as KeyboardInterrupt is for SIGINT)."""


class Keys:
    """SIGINT, SIGTERM and SIGHUP in the main thread, raised only while it waits (`waiting()`: at the prompt, for
    a turn); one arriving at another time is kept for the next wait (no signal lands inside a portal call)."""

    _SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    _TICK = 0.1
    """Seconds between SIGALRMs while waiting: CPython runs a handler only when a blocking call in C (readline's
    select, a lock) is interrupted, so a signal that came just before it blocked would wait for the next key."""

    def __init__(self) -> None:
        self._waiting = False
        self._pending: list[int] = []

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        previous = {sig: signal.signal(sig, self._handle) for sig in self._SIGNALS}
        previous[signal.SIGALRM] = signal.signal(signal.SIGALRM, lambda signum, frame: None)
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        """Raise KeyboardInterrupt (SIGINT) or `Signalled` when a signal comes (or came) during the block."""
        self._waiting = True  # first: a signal arriving after the check below would be kept and never raised
        signal.setitimer(signal.ITIMER_REAL, self._TICK, self._TICK)
        try:
            if self._pending:
                self._raise(self._pending.pop(0))
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self._waiting = False

    def forget_ctrl_c(self) -> None:
        """Drop the Ctrl-Cs kept since the last wait (pressed for a turn that ended meanwhile: they must not
        leave the chat at the next prompt); SIGTERM and SIGHUP stay."""
        self._pending = [sig for sig in self._pending if sig != signal.SIGINT]

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if not self._waiting:
            self._pending.append(signum)
            return
        self._waiting = False
        signal.setitimer(signal.ITIMER_REAL, 0)  # no tick left pending behind the exception (see `read_line`)
        self._raise(signum)

    @staticmethod
    def _raise(signum: int) -> None:
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Signalled(signum)


def line_typed() -> bool:
    """Whether the prompt's line held text when Ctrl-C came (readline's buffer; False without readline)."""
    readline = sys.modules.get("readline")
    get = getattr(readline, "get_line_buffer", None)
    return bool(get is not None and get().strip())


def multiline_editing(readline: ModuleType) -> None:
    """Let one prompt hold several lines, as the agents' own prompts do: a paste is one piece of text,
    its newlines kept (bracketed paste, which CPython turns off for its REPL), sent by Enter; Alt-Enter (ESC CR)
    inserts a newline. GNU readline only: libedit binds keys another way (there a paste stays a line per turn;
    a backslash at the end of a line continues it everywhere)."""
    if "libedit" in (readline.__doc__ or ""):
        return
    readline.parse_and_bind("set enable-bracketed-paste on")
    readline.parse_and_bind(r'"\e\C-m": "\C-v\C-j"')  # quoted-insert of a newline


def read_line(prompt: str | None = None) -> str:
    """`input()`, with a signal raised inside it coming out as itself.

    CPython 3.10 (gh-134644): when a handler raises inside readline and another signal's handler is pending (the
    tick), `input()` runs that handler with the exception set and raises SystemError chained to ours instead."""
    try:
        return input() if prompt is None else input(prompt)
    except SystemError as exc:
        cause = exc.__cause__
        if isinstance(cause, (KeyboardInterrupt, Signalled)):
            raise cause from None
        raise
