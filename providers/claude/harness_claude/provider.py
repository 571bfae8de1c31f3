"""The `claude` provider: runs Claude Code (`claude -p`) in bidirectional stream-json mode.

Layer: provider (lifecycle). Owns probing the CLI, spawning it, the control protocol on its stdin and stdout
(approvals, interrupt) and the end of the turn; the command line and environment are built in `argv`, the
wire → event mapping is in `mapping` (pure), the policy table in `permissions`, the options in `options`.
Knows nothing of rendering, run logs or how approvals are decided (the runner does that).

The prompt goes to stdin as a stream-json user message. After the `result` line stdin is closed and the CLI
exits; shutdown is close stdin → SIGTERM → SIGKILL (the transport), never SIGKILL first (Claude's Bash tool
runs in its own session and would survive).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup
from harness_core import AgentRunSpec, ApprovalDecision, ApprovalResolved, HarnessError, HarnessResult
from harness_core.provider import (
    AuthStatus,
    Capability,
    ChildProcess,
    CliInfo,
    OfflineSetup,
    Provider,
    ProviderInfo,
    RunContext,
    json_messages,
    probe_cli,
)

from harness_claude._json import obj
from harness_claude.argv import SECRET_FLAGS, build_argv, build_env, redacted_argv
from harness_claude.mapping import ClaudeMapper, approval_request
from harness_claude.options import ClaudeOptions

if TYPE_CHECKING:
    from harness_core.offline.scenarios import Scenario

__all__ = ["INSTALL_HINT", "MIN_VERSION", "ClaudeProvider"]

MIN_VERSION = "2.1.328"
INSTALL_HINT = "npm install -g @anthropic-ai/claude-code@2.1.328"
NATIVE_GLOBS = ("@anthropic-ai/claude-code/bin/claude.exe",)


def _line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class ClaudeProvider(Provider[ClaudeOptions]):
    info = ProviderInfo(
        name="claude",
        version="0.1.0",
        capabilities=frozenset(
            {Capability.STREAMING, Capability.SESSION, Capability.INTERRUPT, Capability.APPROVALS}
        ),
        description="Claude Code (claude -p) over bidirectional stream-json",
        cli_name="claude",
        min_cli_version=MIN_VERSION,
        tested_cli_version=MIN_VERSION,
        secret_flags=SECRET_FLAGS,
    )

    async def probe(self, options: ClaudeOptions) -> CliInfo:
        return await probe_cli(
            "claude",
            options.claude_bin,
            install_hint=INSTALL_HINT,
            option_name="claude_bin",
            minimum=MIN_VERSION,
            native_globs=NATIVE_GLOBS,
        )

    async def check_auth(self, options: ClaudeOptions, cli: CliInfo) -> AuthStatus:
        """`claude auth status`: logged in (claude.ai, an API key and where it comes from) or not, with the next
        step. No model call. See `harness_claude.auth`."""
        from harness_claude.auth import check_claude_auth

        return await check_claude_auth(cli)

    def offline_setup(self, scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
        """The real CLI against a scripted Messages backend on 127.0.0.1 (`harness run --offline`, the demo,
        the contract suite's real mode). See `harness_claude.offline`."""
        from harness_claude.offline import offline_setup

        return offline_setup(scenario, workspace, state_dir)

    async def run(self, spec: AgentRunSpec, options: ClaudeOptions, ctx: RunContext) -> HarnessResult:
        binary = ctx.cli.path or (await self.probe(options)).path or "claude"
        is_root = hasattr(os, "geteuid") and os.geteuid() == 0
        argv = build_argv(binary, spec, options, is_root=is_root)
        env = build_env(spec, options, is_root=is_root, base=os.environ)
        ctx.log.debug("claude_spawn", argv=redacted_argv(argv, tuple(spec.env.values())))
        async with ctx.spawn(argv, env=env, cwd=spec.cwd) as child:
            return await _Turn(spec, options, ctx, child).play()


class _Turn:
    """One turn on a live child: reader loop, approval tasks, interrupt watcher."""

    def __init__(self, spec: AgentRunSpec, opts: ClaudeOptions, ctx: RunContext, child: ChildProcess) -> None:
        self.spec, self.opts, self.ctx, self.child = spec, opts, ctx, child
        self.mapper = ClaudeMapper(str(spec.cwd), resumed=spec.resume_session is not None)
        self.approvals: dict[str, anyio.CancelScope] = {}
        self.interrupted = anyio.Event()
        self._ids = 0

    def _next_id(self) -> str:
        self._ids += 1
        return f"harness_{self._ids}"

    async def play(self) -> HarnessResult:
        outcome: HarnessResult | HarnessError | None = None
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._forward_interrupt)
            tg.start_soon(self._grace, tg.cancel_scope)
            user = {"role": "user", "content": self.spec.prompt}
            await self.child.send_line(
                _line({"type": "user", "message": user, "parent_tool_use_id": None, "session_id": ""})
            )
            outcome = await self._read(tg)
            tg.cancel_scope.cancel()
        if outcome is None:  # the interrupt grace expired without a `result` line
            return self.mapper.interrupted_result()
        if isinstance(outcome, HarnessError):
            raise outcome
        return outcome

    async def _read(self, tg: TaskGroup) -> HarnessResult | HarnessError:
        mapper, emit = self.mapper, self.ctx.emit
        async for msg in json_messages(self.child.lines(), emit):
            kind = msg.get("type")
            if kind == "control_request":
                await self._control_request(msg, tg)
                continue
            if kind == "control_cancel_request":
                scope = self.approvals.get(str(msg.get("request_id")))
                if scope is not None:
                    scope.cancel()
                continue
            for event in mapper.feed(msg):
                await emit(event)
            outcome = mapper.outcome
            if outcome is not None:
                await self.child.close_stdin()  # one turn per run: let the CLI exit
                return outcome
        # EOF without a `result` line
        if mapper.interrupt_sent:
            return mapper.interrupted_result()
        with anyio.move_on_after(2.0):
            await self.child.wait()
        return self.child.exit_error("Claude Code exited before finishing the turn")

    # --- control protocol ---------------------------------------------------------------------------

    async def _control_request(self, msg: dict[str, Any], tg: TaskGroup) -> None:
        request_id = str(msg.get("request_id"))
        request = obj(msg.get("request"))
        if request.get("subtype") == "can_use_tool":
            tg.start_soon(self._approve, request_id, request)
            return
        await self._respond_error(request_id, f"harness does not handle {request.get('subtype')!r} requests")

    async def _respond(self, request_id: str, response: dict[str, Any]) -> None:
        payload = {"subtype": "success", "request_id": request_id, "response": response}
        await self.child.send_line(_line({"type": "control_response", "response": payload}))

    async def _respond_error(self, request_id: str, error: str) -> None:
        payload = {"subtype": "error", "request_id": request_id, "error": error}
        await self.child.send_line(_line({"type": "control_response", "response": payload}))

    async def _approve(self, request_id: str, request: dict[str, Any]) -> None:
        event = approval_request(request_id, request, str(self.spec.cwd))
        decision: ApprovalDecision | None = None
        with anyio.CancelScope() as scope:
            self.approvals[request_id] = scope
            try:
                decision = await self.ctx.request_approval(event)
            finally:
                self.approvals.pop(request_id, None)
                if decision is None:  # cancelled: the run ended or the CLI withdrew the request
                    with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
                        await self.ctx.emit(
                            ApprovalResolved(
                                request_id=request_id,
                                decision=ApprovalDecision.ABORT,  # as codex-appserver and the runner
                                decided_by="runner",
                                reason="the turn ended before a decision",
                            )
                        )
        if decision is None:
            return
        if decision is ApprovalDecision.APPROVE:
            tool_input = obj(request.get("input"))
            await self._respond(request_id, {"behavior": "allow", "updatedInput": tool_input})
            return
        abort = decision is ApprovalDecision.ABORT
        message = "the operation refused this action" + ("; stop the turn" if abort else "")
        await self._respond(request_id, {"behavior": "deny", "message": message, "interrupt": abort})
        if abort:
            await self._interrupt()

    async def _interrupt(self) -> None:
        if self.mapper.interrupt_sent:
            return
        self.mapper.interrupt_sent = True
        self.interrupted.set()
        request = {
            "type": "control_request",
            "request_id": self._next_id(),
            "request": {"subtype": "interrupt"},
        }
        try:
            await self.child.send_line(_line(request))
        except Exception:  # noqa: BLE001 - the child is already gone; EOF ends the turn
            self.ctx.log.debug("interrupt_send_failed")

    async def _forward_interrupt(self) -> None:
        await self.ctx.interrupt_requested.wait()
        await self._interrupt()

    async def _grace(self, scope: anyio.CancelScope) -> None:
        await self.interrupted.wait()
        await anyio.sleep(self.opts.interrupt_grace)
        self.ctx.log.warning("claude_interrupt_grace_expired", grace=self.opts.interrupt_grace)
        scope.cancel()  # `play` then returns an interrupted result; the transport stops the child
