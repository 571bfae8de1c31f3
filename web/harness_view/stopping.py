"""The viewer's stop (Ctrl-C): a request that has not answered a moment after it (a page still rendering, an answer
waiting on its run) is cut and answered 503, so none outlives the server's grace to be cancelled with a traceback.

Knows ASGI and anyio; nothing of the pages, the runs or uvicorn (the server says it stops through `stopping()`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import anyio
from starlette.responses import HTMLResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["LOOK", "WAIT", "CutOnStop", "cut_on_stop", "never"]

LOOK = 0.1
"""Seconds between looks at `stopping()`."""
WAIT = 1.0
"""Seconds a request in flight gets, once the viewer stops, to answer on its own (less than the server's grace)."""


def never() -> bool:
    """The `stopping()` of a viewer that is never stopped (an app made for a test, a bundle)."""
    return False


async def cut_on_stop(stopping: Callable[[], bool], scope: anyio.CancelScope, *, after: float = 0.0,
                      unless: Callable[[], bool] = never) -> None:
    """Cancel `scope` once `stopping()` has been true for `after` s, unless `unless()` is true by then (it stops
    looking as soon as it is). Start it in a task group beside the work it bounds."""
    while not stopping():  # a flag the server sets from its signal handler, not an anyio event: looked at
        if unless():
            return
        await anyio.sleep(LOOK)
    await anyio.sleep(after)
    if not unless():
        scope.cancel()


class CutOnStop:
    """Around the app: a request with no answer begun `WAIT` s after the viewer stops is cut and gets `page()`
    (503). One whose answer began (a live stream, a file being sent) is left to end: the streams end on their own."""

    def __init__(self, app: ASGIApp, stopping: Callable[[], bool], page: Callable[[], str]) -> None:
        self.app = app
        self.stopping = stopping
        self.page = page

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = False

        async def sending(message: Message) -> None:
            nonlocal began
            if message["type"] == "http.response.start":
                began = True
            await send(message)

        with anyio.CancelScope() as work:
            async with anyio.create_task_group() as watch:
                watch.start_soon(functools.partial(cut_on_stop, self.stopping, work, after=WAIT, unless=lambda: began))
                await self.app(scope, receive, sending)
                watch.cancel_scope.cancel()  # answered: stop watching
        if work.cancelled_caught and not began:
            await HTMLResponse(self.page(), status_code=503, headers={"connection": "close"})(scope, receive, send)
