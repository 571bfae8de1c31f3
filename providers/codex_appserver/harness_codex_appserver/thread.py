"""One `codex app-server` process and its thread: the JSON-RPC peer, the thread's settings, the turn being played.

Layer: provider lifecycle. Knows the app-server's requests around a turn (initialize, thread/start|resume,
model/list, turn/steer) and where each message goes; `broken` says why the thread can take no more turns.
Knows nothing of rendering, run logs or how approvals are decided. Routing: providers/codex_appserver/README.md.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import anyio
from harness_codex_common import session_not_found
from harness_core import (
    AgentRunSpec,
    HarnessError,
    HarnessResult,
    Notice,
    ProtocolError,
    ProviderRaw,
    SessionSpec,
    Usage,
)
from harness_core.provider import ChildProcess, JsonRpcError, JsonRpcPeer, RunContext

from harness_codex_appserver._version import __version__
from harness_codex_appserver.mapping import TEXT_DELTA
from harness_codex_appserver.notices import CONFIG_WARNING, config_warning
from harness_codex_appserver.options import CodexAppServerOptions
from harness_codex_appserver.params import Sticky, thread_params, turn_params
from harness_codex_appserver.payloads import usage_from_wire
from harness_codex_appserver.turn import APPROVALS, Turn

__all__ = ["AppThread"]

_METHOD_NOT_FOUND = -32601  # the JSON-RPC 2.0 error code
_NO_TURN = ("no active turn", "expected active turn")  # turn/steer refused: the turn is over (or another runs)


class AppThread:
    """The process's peer and its thread. `open` starts (or resumes) the thread once; `play` plays one turn on it;
    `steer` adds input to the turn being played. `closed` once the process's stdout ended."""

    def __init__(self, opts: CodexAppServerOptions, child: ChildProcess, log: Any) -> None:
        self.opts, self.child, self.log = opts, child, log
        self.thread_id: str | None = None
        self.rollout: Path | None = None  # the thread's rollout file (None for an ephemeral thread)
        self.sticky = Sticky()  # the thread's settings, once open
        self.total: Usage | None = None  # the thread's cumulative token usage, as last reported
        self.closed = False
        self.turn: Turn | None = None
        self.last_turn_id: str | None = None  # the latest turn/start's answer
        self.broken: str | None = None  # why the thread can no longer be trusted with a turn (see `Turn`)
        self.notices: list[Notice] = []  # Codex's warnings sent while no turn played, for the next turn to tell
        self.peer = JsonRpcPeer(
            child,
            on_notification=self._on_notification,
            on_request=self._on_request,
            on_error=self._on_error,
            closed_error=self.closed_error,
        )

    def closed_error(self) -> HarnessError:
        return self.child.exit_error("codex app-server exited before answering")

    async def read(self) -> None:
        """The peer's read loop, for the life of the process."""
        try:
            await self.peer.run()
        finally:
            self.closed = True
            if self.turn is not None:
                self.turn.stop.set()
                self.turn.ready.set()

    async def request(self, method: str, params: dict[str, Any], timeout: float,  # noqa: ASYNC109
                      trace: Mapping[str, str] | None = None) -> dict[str, Any]:
        """`method`, its result; `trace` (a W3C carrier, `ctx.trace_context()`) goes in the request's top-level
        `trace` member, where the app-server takes the parent of its own spans for the request."""
        try:
            result = await self.peer.request(method, params, timeout=timeout, fields=trace_field(trace))
        except JsonRpcError as exc:
            raise ProtocolError(
                f"codex app-server refused {method}: {exc.message}", method=method, rpc_code=exc.code
            ) from None
        except TimeoutError:
            if self.closed:
                raise self.closed_error() from None
            raise ProtocolError(
                f"codex app-server did not answer {method} within {timeout:g}s; raise "
                "-o startup_timeout / -o request_timeout if the machine is slow"
            ) from None
        if not isinstance(result, dict):
            raise ProtocolError(f"unexpected result for {method}", line=str(result))
        return result

    async def open(self, spec: AgentRunSpec | SessionSpec, trace: Mapping[str, str] | None = None) -> None:
        """`initialize`, then `thread/start` (or `thread/resume` of `spec.resume_session`), carrying `trace`.

        Raises:
            SessionNotFoundError: the thread to resume is not in this CODEX_HOME.
            ProtocolError: the app-server refused or did not answer.
        """
        timeout = self.opts.startup_timeout
        await self.request(
            "initialize",
            {
                "clientInfo": {"name": "harness", "title": "Harness", "version": __version__},
                "capabilities": {"experimentalApi": False},
            },
            timeout,
        )
        await self.peer.notify("initialized")
        params = thread_params(spec, ephemeral=self.opts.ephemeral)
        if spec.resume_session is not None:
            params.update(threadId=spec.resume_session, excludeTurns=True)
            try:
                result = await self.request("thread/resume", params, timeout, trace)
            except ProtocolError as exc:
                missing = session_not_found(spec.resume_session, exc.message)
                if missing is not None:
                    raise missing from None
                raise ProtocolError(
                    f"{exc.message}. Check the session id (from the first run's "
                    "session_started) and that both runs use the same CODEX_HOME"
                ) from None
        else:
            result = await self.request("thread/start", params, timeout, trace)
        thread = result.get("thread") or {}
        self.thread_id = str(thread.get("id"))
        self.rollout = Path(thread["path"]) if isinstance(thread.get("path"), str) else None
        self.sticky = Sticky.of(result, spec.sandbox)

    async def params_for(self, spec: AgentRunSpec, ctx: RunContext, *, live: bool) -> dict[str, Any]:
        """The `turn/start` params of `spec` (see `params.turn_params`), asking `model/list` first when the
        effort must be checked or put back."""
        sticky = self.sticky
        if sticky.needs_catalogue(spec):
            sticky.catalogue = await self._catalogue()
        assert self.thread_id is not None
        params, warning = turn_params(self.thread_id, spec, sticky, live=live)
        if warning is not None:
            await ctx.emit(Notice(level="warning", code="effort_not_restored", message=warning))
        return params

    async def _catalogue(self) -> dict[str, dict[str, Any]]:
        """`model/list`'s entries (hidden ones too) by model id; empty when it cannot be had (logged)."""
        try:
            result = await self.request("model/list", {"includeHidden": True}, self.opts.request_timeout)
        except ProtocolError as exc:
            if self.closed:
                raise
            self.log.debug("codex_model_list_failed", error=str(exc))
            return {}
        entries = result.get("data") or []
        return {str(e.get("id")): e for e in entries if isinstance(e, dict)}

    async def play(
        self,
        spec: AgentRunSpec,
        ctx: RunContext,
        *,
        live: bool,
        resumed: bool = False,
        prelude: Callable[[], Awaitable[None]] | None = None,
    ) -> HarnessResult:
        """Play one turn of `spec` on the thread, its events into `ctx` (`prelude`: what to do first, inside the
        turn's interruptible start-up, e.g. open the thread). Raises `ProcessExitedError` when the process is
        gone."""
        turn = Turn(self, spec, ctx, live=live, resumed=resumed)
        self.turn = turn
        try:
            while self.notices:
                await ctx.emit(self.notices.pop(0))
            return await turn.play(prelude)
        finally:
            if self.turn is turn:
                self.turn = None

    async def steer(self, text: str) -> bool:
        """Add `text` to the turn being played (`turn/steer`, with the turn's id as `expectedTurnId`): True once
        Codex accepted it, False when no turn is running.

        Raises:
            ProtocolError: Codex refused the input for another reason, or did not answer.
        """
        turn = self.turn
        if turn is None or self.closed:
            return False
        with anyio.move_on_after(self.opts.request_timeout):
            await turn.ready.wait()  # the turn's id is known (turn/start answered), or the turn is over
        turn_id = turn.mapper.turn_id
        if turn_id is None or turn.stop.is_set() or turn.mapper.finished or self.thread_id is None:
            return False
        params = {
            "threadId": self.thread_id,
            "input": [{"type": "text", "text": text, "text_elements": []}],
            "expectedTurnId": turn_id,
        }
        try:
            await self.peer.request("turn/steer", params, timeout=self.opts.request_timeout,
                                    fields=trace_field(turn.ctx.trace_context()))
        except JsonRpcError as exc:
            if any(part in exc.message for part in _NO_TURN):
                return False
            raise ProtocolError(f"codex app-server refused turn/steer: {exc.message}", method="turn/steer",
                                rpc_code=exc.code) from None
        except TimeoutError:
            if self.closed:
                return False
            raise ProtocolError(f"codex app-server did not answer turn/steer within {self.opts.request_timeout:g}s; "
                                "raise -o request_timeout if the machine is slow") from None
        if self.turn is turn and not turn.stop.is_set():  # else the turn is over and its run may have returned
            await turn.ctx.emit(Notice(level="info", code="steered", message=text))
        return True

    # -- wire callbacks: to the turn being played ----------------------------------------------------------

    def _on_notification(self, method: str, params: Any, msg: dict[str, Any]) -> Awaitable[None] | None:
        turn = self.turn
        if method == TEXT_DELTA and turn is not None and params.__class__ is dict:  # the hot path
            return turn.on_text_delta(params, msg)
        tokens = method == "thread/tokenUsage/updated" and isinstance(params, dict)
        if tokens and params.get("threadId") in (None, self.thread_id):
            self.total = usage_from_wire((params.get("tokenUsage") or {}).get("total"))
        if method == CONFIG_WARNING:  # Codex's own warning, once after `initialize`: told in a turn either way
            return self._cli_warning(params)
        if turn is None:
            return self._between_turns(method)
        return turn.on_notification(method, params, msg)

    async def _cli_warning(self, params: Any) -> None:
        notice = config_warning(params)
        if self.turn is None:  # a live session opening: its first turn tells it
            self.notices.append(notice)
        else:
            await self.turn.ctx.emit(notice)

    async def _between_turns(self, method: str) -> None:
        self.log.debug("codex_notification_between_turns", method=method)

    async def _on_request(self, method: str, params: Any, msg: dict[str, Any]) -> Any:
        turn = self.turn
        if method in APPROVALS and isinstance(params, dict):
            if turn is None:  # no turn to ask for: refuse, as an abort would
                self.log.warning("codex_approval_between_turns", method=method)
                return {"decision": "cancel"}
            return await turn.on_approval(method, params, msg)
        if turn is not None:
            await turn.ctx.emit(ProviderRaw(method=method, payload=params))
        raise JsonRpcError(_METHOD_NOT_FOUND, f"harness does not handle the server request {method!r}")

    async def _on_error(self, err: HarnessError) -> None:
        turn = self.turn
        if turn is None:
            self.log.warning("codex_protocol_error_between_turns", error=str(err))
            return
        await turn.on_error(err)


def trace_field(carrier: Mapping[str, str] | None) -> dict[str, Any] | None:
    """The app-server's top-level `trace` member for a W3C carrier (`{"traceparent", "tracestate"}`, as its
    `W3cTraceContext`), None for no carrier: the request goes without one (the app-server then falls back to its
    own environment's `TRACEPARENT`)."""
    if not carrier or not carrier.get("traceparent"):
        return None
    return {"trace": {key: carrier[key] for key in ("traceparent", "tracestate") if carrier.get(key)}}
