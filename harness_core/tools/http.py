"""Serving an ASGI app (the tool server's streamable HTTP endpoint) on 127.0.0.1, behind a bearer secret.

Uses uvicorn (a dependency of the `mcp` SDK) on the running asyncio loop: an ephemeral loopback port, no signal
handlers of its own (Ctrl-C stays the run's), a bounded shutdown. Knows nothing of tools or of MCP.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import socket
from collections.abc import AsyncIterator, Generator
from contextlib import asynccontextmanager

import anyio
import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["BearerGuard", "require_asyncio", "serve_loopback"]

_START_DEADLINE = 10.0
_STOP_DEADLINE = 5.0


class BearerGuard:
    """Lets through only requests with `Authorization: Bearer <secret>` (compared in constant time); 401 else."""

    def __init__(self, app: ASGIApp, secret: str) -> None:
        self._app = app
        self._expected = f"Bearer {secret}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"text/plain")]})
                await send({"type": "http.response.body", "body": b"missing or wrong bearer secret\n"})
                return
        await self._app(scope, receive, send)


class _QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield  # the run owns SIGINT/SIGTERM, not the tool server


@asynccontextmanager
async def serve_loopback(app: ASGIApp, secret: str) -> AsyncIterator[int]:
    """Serve `app` behind `BearerGuard` on 127.0.0.1 and give the port; stop (bounded) when the block ends.

    Raises:
        RuntimeError: not on asyncio (uvicorn runs only there), or the server did not start within 10 s.
    """
    require_asyncio()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    config = uvicorn.Config(BearerGuard(app, secret), log_config=None, access_log=False, lifespan="on",
                            timeout_graceful_shutdown=2, ws="none")
    server = _QuietServer(config)
    done = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_serve, server, sock, done)
        try:
            with anyio.fail_after(_START_DEADLINE):
                while not server.started:
                    if server.should_exit:
                        raise RuntimeError("the tool server's HTTP endpoint failed to start")
                    await anyio.sleep(0.01)
            yield port
        finally:
            server.should_exit = True
            with anyio.CancelScope(shield=True), anyio.move_on_after(_STOP_DEADLINE) as late:
                await done.wait()
            if late.cancelled_caught:
                tg.cancel_scope.cancel()


def require_asyncio() -> None:
    """Raises RuntimeError when the running loop is not asyncio's (uvicorn runs only there)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise RuntimeError("the tool server's HTTP endpoint needs the asyncio backend; agents that take stdio "
                           "MCP servers get the stdio bridge instead") from None


async def _serve(server: uvicorn.Server, sock: socket.socket, done: anyio.Event) -> None:
    try:
        await server.serve(sockets=[sock])
    finally:
        sock.close()
        done.set()
