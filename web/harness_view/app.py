"""The viewer's web app: its routes (pages, live events, a run's files, approve and cancel, static files) behind
the guard (`guard.Guard`: token, CSRF, headers).

Knows HTTP (Starlette) and which module answers each route; the pages, the actions and the files are theirs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar
from urllib.parse import parse_qs, quote

from harness_core import HarnessError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from harness_view import actions
from harness_view.catalog import Filters
from harness_view.files import open_file
from harness_view.guard import Guard
from harness_view.live import run_events, runs_events
from harness_view.pages import NoSuchPage, Site
from harness_view.render import Links
from harness_view.settings import ViewerSettings

__all__ = ["create_app"]

_LINKS = Links()
T = TypeVar("T")
_NOTICES = {
    "approve": "Approved; the run goes on.",
    "deny": "Denied; the run goes on without it.",
    "abort": "Denied; the turn stops.",
    "cancel": "Cancelled.",
}


def create_app(settings: ViewerSettings, *, cwd: Path | None = None) -> ASGIApp:
    """The viewer of `settings.runs_dir` (and its batches; without `settings.batches`, the `*.results.jsonl`
    files of `cwd`), every route behind the guard."""
    site = Site(settings, cwd)

    def _filters(request: Request) -> tuple[Filters, str]:
        q = request.query_params
        return Filters(q.get("status", ""), q.get("provider", ""), q.get("session", ""), q.get("q", "")[:200]), \
            q.get("batch", "")

    async def runs_page(request: Request) -> Response:
        filters, batch = _filters(request)
        query = f"?{request.url.query}" if request.url.query else ""
        return HTMLResponse(site.runs(filters, batch, links=_LINKS, query=query,
                                      every=request.query_params.get("all") == "1"))

    async def runs_fragment(request: Request) -> Response:
        filters, batch = _filters(request)
        return HTMLResponse(site.runs(filters, batch, links=_LINKS, fragment=True,
                                      every=request.query_params.get("all") == "1"))

    async def runs_stream(request: Request) -> Response:
        return StreamingResponse(runs_events(site), media_type="text/event-stream")

    async def run_page(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        notice = _NOTICES.get(request.query_params.get("done", ""))
        return HTMLResponse(_found(lambda: site.run(run_id, links=_LINKS, notice=notice)))

    async def run_stream(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        _found(lambda: site.run_page(run_id))
        try:
            after = int(request.query_params.get("after", "-1"))
        except ValueError:
            after = -1
        return StreamingResponse(run_events(site, run_id, after, _LINKS), media_type="text/event-stream")

    async def run_file(request: Request) -> Response:
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
            actions.answer(settings.runs_dir, run_id, (form.get("request_id") or [""])[-1], decision)
        except HarnessError as exc:
            return _problem(site, run_id, exc.message)
        return RedirectResponse(f"/runs/{quote(run_id)}?done={decision}", status_code=303)

    async def cancel(request: Request) -> Response:
        run_id = request.path_params["run_id"]
        try:
            await actions.cancel(settings.runs_dir, run_id)
        except HarnessError as exc:
            return _problem(site, run_id, exc.message)
        return RedirectResponse(f"/runs/{quote(run_id)}?done=cancel", status_code=303)

    async def batches_page(request: Request) -> Response:
        return HTMLResponse(site.batches_page(links=_LINKS))

    async def batch_page(request: Request) -> Response:
        key = request.path_params["key"]
        return HTMLResponse(_found(lambda: site.batch_page(site.batch(key), links=_LINKS)))

    async def not_found(request: Request, exc: Exception) -> Response:
        detail = exc.detail if isinstance(exc, HTTPException) else "not found"
        status = exc.status_code if isinstance(exc, HTTPException) else 404
        return HTMLResponse(site.html("error.html", _LINKS, status=status, detail=detail), status_code=status)

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
    app = Starlette(routes=routes, exception_handlers={HTTPException: not_found},
                    middleware=[Middleware(Guard, settings=settings)])
    return app


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
