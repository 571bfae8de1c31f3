"""A live session of codex-appserver: the turns of one conversation on one app-server process and thread.

Layer: provider lifecycle. Knows only that each turn is played on the session's `thread.AppThread` (which sends
the turn's sticky settings, see `params`) and that a steer goes to the turn being played; the process is the
provider's `open_session`'s. Knows nothing of the runner but the `ProviderSession` interface.
"""

from __future__ import annotations

from harness_core import AgentRunSpec, HarnessResult
from harness_core.provider import ProviderSession, RunContext

from harness_codex_appserver.thread import AppThread

__all__ = ["AppServerSession"]


class AppServerSession(ProviderSession):
    """Turns on one thread, one at a time. Every turn emits `session_started` with the thread's id (each turn is
    a run with its own log): the first with `resumed` as the session was opened, the later ones `resumed=True`,
    as a resumed one-shot run would. `broken` once a turn left the thread out of step (an interrupt Codex never
    confirmed, a `turn/start` answered with the previous turn's id)."""

    def __init__(self, thread: AppThread, *, resumed: bool) -> None:
        self._thread = thread
        self._resumed = resumed
        self._turns = 0

    async def turn(self, spec: AgentRunSpec, ctx: RunContext) -> HarnessResult:
        resumed = self._resumed or self._turns > 0
        self._turns += 1
        try:
            return await self._thread.play(spec, ctx, live=True, resumed=resumed)
        finally:
            self.broken = self._thread.broken  # the runner then closes the session after this turn

    async def steer(self, text: str, ctx: RunContext) -> bool:
        return await self._thread.steer(text)
