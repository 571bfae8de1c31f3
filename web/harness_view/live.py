"""Live pages as server-sent events: a run's log followed (each section an event changed, re-rendered) until its
`done`, and the runs directory watched (an event whenever the list would show something new).

Knows the run store's follower, the timeline and the pages; nothing of HTTP beyond the SSE line format.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

import anyio
from harness_core.store import LogFollower, list_runs, log_path, summarize

from harness_view.catalog import runs_signature
from harness_view.pages import Site
from harness_view.render import Links
from harness_view.timeline import HEAD, RESULT, Timeline

__all__ = ["POLL", "run_events", "runs_events", "sse"]

POLL = 0.2
"""Seconds between looks at a log or the runs directory."""
_STATUS_EVERY = 2.0
_PING_EVERY = 15.0


def sse(event: str, data: Any) -> str:
    """One server-sent event (`data` as JSON on one line)."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


async def run_events(site: Site, run_id: str, after: int, links: Links) -> AsyncIterator[str]:
    """The sections of run `run_id`'s page that change after event `after` (`block` events: key and HTML), as its
    log grows, then `end`. The caller checked the run exists."""
    path = log_path(site.runs_dir, run_id)
    timeline = Timeline()
    status = ""
    pinged = time.monotonic()
    with LogFollower(path, on_bad_line=lambda _bad: None) as follower:
        while True:
            changed: list[str] = []
            for event in follower.read():
                keys = timeline.apply(event)
                if event.seq > after:
                    changed.extend(keys)
            summary = summarize(path)
            if summary.status != status:
                changed.extend([HEAD, RESULT] if status else [])
                status = summary.status
            if changed:
                page = site.page_of(run_id, timeline, summary)
                for key in dict.fromkeys(changed):
                    yield sse("block", {"key": key, "html": site.section(page, key, links=links)})
            if follower.over:
                yield sse("end", {"status": status})
                return
            if time.monotonic() - pinged > _PING_EVERY:
                pinged = time.monotonic()
                yield ": ping\n\n"
            await anyio.sleep(POLL)


async def runs_events(site: Site) -> AsyncIterator[str]:
    """A `runs` event whenever a run starts, writes, ends or changes status (a lost writer, an approval asked)."""
    signature = runs_signature(site.runs_dir)
    statuses = _statuses(site)
    checked = pinged = time.monotonic()
    yield ": watching\n\n"
    while True:
        await anyio.sleep(POLL * 2)
        now = time.monotonic()
        seen = runs_signature(site.runs_dir)
        fresh = None
        if seen != signature or (now - checked > _STATUS_EVERY and _any_live(statuses)):
            fresh, checked = _statuses(site), now
        if seen != signature or (fresh is not None and fresh != statuses):
            signature = seen
            statuses = fresh if fresh is not None else statuses
            yield sse("runs", {"count": len(statuses)})
        elif now - pinged > _PING_EVERY:
            pinged = now
            yield ": ping\n\n"


def _statuses(site: Site) -> dict[str, str]:
    try:
        return {run.run_id: run.status for run in list_runs(site.runs_dir)}
    except OSError:
        return {}


def _any_live(statuses: dict[str, str]) -> bool:
    return any(status in ("running", "waiting for approval") for status in statuses.values())
