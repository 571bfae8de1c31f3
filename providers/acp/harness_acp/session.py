"""A live ACP session: one agent process and one ACP session, many prompt turns, one at a time.

Layer: provider lifecycle. Puts a turn's sandbox, approval, model and effort on the ACP session before its prompt
(`AcpConnection.apply`) and fails the next turn of a process that died between turns; no steering (ACP cannot add
input to a running prompt). Knows nothing of rendering or run logs.
"""

from __future__ import annotations

import anyio
from harness_core import AgentRunSpec, HarnessResult, RunStatus, SessionStarted
from harness_core.provider import ProviderSession, RunContext

from harness_acp.connection import AcpConnection
from harness_acp.turn import PromptTurn

__all__ = ["AcpSession"]


async def _cancel_on_interrupt(ctx: RunContext, scope: anyio.CancelScope) -> None:
    await ctx.interrupt_requested.wait()
    scope.cancel()


class AcpSession(ProviderSession):
    def __init__(self, conn: AcpConnection, *, resumed: bool) -> None:
        self.conn = conn
        self.resumed = resumed

    async def turn(self, spec: AgentRunSpec, ctx: RunContext) -> HarnessResult:
        conn = self.conn
        if conn.closed:
            with anyio.move_on_after(2.0):
                await conn.child.wait()
            raise conn.child.exit_error(f"{conn.agent} exited between turns")
        with anyio.CancelScope() as setting:  # up to three requests: interruptible, as a turn's start-up is
            async with anyio.create_task_group() as tg:
                tg.start_soon(_cancel_on_interrupt, ctx, setting)
                await conn.apply(spec)
                tg.cancel_scope.cancel()
        if setting.cancelled_caught:
            return HarnessResult(status=RunStatus.INTERRUPTED, session_id=conn.session_id)
        await ctx.emit(SessionStarted(session_id=str(conn.session_id), resumed=self.resumed, model=conn.model))
        try:
            return await conn.play(PromptTurn(conn, spec, ctx))
        finally:
            self.broken = conn.broken
