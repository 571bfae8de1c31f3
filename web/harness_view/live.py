"""Live pages as server-sent events: a run's log followed (each section an event changed, re-rendered; a growing
text only its new characters; its files list when one comes) until its `done`, and the runs directory watched (an
event whenever the list would show something new); each stream ends when the viewer stops (Ctrl-C).

Knows the run store's follower, the timeline and the pages; nothing of HTTP beyond the SSE line format.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
from harness_core.store import LogFollower, summarize

from harness_view.catalog import runs_signature
from harness_view.files import own_log
from harness_view.pages import FILES, Site
from harness_view.render import Links
from harness_view.stopping import never
from harness_view.timeline import HEAD, RESULT, Timeline

__all__ = ["POLL", "run_events", "runs_events", "sse"]

POLL = 0.2
"""Seconds between looks at a log or the runs directory."""
_STATUS_EVERY = 2.0
_PING_EVERY = 15.0
_LIVE = ("running", "waiting for approval")
_GROWING = ("text", "reasoning")


def sse(event: str, data: Any) -> str:
    """One server-sent event (`data` as JSON on one line)."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


async def run_events(site: Site, run_id: str, after: int, links: Links, *, shown: str = "",
                     stopping: Callable[[], bool] = never) -> AsyncIterator[str]:
    """The sections of run `run_id`'s page that change after event `after` (`block` events: key and HTML), as its
    log grows, then `end`; its head and result too whenever its status is not `shown` (the page's: a run lost
    before the stream began). It ends early, without `end`, once `stopping()` (the viewer stops: the page keeps
    what it has). The caller checked the run exists. Reading and rendering happen in a worker thread."""
    path = await anyio.to_thread.run_sync(own_log, site.runs_dir, run_id)
    if path is None:  # gone, or a link put in its place since the page: nothing of it is read
        yield sse("end", {"status": "gone"})
        return
    timeline = Timeline()
    state = {"status": shown}
    linked: list[tuple[bool, bool] | None] = [None]
    """The files the page links (`Site.files_of`), as last sent: a worker's output appears when it writes."""
    sent: dict[str, int] = {}
    """Characters of each text or reasoning block the page has (after its first `block`, only `append`s)."""
    pinged = time.monotonic()

    def step(follower: LogFollower) -> list[str]:
        """Read what was appended; the SSE events of the sections it changed (and `end` once over)."""
        changed: list[str] = []
        for event in follower.read():
            keys = timeline.apply(event)
            if event.seq > after:
                changed.extend(keys)
        summary = summarize(path)
        if summary.status != state["status"]:
            changed.extend([HEAD, RESULT] if state["status"] else [])
            state["status"] = summary.status
        files = site.files_of(run_id)
        if files != linked[0]:  # first look (the page may have been rendered before a file came), then changes
            changed.append(FILES)
            linked[0] = files
        out: list[str] = []
        page = site.page_of(run_id, timeline, summary) if changed else None
        for key in dict.fromkeys(changed):
            block = timeline.block(key)
            if block is not None and block.kind in _GROWING and key in sent:
                text = block.text  # the page has `sent[key]` characters of it: send only the rest, as text
                if len(text) > sent[key]:
                    out.append(sse("append", {"key": key, "text": text[sent[key]:], "length": len(text)}))
                    sent[key] = len(text)
                continue
            if block is not None and block.kind in _GROWING:
                sent[key] = len(block.text)
            if page is not None:
                out.append(sse("block", {"key": key, "html": site.section(page, key, links=links)}))
        if follower.over:
            out.append(sse("end", {"status": state["status"]}))
        return out

    with LogFollower(path, on_bad_line=lambda _bad: None) as follower:
        while True:
            for message in await anyio.to_thread.run_sync(step, follower):
                yield message
            if follower.over or stopping():
                return
            if time.monotonic() - pinged > _PING_EVERY:
                pinged = time.monotonic()
                yield ": ping\n\n"
            await anyio.sleep(POLL)


async def runs_events(site: Site, *, stopping: Callable[[], bool] = never) -> AsyncIterator[str]:
    """A `runs` event whenever the list would change: a run appears or goes, or one's status changes (it ends,
    starts waiting for approval, its writer is lost), until `stopping()` (the viewer stops). Only logs that changed
    are read again; live runs are looked at every few seconds (a lost writer changes no file)."""
    known: dict[str, tuple[int, int, str]] = {}
    await anyio.to_thread.run_sync(_changed, site, known)
    checked = pinged = time.monotonic()
    yield ": watching\n\n"
    while True:
        await anyio.sleep(POLL * 2)
        if stopping():
            return
        now = time.monotonic()
        recheck = now - checked > _STATUS_EVERY
        if recheck:
            checked = now
        if await anyio.to_thread.run_sync(functools.partial(_changed, site, known, recheck_live=recheck)):
            yield sse("runs", {"count": len(known)})
        elif now - pinged > _PING_EVERY:
            pinged = now
            yield ": ping\n\n"


def _changed(site: Site, known: dict[str, tuple[int, int, str]], *, recheck_live: bool = False) -> bool:
    """Bring `known` (log name → size, mtime, status) up to date; whether a run came, went or changed status."""
    seen = {name: (size, mtime) for name, size, mtime in runs_signature(site.runs_dir)}
    changed = bool(set(known) - set(seen))
    for name in set(known) - set(seen):
        del known[name]
    for name, (size, mtime) in seen.items():
        before = known.get(name)
        if before is not None and before[:2] == (size, mtime) and not (recheck_live and before[2] in _LIVE):
            continue
        status = summarize(site.runs_dir / name).status
        known[name] = (size, mtime, status)
        changed = changed or before is None or before[2] != status
    return changed
