"""A live Claude Code session: one `claude -p` stream-json process, its stdin open across turns.

Layer: provider (lifecycle). Owns the session's process, the reader that outlives turns, the settings the process
holds between turns (model, permission mode) and its running cost; a turn is `turn.Turn`, and one that leaves the
process untrustworthy sets `broken`. Knows nothing of rendering, run logs or how approvals are decided.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from harness_core import AgentRunSpec, HarnessEvent, HarnessResult, SessionSpec
from harness_core.provider import (
    ChildProcess,
    ProviderSession,
    RunContext,
    SessionContext,
    json_batches,
    traced_env,
)

from harness_claude.argv import build_argv, build_env, redacted_argv
from harness_claude.mapping import ClaudeMapper
from harness_claude.mcpfile import mcp_config_file
from harness_claude.options import ClaudeOptions
from harness_claude.outcome import Limits
from harness_claude.permissions import plan_permissions
from harness_claude.toolconfig import tool_config
from harness_claude.turn import Turn

__all__ = ["ClaudeSession", "claude_session"]


@asynccontextmanager
async def claude_session(
    binary: str, spec: SessionSpec, opts: ClaudeOptions, ctx: SessionContext
) -> AsyncIterator[ClaudeSession]:
    """Start the session's process and its reader; on exit close stdin and shut the process down (the
    transport's bounded close stdin → SIGTERM → SIGKILL)."""
    is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    # the session's trace context: the process is spawned once, and Claude Code reads TRACEPARENT at start only
    # (no per-turn carrier on a stream-json user message outside its remote mode): docs/observe.md
    env = traced_env(build_env(spec, opts, is_root=is_root, base=os.environ, live=True), ctx.trace_context())
    config = tool_config(spec, keep_user_servers=opts.keep_user_mcp_servers).mcp_config
    with mcp_config_file(config) as config_file:  # for the process's life: it may start a server again later
        argv = build_argv(binary, spec, opts, is_root=is_root, live=True, mcp_config_file=config_file)
        ctx.log.debug("claude_session_spawn", argv=redacted_argv(argv, tuple(spec.env.values())))
        async with ctx.spawn(argv, env=env, cwd=spec.cwd) as child, anyio.create_task_group() as tg:
            session = ClaudeSession(spec, opts, ctx, child, is_root=is_root)
            tg.start_soon(session.read)
            try:
                yield session
            finally:
                with anyio.CancelScope(shield=True):
                    await child.close_stdin()
                tg.cancel_scope.cancel()


class ClaudeSession(ProviderSession):
    """The provider side of a live session (what Claude Code does across turns: providers/claude/README.md)."""

    def __init__(self, spec: SessionSpec, opts: ClaudeOptions, ctx: SessionContext, child: ChildProcess, *,
                 is_root: bool) -> None:
        self.spec, self.opts, self.log, self.child = spec, opts, ctx.log, child
        self.is_root = is_root
        self.model = spec.model
        """The model the process uses now (None: the one it started with, not known yet)."""
        self.home_model = spec.model
        """The model of a turn without an override: the session's, else the process's first `system/init`'s."""
        self.mode = self._plan(spec.sandbox, spec.approval).mode
        """The permission mode the process is in now."""
        self.cost = 0.0
        """`total_cost_usd` of the process's last `result` (all turns so far)."""
        self.turns = 0
        self.eof = anyio.Event()
        self._inbox: MemoryObjectSendStream[list[dict[str, Any]]] | None = None
        self._turn: Turn | None = None

    def _plan(self, sandbox: Any, approval: Any) -> Any:
        """A turn's plan; its MCP servers are allowed when it asks nobody (the process asks about the user's)."""
        tools = tool_config(self.spec, keep_user_servers=self.opts.keep_user_mcp_servers)
        return plan_permissions(sandbox, approval, is_root=self.is_root, mode_override=self.opts.permission_mode,
                                allowed=(*self.opts.allowed_tools, *tools.allowed, *tools.servers),
                                disallowed=self.opts.disallowed_tools, live=True)

    # --- the reader, for the whole session ----------------------------------------------------------

    async def read(self) -> None:
        """Route the stdout lines (a chunk's worth at a time) to the turn being played; at EOF end that turn's
        stream and remember it."""
        try:
            async for batch in json_batches(self.child.lines(), self._emit):
                inbox = self._inbox
                if inbox is None:
                    for msg in batch:
                        self.log.debug("claude_line_between_turns", type=msg.get("type"), subtype=msg.get("subtype"))
                    continue
                try:
                    await inbox.send(batch)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    for msg in batch:
                        self.log.debug("claude_line_after_turn", type=msg.get("type"))
        finally:
            self.eof.set()
            if self._inbox is not None:
                self._inbox.close()

    async def _emit(self, event: HarnessEvent) -> None:
        if self._turn is not None:
            await self._turn.ctx.emit(event)

    # --- turns --------------------------------------------------------------------------------------

    async def turn(self, spec: AgentRunSpec, ctx: RunContext) -> HarnessResult:
        if self.eof.is_set():
            raise await self._gone()
        plan = self._plan(spec.sandbox, spec.approval)
        prelude: list[dict[str, Any]] = []
        wanted = spec.model or self.home_model
        if wanted != self.model:  # an override, or the session's model back after one
            prelude.append({"subtype": "set_model", **({"model": wanted} if wanted else {})})
        if plan.mode != self.mode:
            prelude.append({"subtype": "set_permission_mode", "mode": plan.mode})
        limits = Limits(max_turns=spec.max_turns, max_cost_usd=spec.max_cost_usd, scope="session")
        resumed = self.turns > 0 or spec.resume_session is not None
        mapper = ClaudeMapper(str(spec.cwd), resumed=resumed, limits=limits, cost_before=self.cost,
                              servers=spec.mcp_servers)
        turn = Turn(spec, self.opts, ctx, self.child, mapper=mapper, plan=plan, one_shot=False)
        send, receive = anyio.create_memory_object_stream[list[dict[str, Any]]](0)
        self._inbox, self._turn = send, turn
        self.turns += 1
        try:
            if self.eof.is_set():  # the reader ended just now: it could not close this stream
                send.close()
            async with receive:
                return await turn.play(receive, prelude=prelude, applied=lambda r: self._applied(wanted, r))
        finally:
            self._inbox = self._turn = None
            send.close()
            if mapper.total_cost is not None:
                self.cost = mapper.total_cost
            if self.home_model is None and wanted is None and mapper.model:  # what the process started with
                self.home_model = self.model = mapper.model
            if turn.broken:
                self.broken = turn.broken
                self.log.warning("claude_session_broken", reason=turn.broken)

    def _applied(self, wanted: str | None, request: dict[str, Any]) -> None:
        if request["subtype"] == "set_model":
            self.model = wanted
        elif request["subtype"] == "set_permission_mode":
            self.mode = str(request["mode"])

    async def steer(self, text: str, ctx: RunContext) -> bool:
        turn = self._turn
        if turn is None or turn.ctx is not ctx:
            return False
        return await turn.steer(text)

    async def _gone(self) -> Exception:
        with anyio.move_on_after(2.0):
            await self.child.wait()
        return self.child.exit_error("Claude Code's session process exited between turns")
