"""The codex-appserver provider: one Codex app-server process, one thread, one turn, streamed as events.

Layer: provider lifecycle. Knows the app-server's requests (initialize, thread/start|resume, turn/start,
turn/interrupt), its approval requests and the order of a turn; spawns the process through `ctx.spawn`, speaks
JSON-RPC through `JsonRpcPeer`, and hands every notification to `mapping`. Knows nothing of rendering, run
logs or how the operation decides approvals (that is the runner's `request_approval`).

Threads are started non-ephemeral by default so that `resume_session` can continue them later
(`-o ephemeral=true` opts out). The system prompt is sent as `developerInstructions`: `baseInstructions`
would replace Codex's own instructions, tool usage included.
"""

from __future__ import annotations

from collections.abc import Awaitable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import anyio
from harness_codex_common import (
    MIN_CODEX_VERSION,
    NATIVE_GLOBS,
    Reconnects,
    model_api_url,
    offline_setup,
    probe_codex,
    refused_events,
    session_not_found,
)
from harness_codex_common.auth import check_codex_auth
from harness_codex_common.rollout import read_finished_tail, turn_records
from harness_core import (
    AgentRunSpec,
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    ErrorEvent,
    HarnessError,
    HarnessEvent,
    HarnessResult,
    HarnessToolDetails,
    ProtocolError,
    ProviderRaw,
    RunStatus,
    SessionStarted,
    ToolKind,
)
from harness_core.provider import (
    AuthStatus,
    Capability,
    ChildProcess,
    CliInfo,
    JsonRpcError,
    JsonRpcPeer,
    OfflineSetup,
    Provider,
    ProviderInfo,
    RunContext,
)

from harness_codex_appserver import __version__
from harness_codex_appserver.argv import build_argv, build_env, redacted_argv
from harness_codex_appserver.items import tool_calls
from harness_codex_appserver.mapping import TurnMapper
from harness_codex_appserver.options import CodexAppServerOptions

if TYPE_CHECKING:
    from harness_core.offline.scenarios import Scenario

__all__ = ["MIN_CODEX_VERSION", "NATIVE_GLOBS", "CodexAppServerProvider"]

_APPROVALS = ("item/commandExecution/requestApproval", "item/fileChange/requestApproval")
_METHOD_NOT_FOUND = -32601  # the JSON-RPC 2.0 error code
_WIRE_DECISION = {
    ApprovalDecision.APPROVE: "accept",
    ApprovalDecision.DENY: "decline",
    ApprovalDecision.ABORT: "cancel",
}


