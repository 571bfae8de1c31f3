"""The `claude` provider: runs Claude Code (`claude -p`) in bidirectional stream-json mode.

Layer: provider (lifecycle). Owns options, the command line, the environment, the control protocol
(approvals, interrupt) and shutdown; the wire → event mapping is in `mapping` (pure), the policy table in
`permissions`. Knows nothing of rendering, run logs or how approvals are decided (the runner does that).

Command line: `claude -p --output-format stream-json --verbose --include-partial-messages
--input-format stream-json [--bare] [--model M] [--append-system-prompt S | --system-prompt S] [--resume ID]
[--max-turns N] <permission flags> [extra_args]`; the prompt goes to stdin as a user message. After the
`result` line stdin is closed and the CLI exits; shutdown is close stdin → SIGTERM → SIGKILL (the transport),
never SIGKILL first (Claude's Bash tool runs in its own session and would survive).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import anyio
from anyio.abc import TaskGroup
from harness_core.capabilities import Capability, ProviderInfo
from harness_core._agent_cli import probe_cli
from harness_core.errors import HarnessError, MessageTooLargeError
from harness_core.events import (
    ApprovalDecision,
    ApprovalResolved,
    ErrorEvent,
    HarnessResult,
    ProviderRaw,
    RunStatus,
)
from harness_core.provider import CliInfo, OfflineSetup, Provider, ProviderOptions, RunContext
from harness_core.spec import AgentRunSpec
from harness_core.transport import ChildProcess
from pydantic import Field, field_validator

from harness_claude._json import obj
from harness_claude.mapping import ClaudeMapper, approval_request
from harness_claude.permissions import plan_permissions

if TYPE_CHECKING:
    from harness_core.offline.scenarios import Scenario

__all__ = ["ClaudeOptions", "ClaudeProvider", "build_argv", "build_env", "redacted_argv"]

MIN_VERSION = "2.1.328"
INSTALL_HINT = "npm install -g @anthropic-ai/claude-code@2.1.328"
NATIVE_GLOBS = ("@anthropic-ai/claude-code/bin/claude.exe",)
BASE_ARGS = (
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--include-partial-messages",
    "--input-format",
    "stream-json",
)


class ClaudeOptions(ProviderOptions):
    """Options of the `claude` provider (`-o KEY=VALUE`)."""

    claude_bin: str | None = Field(default=None, description="Path of the claude CLI (default: PATH).")
    bare: bool = Field(
        default=False,
        description="Pass --bare: skip user/project settings, hooks, plugins and CLAUDE.md discovery. Off by "
        "default because --bare also ignores `claude /login` credentials (only ANTHROPIC_API_KEY works) and "
        "offers only the Bash, Edit and Read tools (no Write) in 2.1.328.",
    )
    setting_sources: str | None = Field(
        default=None,
        description='Pass --setting-sources: which settings to load, a comma list of user, project, local ("" '
        "loads none, so no hooks or permission rules from the directories around the workspace).",
    )
    max_retries: int | None = Field(default=None, ge=0, le=50, description="CLAUDE_CODE_MAX_RETRIES.")
    stream_idle_timeout_ms: int = Field(
        default=60_000, ge=10_000, description="CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS (a stalled stream fails)."
    )
    max_turns: int | None = Field(default=None, ge=1)
    permission_mode: (
        Literal["default", "acceptEdits", "bypassPermissions", "plan", "dontAsk", "auto", "manual"] | None
    ) = None
    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    replace_system_prompt: bool = False
    extra_args: tuple[str, ...] = ()
    interrupt_grace: float = Field(default=5.0, gt=0, le=120)

    @field_validator("allowed_tools", "disallowed_tools", "extra_args", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(v for v in (p.strip() for p in value.split(",")) if v)
        return value


def build_argv(binary: str, spec: AgentRunSpec, opts: ClaudeOptions, *, is_root: bool) -> list[str]:
    plan = plan_permissions(
        spec.sandbox,
        spec.approval,
        is_root=is_root,
        mode_override=opts.permission_mode,
        allowed=opts.allowed_tools,
        disallowed=opts.disallowed_tools,
    )
    argv = [binary, *BASE_ARGS]
    if opts.bare:
        argv.append("--bare")
    if opts.setting_sources is not None:
        argv += ["--setting-sources", opts.setting_sources]
    if spec.model:
        argv += ["--model", spec.model]
    if spec.system_prompt:
        flag = "--system-prompt" if opts.replace_system_prompt else "--append-system-prompt"
        argv += [flag, spec.system_prompt]
    if spec.resume_session:
        argv += ["--resume", spec.resume_session]
    if opts.max_turns is not None:
        argv += ["--max-turns", str(opts.max_turns)]
    return [*argv, *plan.argv(), *opts.extra_args]


_SECRET_FLAGS = frozenset({"--settings", "--system-prompt", "--append-system-prompt", "--mcp-config"})
"""Flags whose value may hold secrets or private text (settings JSON with keys, prompts): never logged. (`-c` is
`--continue` in Claude Code and takes no value.)"""


def redacted_argv(argv: list[str]) -> list[str]:
    """`argv` for a log line: the value after each flag in `_SECRET_FLAGS` (or of `--flag=value`) redacted."""
    out: list[str] = []
    hide = False
    for arg in argv:
        flag, eq, _ = arg.partition("=")
        if hide:
            out.append("<redacted>")
        elif eq and flag in _SECRET_FLAGS:
            out.append(f"{flag}=<redacted>")
        else:
            out.append(arg)
        hide = not hide and arg in _SECRET_FLAGS
    return out


def build_env(
    spec: AgentRunSpec, opts: ClaudeOptions, *, is_root: bool, base: dict[str, str]
) -> dict[str, str]:
    """The child's environment: `base`, our defaults, `spec.env` (the caller's values beat our defaults, e.g.
    their own CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS), options the caller set explicitly, and what the permission
    plan needs (IS_SANDBOX)."""
    plan = plan_permissions(spec.sandbox, spec.approval, is_root=is_root, mode_override=opts.permission_mode)
    idle = {"CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS": str(opts.stream_idle_timeout_ms)}
    explicit = idle if "stream_idle_timeout_ms" in opts.model_fields_set else {}
    if opts.max_retries is not None:
        explicit = {**explicit, "CLAUDE_CODE_MAX_RETRIES": str(opts.max_retries)}
    return {**base, **idle, **spec.env, **explicit, **plan.env}


def _line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class ClaudeProvider(Provider):
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
    )
    Options = ClaudeOptions

    async def probe(self, options: ProviderOptions) -> CliInfo:
        opts = cast(ClaudeOptions, options)
        return await probe_cli(
            "claude",
            opts.claude_bin,
            install_hint=INSTALL_HINT,
            option_name="claude_bin",
            minimum=MIN_VERSION,
            native_globs=NATIVE_GLOBS,
        )

    def offline_setup(self, scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
        """The real CLI against a scripted Messages backend on 127.0.0.1 (`harness run --offline`, the demo,
        the contract suite's real mode). See `harness_claude.offline`."""
        from harness_claude.offline import offline_setup

        return offline_setup(scenario, workspace, state_dir)

    async def run(self, spec: AgentRunSpec, options: ProviderOptions, ctx: RunContext) -> HarnessResult:
        opts = cast(ClaudeOptions, options)
        binary = ctx.cli.path or (await self.probe(opts)).path or "claude"
        is_root = hasattr(os, "geteuid") and os.geteuid() == 0
        argv = build_argv(binary, spec, opts, is_root=is_root)
        env = build_env(spec, opts, is_root=is_root, base=dict(os.environ))
        ctx.log.debug("claude_spawn", argv=redacted_argv(argv))
        async with ChildProcess(argv, env=env, cwd=spec.cwd, on_line=ctx.record_wire) as child:
            return await _Turn(spec, opts, ctx, child).play()


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
            return self._interrupted_result()
        if isinstance(outcome, HarnessError):
            raise outcome
        return outcome

    async def _read(self, tg: TaskGroup) -> HarnessResult | HarnessError:
        async for raw in self.child.lines():
            if isinstance(raw, MessageTooLargeError):
                await self.ctx.emit(ErrorEvent(error=raw.to_info()))
                continue
            try:
                msg = json.loads(raw)
            except ValueError:
                msg = None
            if not isinstance(msg, dict):
                text = raw.decode("utf-8", "replace")
                await self.ctx.emit(ProviderRaw(method="non_json_stdout", payload=text[:2000]))
                continue
            kind = msg.get("type")
            if kind == "control_request":
                await self._control_request(msg, tg)
                continue
            if kind == "control_cancel_request":
                scope = self.approvals.get(str(msg.get("request_id")))
                if scope is not None:
                    scope.cancel()
                continue
            mapped = self.mapper.feed(msg)
            for event in mapped.events:
                await self.ctx.emit(event)
            if mapped.end is not None:
                await self.child.close_stdin()  # one turn per run: let the CLI exit
                return mapped.end.error or mapped.end.to_result()
        # EOF without a `result` line
        if self.mapper.interrupt_sent:
            return self._interrupted_result()
        with anyio.move_on_after(2.0):
            await self.child.wait()
        return self.child.exit_error("Claude Code exited before finishing the turn")

    def _interrupted_result(self) -> HarnessResult:
        return HarnessResult(
            status=RunStatus.INTERRUPTED,
            final_text=self.mapper.streamed_text,
            session_id=self.mapper.session_id,
        )

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
