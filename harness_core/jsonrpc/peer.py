"""A generic JSON-RPC 2.0 peer over a line channel (one JSON message per line).

Layer: jsonrpc. Knows nothing of any agent, nor of processes: it reads `bytes` lines (or `MessageTooLargeError`
values) from a `LineChannel` and writes lines to it. Methods are strings, params any JSON value. Ids, ordering
and errors: docs/providers.md (line protocols, `JsonRpcPeer`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

import anyio
from anyio.abc import TaskGroup

from harness_core._jsonlines import Line, MessageBatches, loads_line
from harness_core._logging import get_logger
from harness_core.errors import HarnessError, MessageTooLargeError, ProtocolError
from harness_core.jsonrpc.errors import INTERNAL_ERROR, METHOD_NOT_FOUND, JsonRpcError, LineChannel

__all__ = ["JsonRpcPeer", "NotificationHandler"]

log = get_logger(__name__)


class NotificationHandler(Protocol):
    """The hot-path contract, stated once for every callback of a read loop (this one, `RunContext.emit_now`, a
    provider's own per-line handlers): return None when the work is done (the usual case, so a streamed token
    costs no coroutine), or the awaitable the caller must await before it reads on (backpressure: the consumer is
    behind, or the work has to wait). A plain `async def` satisfies it too (it always returns the awaitable).

    As the JSON-RPC peer's `on_notification`: called in order for each notification with its method, params and
    the whole message."""

    def __call__(self, method: str, params: Any, msg: dict[str, Any], /) -> Awaitable[None] | None: ...

RequestHandler = Callable[[str, Any, dict[str, Any]], Awaitable[Any]]
ErrorHandler = Callable[[HarnessError], Awaitable[None]]

_ABANDONED_KEEP = 1024  # timed-out ids remembered so their late responses are not reported as unknown
_RESERVED = frozenset({"jsonrpc", "id", "method", "params", "result", "error"})
"""What `request(fields=...)` may not set: the envelope, and the members that make a message a response."""


class _Waiter:
    __slots__ = ("error", "event", "result")

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.result: Any = None
        self.error: BaseException | None = None


def _default_closed_error() -> HarnessError:
    return ProtocolError("the JSON-RPC connection closed before a response arrived")


def _dumps(msg: dict[str, Any]) -> bytes:
    return json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode()


class JsonRpcPeer:
    """One side of a JSON-RPC connection. Start `run()` in a task group, then `request`/`notify`."""

    def __init__(
        self,
        channel: LineChannel,
        *,
        on_notification: NotificationHandler,
        on_request: RequestHandler | None = None,
        on_error: ErrorHandler | None = None,
        closed_error: Callable[[], HarnessError] | None = None,
    ) -> None:
        self._channel = channel
        self._on_notification = on_notification
        self._on_request = on_request
        self._on_error = on_error
        self._closed_error = closed_error or _default_closed_error
        self._next_id = 1
        self._pending: dict[int, _Waiter] = {}
        self._abandoned: dict[int, str] = {}
        self._closed = False
        self._running = False

    @property
    def closed(self) -> bool:
        """True once the connection has closed (EOF, or `run` ended)."""
        return self._closed

    # -- outbound ------------------------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        timeout: float | None = 30.0,  # noqa: ASYNC109 - a per-request deadline is the documented API
        fields: Mapping[str, Any] | None = None,
    ) -> Any:
        """Send a request and wait for its result. `fields` are members of the request beside `params`, at its
        top level (a protocol's own extension there, such as a trace-context carrier); never `jsonrpc`, `id`,
        `method` or `params`, nor `result` or `error` (a response's, which some peers classify a message by).

        Raises:
            JsonRpcError: the other side answered with an error.
            TimeoutError: no response within `timeout` seconds (the message names the method).
            HarnessError: the connection closed first (whatever `closed_error()` builds).
        """
        if fields and not _RESERVED.isdisjoint(fields):
            raise ValueError(f"JSON-RPC request fields may not set {sorted(_RESERVED.intersection(fields))}")
        if self._closed:
            raise self._closed_error()
        rid = self._next_id
        self._next_id = rid + 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        if fields:
            msg.update(fields)
        waiter = _Waiter()
        self._pending[rid] = waiter
        try:
            await self._channel.send_line(_dumps(msg))
            if timeout is None:
                await waiter.event.wait()
            else:
                with anyio.move_on_after(timeout):
                    await waiter.event.wait()
                if not waiter.event.is_set():
                    raise TimeoutError(
                        f"no response to JSON-RPC request {method!r} (id {rid}) within {timeout:g}s"
                    )
        finally:
            # Timed out or cancelled: remember the id so a late response is dropped, not reported as unknown.
            if self._pending.pop(rid, None) is not None:
                self._abandon(rid, method)
        if waiter.error is not None:
            raise waiter.error
        return waiter.result

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification.

        Raises:
            HarnessError: the connection is closed (whatever `closed_error()` builds).
        """
        if self._closed:
            raise self._closed_error()
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        await self._channel.send_line(_dumps(msg))

    def _abandon(self, rid: int, method: str) -> None:
        self._abandoned[rid] = method
        if len(self._abandoned) > _ABANDONED_KEEP:
            del self._abandoned[next(iter(self._abandoned))]

    # -- inbound -------------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Read and dispatch until EOF, then fail every pending request at once and return.

        Inbound requests still being handled at EOF are cancelled (their reply could not be sent).
        """
        if self._running:
            raise RuntimeError("JsonRpcPeer.run() is already running")
        self._running = True
        try:
            async with anyio.create_task_group() as tg:
                try:
                    await self._read_loop(tg)
                finally:
                    self._close()
                    tg.cancel_scope.cancel()
        finally:
            self._close()

    async def _read_loop(self, tg: TaskGroup) -> None:
        on_notification = self._on_notification
        # A chunk's lines at a time (`MessageBatches`), dispatched in a plain loop; nothing more is read meanwhile,
        # and every notification is still awaited in order (backpressure).
        batches = MessageBatches(self._channel.lines(), self._odd_line)
        async for batch in batches:
            for msg in batch:
                method = msg.get("method")
                if method is not None:
                    if type(method) is not str:
                        await self._report(ProtocolError("JSON-RPC method is not a string", line=batches.line_of(msg)))
                        continue
                    rid = msg.get("id")
                    if rid is None:
                        try:
                            pending = on_notification(method, msg.get("params"), msg)
                            if pending is not None:
                                await pending
                        except Exception as exc:  # noqa: BLE001 - a handler must never kill the read loop
                            line = batches.line_of(msg)
                            await self._report(_handler_failed(f"notification {method!r}", exc, line))
                    else:
                        tg.start_soon(self._serve, rid, method, msg)
                else:
                    await self._resolve(msg, batches)

    async def _odd_line(self, line: Line) -> None:
        """A line that is not a JSON object (`MessageBatches` parsed the others)."""
        if isinstance(line, MessageTooLargeError):
            await self._report(line)
            return
        try:
            loads_line(line)
        except ValueError:
            await self._report(ProtocolError("malformed JSON-RPC line (not JSON)", line=line))
            return
        await self._report(ProtocolError("JSON-RPC message is not an object", line=line))

    async def _resolve(self, msg: dict[str, Any], batches: MessageBatches) -> None:
        rid = msg.get("id")
        waiter = self._pending.pop(rid) if type(rid) is int and rid in self._pending else None
        if waiter is None:
            if type(rid) is int and rid in self._abandoned:
                log.debug("jsonrpc_late_response", id=rid, method=self._abandoned.pop(rid))
                return
            what = (
                "JSON-RPC error with no request id" if "error" in msg else "JSON-RPC response to unknown id"
            )
            await self._report(ProtocolError(what, line=batches.line_of(msg)))
            return
        if "error" in msg:
            waiter.error = JsonRpcError.from_dict(msg["error"])
        elif "result" in msg:
            waiter.result = msg["result"]
        else:
            line = batches.line_of(msg)
            waiter.error = ProtocolError("JSON-RPC response has neither result nor error", line=line)
        waiter.event.set()

    async def _serve(self, rid: Any, method: str, msg: dict[str, Any]) -> None:
        """Handle one inbound request in its own task and always reply."""
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": rid}
        try:
            if self._on_request is None:
                raise JsonRpcError(METHOD_NOT_FOUND, f"method not found: {method}")
            reply["result"] = await self._on_request(method, msg.get("params"), msg)
        except JsonRpcError as exc:
            reply["error"] = exc.to_dict()
        except Exception as exc:  # noqa: BLE001 - becomes a JSON-RPC internal error reply
            await self._report(_handler_failed(f"request {method!r}", exc, None))
            reply["error"] = {"code": INTERNAL_ERROR, "message": f"internal error handling {method}: {exc}"}
        if self._closed:
            return
        try:
            await self._channel.send_line(_dumps(reply))
        except HarnessError as exc:
            await self._report(exc)

    async def _report(self, err: HarnessError) -> None:
        if self._on_error is None:
            log.warning("jsonrpc_error", code=err.code, error=err.message)
            return
        try:
            await self._on_error(err)
        except Exception:  # the error sink failing must not kill the read loop either
            log.exception("jsonrpc_on_error_failed", code=err.code)

    def _close(self) -> None:
        if self._closed:
            return
        self._closed = True
        pending, self._pending = self._pending, {}
        for waiter in pending.values():
            waiter.error = self._closed_error()
            waiter.event.set()


def _handler_failed(what: str, exc: Exception, line: bytes | None) -> HarnessError:
    if isinstance(exc, HarnessError):
        return exc
    return ProtocolError(f"handler for {what} failed: {type(exc).__name__}: {exc}", line=line)