class CodexAppServerProvider(Provider[CodexAppServerOptions]):
    """OpenAI Codex through `codex app-server --listen stdio://` (JSON-RPC over stdio)."""

    info: ClassVar[ProviderInfo] = ProviderInfo(
        name="codex-appserver",
        version=__version__,
        capabilities=frozenset(
            {Capability.STREAMING, Capability.SESSION, Capability.INTERRUPT, Capability.APPROVALS}
        ),
        description="OpenAI Codex via its app-server: streaming, sessions, interrupt, approvals.",
        cli_name="codex",
        min_cli_version=MIN_CODEX_VERSION,
        tested_cli_version=MIN_CODEX_VERSION,
    )

    async def probe(self, options: CodexAppServerOptions) -> CliInfo:
        return await probe_codex(options.codex_bin)

    async def check_auth(self, options: CodexAppServerOptions, cli: CliInfo) -> AuthStatus:
        """`codex login status` in the CODEX_HOME a run would use, or an API key in the environment (no
        network; see `harness_codex_common.auth`)."""
        return await check_codex_auth(cli, options.codex_home)

    def offline_setup(self, scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
        """The real codex against a scripted Responses backend on 127.0.0.1, with its own CODEX_HOME under
        `state_dir` (see `harness_codex_common.offline_setup`)."""
        return offline_setup(scenario, workspace, state_dir)

    async def run(self, spec: AgentRunSpec, options: CodexAppServerOptions, ctx: RunContext) -> HarnessResult:
        binary = ctx.cli.path or options.codex_bin or "codex"
        argv = build_argv(binary, options)
        ctx.log.debug("codex_appserver_spawn", argv=redacted_argv(argv, tuple(spec.env.values())))
        async with ctx.spawn(argv, env=build_env(spec.env, options), cwd=spec.cwd) as child:
            return await _Session(spec, options, ctx, child).play()


class _Session:
    """The state of one run: the peer, the mapper, pending approvals, and how the turn ended."""

    def __init__(
        self, spec: AgentRunSpec, opts: CodexAppServerOptions, ctx: RunContext, child: ChildProcess
    ) -> None:
        self.spec, self.opts, self.ctx, self.child = spec, opts, ctx, child
        base_url = model_api_url(opts.config, spec.env, opts.codex_home)
        self.mapper = TurnMapper(reconnects=Reconnects(opts.max_reconnects, base_url))
        self.thread_id: str | None = None
        self.rollout: Path | None = None  # the thread's rollout file (None for an ephemeral thread)
        self.stop = anyio.Event()
        self.stopping = anyio.Event()  # interrupt the turn: the user asked, or Codex kept reconnecting
        self.closed = False
        self.interrupt_sent = False
        self.startup = anyio.CancelScope()
        self.approvals: dict[str, anyio.CancelScope] = {}
        self.peer = JsonRpcPeer(
            child,
            on_notification=self._on_notification,
            on_request=self._on_request,
            on_error=self._on_error,
            closed_error=self._closed_error,
        )

    def _closed_error(self) -> HarnessError:
        return self.child.exit_error("codex app-server exited before answering")

    async def play(self) -> HarnessResult:
        result: HarnessResult | None = None
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._read)
            tg.start_soon(self._forward_interrupt)
            tg.start_soon(self._watch_interrupt)
            try:
                result = await self._turn()
            finally:
                with anyio.CancelScope(shield=True):
                    await self._settle_approvals("the run ended before a decision was made")
                tg.cancel_scope.cancel()
        assert result is not None  # _turn returns or raises
        return result

    async def _read(self) -> None:
        try:
            await self.peer.run()
        finally:
            self.closed = True
            self.stop.set()

    async def _turn(self) -> HarnessResult:
        with self.startup:
            await self._start_thread()
            params: dict[str, Any] = {
                "threadId": self.thread_id,
                "input": [{"type": "text", "text": self.spec.prompt, "text_elements": []}],
            }
            turn = await self._request("turn/start", params, self.opts.request_timeout)
            self.mapper.start_turn(str((turn.get("turn") or {}).get("id")))
        if self.startup.cancelled_caught:  # interrupted before the turn began
            return HarnessResult(status=RunStatus.INTERRUPTED, session_id=self.thread_id)
        await self.stop.wait()
        outcome = self.mapper.outcome
        if outcome is None and self.interrupt_sent and not self.closed:
            gave_up = self.mapper.gave_up
            return HarnessResult(
                status=RunStatus.INTERRUPTED if gave_up is None else RunStatus.FAILED,
                session_id=self.thread_id,
                usage=self.mapper.usage,
                error=None if gave_up is None else gave_up.to_info(),
            )
        if outcome is None:
            with anyio.move_on_after(2.0):
                await self.child.wait()
            raise self.child.exit_error("codex app-server exited in the middle of the turn")
        return outcome

    async def _request(self, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:  # noqa: ASYNC109
        try:
            result = await self.peer.request(method, params, timeout=timeout)
        except JsonRpcError as exc:
            raise ProtocolError(
                f"codex app-server refused {method}: {exc.message}", method=method, rpc_code=exc.code
            ) from None
        except TimeoutError:
            if self.closed:
                raise self._closed_error() from None
            raise ProtocolError(
                f"codex app-server did not answer {method} within {timeout:g}s; raise "
                "-o startup_timeout / -o request_timeout if the machine is slow"
            ) from None
        if not isinstance(result, dict):
            raise ProtocolError(f"unexpected result for {method}", line=str(result))
        return result

    async def _start_thread(self) -> None:
        spec, opts = self.spec, self.opts
        timeout = opts.startup_timeout
        await self._request(
            "initialize",
            {
                "clientInfo": {"name": "harness", "title": "Harness", "version": __version__},
                "capabilities": {"experimentalApi": False},
            },
            timeout,
        )
        await self.peer.notify("initialized")
        params: dict[str, Any] = {
            "cwd": str(spec.cwd),
            "approvalPolicy": spec.approval.value,
            "sandbox": spec.sandbox.value,
        }
        if spec.model is not None:
            params["model"] = spec.model
        if spec.system_prompt:
            params["developerInstructions"] = spec.system_prompt
        if spec.resume_session is not None:
            params.update(threadId=spec.resume_session, excludeTurns=True)
            try:
                result = await self._request("thread/resume", params, timeout)
            except ProtocolError as exc:
                missing = session_not_found(spec.resume_session, exc.message)
                if missing is not None:
                    raise missing from None
                raise ProtocolError(
                    f"{exc.message}. Check the session id (from the first run's "
                    "session_started) and that both runs use the same CODEX_HOME"
                ) from None
        else:
            if opts.ephemeral is not None:
                params["ephemeral"] = opts.ephemeral
            result = await self._request("thread/start", params, timeout)
        thread = result.get("thread") or {}
        self.thread_id = str(thread.get("id"))
        self.rollout = Path(thread["path"]) if isinstance(thread.get("path"), str) else None
        self.mapper.thread_id = self.thread_id
        await self.ctx.emit(
            SessionStarted(
                session_id=self.thread_id, resumed=spec.resume_session is not None, model=result.get("model")
            )
        )

    async def _forward_interrupt(self) -> None:
        await self.ctx.interrupt_requested.wait()
        self.stopping.set()

    async def _watch_interrupt(self) -> None:
        await self.stopping.wait()
        turn_id = self.mapper.turn_id
        if turn_id is None or self.thread_id is None:
            self.startup.cancel()
            return
        self.interrupt_sent = True
        try:
            await self.peer.request(
                "turn/interrupt",
                {"threadId": self.thread_id, "turnId": turn_id},
                timeout=self.opts.request_timeout,
            )
        except (JsonRpcError, TimeoutError, HarnessError) as exc:  # e.g. the turn just ended
            self.ctx.log.debug("turn_interrupt_failed", error=str(exc))
        with anyio.move_on_after(self.opts.interrupt_timeout):
            await self.stop.wait()
        self.stop.set()

    # -- wire callbacks ------------------------------------------------------------------------------------

    def _on_notification(self, method: str, params: Any, msg: dict[str, Any]) -> Awaitable[None]:
        # Deliberately not a coroutine function: in the usual case (one event, turn not over) it hands the
        # peer `emit`'s own awaitable, which saves a coroutine frame per notification; the peer awaits it in
        # its read loop either way, so backpressure is unchanged.
        if method == "serverRequest/resolved" and isinstance(params, dict):
            return self._settle_then_map(msg, params)
        mapper = self.mapper
        events = mapper.feed(msg)
        if mapper.gave_up is not None:
            self.stopping.set()
        if len(events) == 1 and mapper.outcome is None:
            return self.ctx.emit(events[0])
        return self._emit_all(events)

    async def _settle_then_map(self, msg: dict[str, Any], params: dict[str, Any]) -> None:
        await self._settle_approval(str(params.get("requestId")), "codex withdrew the request")
        await self._emit_all(self.mapper.feed(msg))

    async def _emit_all(self, events: list[HarnessEvent]) -> None:
        for event in events:
            await self.ctx.emit(event)
        if self.mapper.finished:  # only once the turn's last events are out: `_turn` returns on `stop`
            for event in await self._refused():
                await self.ctx.emit(event)
            self.stop.set()

    async def _refused(self) -> list[HarnessEvent]:
        """The tool calls Codex refused without an item (a patch in a read-only sandbox), from the rollout
        (see `harness_codex_common.rollout`), once its `task_complete` is in the file (Codex writes it
        asynchronously: at most a second's wait)."""
        rollout = self.rollout
        if rollout is None:
            return []
        tail = await self.ctx.read_side_input(f"rollout:{self.thread_id}", lambda: read_finished_tail(rollout))
        return refused_events(turn_records(tail), str(self.spec.cwd), self.mapper.tool_ids)

    async def _on_error(self, err: HarnessError) -> None:
        await self.ctx.emit(ErrorEvent(error=err.to_info()))

    async def _on_request(self, method: str, params: Any, msg: dict[str, Any]) -> Any:
        if method not in _APPROVALS or not isinstance(params, dict):
            await self.ctx.emit(ProviderRaw(method=method, payload=params))
            raise JsonRpcError(_METHOD_NOT_FOUND, f"harness does not handle the server request {method!r}")
        request = self._approval_request(method, params, str(msg.get("id")))
        decision = ApprovalDecision.ABORT
        with anyio.CancelScope() as scope:
            self.approvals[request.request_id] = scope
            try:
                decision = await self.ctx.request_approval(request)
            finally:
                self.approvals.pop(request.request_id, None)
        return {
            "decision": _WIRE_DECISION[decision if not scope.cancelled_caught else ApprovalDecision.ABORT]
        }

    def _approval_request(self, method: str, params: dict[str, Any], request_id: str) -> ApprovalRequested:
        item_id = str(params.get("itemId") or "")
        if method == "item/commandExecution/requestApproval":
            item = {
                "type": "commandExecution",
                "id": item_id,
                "command": params.get("command") or "",
                "cwd": params.get("cwd"),
                "commandActions": params.get("commandActions") or [],
                "status": "inProgress",
            }
            display = tool_calls(item, completed=False)[0].display
        else:
            calls = self.mapper.open_calls(item_id)
            if len(calls) == 1:
                display = calls[0].display
            else:
                paths = [c.display.path for c in calls if c.display.path]
                display = HarnessToolDetails(
                    kind=ToolKind.EDIT,
                    title="Editing files",
                    summary="\n".join(paths) or None,
                    raw={"grantRoot": params.get("grantRoot")},
                )
        return ApprovalRequested(
            request_id=request_id, tool_id=item_id or None, display=display, reason=params.get("reason")
        )

    async def _settle_approval(self, request_id: str, reason: str) -> None:
        scope = self.approvals.pop(request_id, None)
        if scope is None:
            return
        scope.cancel()
        await self.ctx.emit(
            ApprovalResolved(
                request_id=request_id, decision=ApprovalDecision.ABORT, decided_by="runner", reason=reason
            )
        )

    async def _settle_approvals(self, reason: str) -> None:
        for request_id in list(self.approvals):
            await self._settle_approval(request_id, reason)
