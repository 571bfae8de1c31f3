"""What SIGINT, SIGTERM and SIGHUP do to a live run: the first interrupts the turn, the second stops the run.

Layer: core runtime. Knows `LiveRun`; knows nothing of terminals or rendering (the caller is told, if it wants).
"""

from __future__ import annotations

import signal
from collections.abc import Callable

import anyio

from harness_core._run.live import LiveRun

__all__ = ["HARD_STOP_FALLBACK", "interrupt_on_signals"]

HARD_STOP_FALLBACK = 20.0
"""Seconds a stopped run has to end with its `done` before the caller's scope is cancelled as a last resort."""


async def interrupt_on_signals(live: LiveRun, hard_stop: anyio.CancelScope, *,
                               told: Callable[[int], None] | None = None) -> None:
    """First SIGINT/SIGTERM/SIGHUP (the terminal closing): interrupt the turn cleanly. Second: stop the run at
    once (`hard_stop` is cancelled if it has not ended within `HARD_STOP_FALLBACK`). Later ones are absorbed: the
    receiver stays open until the run is over, because the default handler would kill Harness by the signal
    mid-shutdown (exit -2 instead of 130, a log without its `done`). `told(1)`, `told(2)`: before each action."""
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGHUP) as signals:
        count = 0
        async for _ in signals:
            count += 1
            if count == 1:
                if told is not None:
                    told(1)
                live.interrupt()
            elif count == 2:
                if told is not None:
                    told(2)
                live.stop()  # the stream still ends with its `done`; the scope below is only a last resort
                with anyio.move_on_after(HARD_STOP_FALLBACK):
                    await live.finished.wait()
                if not live.finished.is_set():
                    hard_stop.cancel()
