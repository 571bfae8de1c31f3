"""The viewer's web app: its routes (pages, live events, a run's files, approve and cancel, static files) behind
the guard (`guard.Guard`: token, CSRF, headers).

Knows HTTP (Starlette) and which module answers each route; the pages, the actions and the files are theirs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TypeVar
from urllib.parse import parse_qs, quote

import anyio
from harness_core import HarnessError
from harness_core.store import check_runs_dir
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from harness_view import actions, flash
from harness_view.catalog import Filters
from harness_view.files import open_file, own_log
from harness_view.guard import Guard
from harness_view.live import run_events, runs_events
from harness_view.pages import NoSuchPage, RunPage, Site
from harness_view.render import Links
from harness_view.settings import ViewerSettings
from harness_view.stopping import CutOnStop, never

__all__ = ["create_app"]

_LINKS = Links()
T = TypeVar("T")
_SAID = {"approve": "approved", "deny": "denied", "abort": "denied, and the turn stopped"}


def create_app(settings: ViewerSettings, *, cwd: Path | None = None,
               stopping: Callable[[], bool] = never) -> ASGIApp:
    """The viewer of `settings.runs_dir` (and its batches; without `settings.batches`, the `*.results.jsonl`
    files of `cwd`), every route behind the guard. `stopping()` says the server is stopping: the live streams and
    the actions' waits end, and a request still unanswered a moment later is cut (`stopping.CutOnStop`)."""
    site = Site(settings, cwd)
    # A page reads logs and renders in a worker thread (`_off_loop`): the event loop (the live streams, the other
    # tabs, approve and cancel) never waits on it, and a viewer that stops need not wait for it either.

    def _filters(request: Request) -> tuple[Filters, str]:
        q = request.query_params
        return Filters(q.get("status", ""), q.get("provider", ""), q.get("session", ""), q.get("q", "")[:200]), \
            q.get("batch", "")

    async def runs_page(request: Request) -> Response:
        filters, batch = _filters(request)
        query = f"?{request.url.query}" if request.url.query else ""
        return HTMLResponse(await _off_loop(lambda: site.runs(filters, batch, links=_LINKS, query=query,
                                                              every=request.query_params.get("all") == "1")))

    async def runs_fragment(request: Request) -> Response:
        filters, batch = _filters(request)
        return HTMLResponse(await _off_loop(lambda: site.runs(filters, batch, links=_LINKS, fragment=True,
                                                              every=request.query_params.get("all") == "1")))

    streams = [0]  # event streams open now (bounded by settings.max_streams)

    def streaming(events: AsyncIterator[str]) -> Response:
        if streams[0] >= settings.max_streams:
            return HTMLResponse(site.html("error.html", _LINKS, status=503, detail=(
                f"Too many live pages open ({streams[0]}): close some of this viewer's tabs, then reload this one.")),
                status_code=503)

        streams[0] += 1  # counted from now (a burst of pages cannot pass the cap) until its answer ends
        return _Counted(streams, events, media_type="text/event-stream")

    async def runs_stream(request: Request) -> Response:
        return streaming(runs_events(site, stopping=stopping))

    async def run_page(request: Request) -> Response:
        run_id = request.path_params["run_id"]

        def render() -> str:
            page = _found(lambda: site.run_page(run_id))
            return site.run(run_id, links=_LINKS, page=page, notice=_notice(settings, page, request))

        return HTMLResponse(await _off_loop(render))

    async def run_stream(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        if await anyio.to_thread.run_sync(own_log, settings.runs_dir, run_id) is None:  # a look, not a parse
            raise HTTPException(404, f"no run {run_id} here")
        try:
            after = int(request.query_params.get("after", "-1"))
        except ValueError:
            after = -1
        shown = request.query_params.get("status", "")[:40]  # the status the page shows: compared, never shown
        return streaming(run_events(site, run_id, after, _LINKS, shown=shown, stopping=stopping))

    def run_file(request: Request) -> Response:
        opened = open_file(settings.runs_dir, request.path_params["run_id"], request.path_params["which"])
        if opened is None:
            raise HTTPException(404, "no such file of a run here")
        name, chunks = opened
        return StreamingResponse(chunks, media_type="text/plain; charset=utf-8",
                                 headers={"content-disposition": f"inline; filename=\"{quote(name)}\""})

    async def approve(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        decision = (form.get("decision") or [""])[-1]
        try:
            resolved = await actions.answer(settings.runs_dir, run_id, (form.get("request_id") or [""])[-1],
                                            decision, stopping=stopping)
        except HarnessError as exc:
            said = exc.message
            return await _off_loop(lambda: _problem(site, run_id, said))
        # the page reads the outcome back from the run's log: the URL names the request, never what to say
        return RedirectResponse(f"/runs/{quote(run_id)}?answered={quote(resolved.request_id)}", status_code=303)

    async def cancel(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        try:
            await actions.cancel(settings.runs_dir, run_id, stopping=stopping)
        except HarnessError as exc:
            said = exc.message
            return await _off_loop(lambda: _problem(site, run_id, said))
        # the page says "Cancelled" only with this stamp, fresh and for this run: a URL typed or shared says nothing
        return RedirectResponse(f"/runs/{quote(run_id)}?cancelled={flash.stamp(settings, 'cancel', run_id)}",
                                status_code=303)

    async def batches_page(request: Request) -> Response:
        return HTMLResponse(await _off_loop(lambda: site.batches_page(links=_LINKS)))

    async def batch_page(request: Request) -> Response:
        key = request.path_params["key"]
        return HTMLResponse(await _off_loop(lambda: _found(lambda: site.batch_page(site.batch(key), links=_LINKS))))

    async def not_found(request: Request, exc: Exception) -> Response:
        detail = exc.detail if isinstance(exc, HTTPException) else "not found"
        status = exc.status_code if isinstance(exc, HTTPException) else 404
        return HTMLResponse(site.html("error.html", _LINKS, status=status, detail=detail), status_code=status)

    async def harness_error(request: Request, exc: Exception) -> Response:
        """A refusal of the run store (an unsafe runs dir, ...): a page with its message, which says what to do."""
        detail = exc.message if isinstance(exc, HarnessError) else "the viewer failed"
        return HTMLResponse(site.html("error.html", _LINKS, status=500, detail=detail), status_code=500)

    routes = [
        Route("/", runs_page),
        Route("/fragments/runs", runs_fragment),
        Route("/events", runs_stream),
        Route("/runs/{run_id}", run_page),
        Route("/runs/{run_id}/events", run_stream),
        Route("/runs/{run_id}/approve", approve, methods=["POST"]),
        Route("/runs/{run_id}/cancel", cancel, methods=["POST"]),
        Route("/runs/{run_id}/{which}", run_file),
        Route("/batches", batches_page),
        Route("/batches/{key}", batch_page),
        Mount("/static", StaticFiles(packages=[("harness_view", "static")]), name="static"),
    ]

    def stopped() -> str:
        return site.html("error.html", _LINKS, status=503, detail=(
            "The viewer stopped (Ctrl-C) before this page was ready: start `harness view` again, then reload."))

    app = Starlette(routes=routes, exception_handlers={HTTPException: not_found, HarnessError: harness_error},
                    middleware=[Middleware(Guard, settings=settings),
                                Middleware(CutOnStop, stopping=stopping, page=stopped),
                                Middleware(_SafeRunsDir, site=site)])
    return app


async def _off_loop(make: Callable[[], T]) -> T:
    """`make()` in a worker thread (it reads logs and renders); a request cut when the viewer stops leaves it
    behind (its result unused) instead of waiting for it."""
    return await anyio.to_thread.run_sync(make, abandon_on_cancel=True)


def _notice(settings: ViewerSettings, page: RunPage, request: Request) -> str | None:
    """What the run's log says of the request just answered (`?answered=REQUEST_ID`), or that this viewer just
    cancelled it (`?cancelled=STAMP`, fresh and signed for this run: `flash`), with the status it has now; nothing
    else from the URL reaches the page."""
    answered = request.query_params.get("answered")
    if answered:
        block = page.timeline.approval(answered)
        resolved = block.resolved if block is not None else None
        if resolved is None:
            return None
        by = f" ({resolved.reason})" if resolved.reason else ""
        return f"Request {resolved.request_id} {_SAID[resolved.decision.value]}{by}, as the run recorded it."
    if flash.fresh(settings, "cancel", page.run_id, request.query_params.get("cancelled", "")):  # the log's status
        return f"Cancel asked; the run is {page.status}." if page.live else f"Cancelled: the run is {page.status}."
    return None


def _found(make: Callable[[], T]) -> T:
    """`make()`, or the 404 its NoSuchPage means."""
    try:
        return make()
    except NoSuchPage as exc:
        raise HTTPException(404, str(exc)) from None


def _problem(site: Site, run_id: str, message: str) -> Response:
    """The run's page with what went wrong on top (409: the run was not in a state to do it)."""
    try:
        return HTMLResponse(site.run(run_id, links=_LINKS, problem=message), status_code=409)
    except NoSuchPage as exc:
        raise HTTPException(404, str(exc)) from None


class _Counted(StreamingResponse):
    """An event stream that gives back its place among the open ones (`streams`) when its answer ends: the page
    went, the viewer stops, or it never began (the client left first)."""

    def __init__(self, streams: list[int], events: AsyncIterator[str], *, media_type: str) -> None:
        super().__init__(events, media_type=media_type)
        self.streams = streams

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.streams[0] -= 1


class _SafeRunsDir:
    """Checks the runs dir before every request (it may have been made group-writable since the start): an unsafe
    one gets the error page with the store's message (`chmod 700 …`), and no page is read nor answer written."""

    def __init__(self, app: ASGIApp, site: Site) -> None:
        self.app = app
        self.site = site

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            try:
                await anyio.to_thread.run_sync(check_runs_dir, self.site.runs_dir)
            except HarnessError as exc:
                page = self.site.html("error.html", _LINKS, status=500, detail=exc.message)
                await HTMLResponse(page, status_code=500)(scope, receive, send)
                return
        await self.app(scope, receive, send)
