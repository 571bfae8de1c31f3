"""Live pages in headless Chromium when a browser holds many of them or the viewer goes: more live tabs than
Chromium's 6 connections per host still leave every page, Cancel and Approve working (a tab hidden lets go its
stream; pages beyond the streams' bound poll slowly and say so), and pages say when the viewer stopped."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect
from view_helpers import Corpus, Tab, Viewer, start_viewer, stop_viewer

_SHORT = 30_000
"""ms: a page of a viewer that answers loads well within this, even on a loaded machine."""
_STATE = "document.body.dataset.live"


def show(page: Any, visible: bool) -> None:
    """As the browser does when the tab is switched to (or away from)."""
    page.evaluate("""visible => {
        Object.defineProperty(document, "visibilityState", {value: visible ? "visible" : "hidden",
                                                            configurable: true});
        document.dispatchEvent(new Event("visibilitychange"));
    }""", visible)


def open_pages(context: Any, viewer: Viewer, paths: list[str]) -> list[Any]:
    pages = []
    for path in paths:
        page = context.new_page()
        page.set_default_timeout(_SHORT)
        if not pages:
            page.goto(viewer.url)  # the token's cookie, for every page of the context
        page.goto(viewer.base + path)
        page.wait_for_function(f"() => ['stream', 'poll'].includes({_STATE})")
        pages.append(page)
    return pages


def test_eight_live_tabs_of_one_browser_leave_cancel_working(browser: Any, viewer: Viewer, corpus: Corpus) -> None:
    run_id = corpus.background("-p", "claude", "--scenario", "stall", "stall under many tabs")
    corpus.wait_status(run_id, "running")
    context = browser.new_context()
    try:
        pages = open_pages(context, viewer, ["/", *[f"/runs/{run_id}"] * 7])  # the 7th and 8th load too
        states = [page.evaluate(_STATE) for page in pages]
        assert states == ["stream"] * 4 + ["poll"] * 4
        last = pages[-1]
        assert "looks for changes every 5 s" in last.locator("#live-state").inner_text()
        with last.expect_navigation():
            last.click("#cancel")
        expect(last.locator("p.notice")).to_have_text("Cancelled: the run is interrupted.")
        assert corpus.wait_status(run_id, "interrupted") == "interrupted"
        expect(pages[1].locator("#run-status")).to_have_text("interrupted")  # a streaming page saw it end
        expect(pages[-2].locator("#run-status")).to_have_text("interrupted")  # a polling page too
    finally:
        context.close()


def test_a_hidden_tab_lets_go_its_stream_and_catches_up_when_shown(browser: Any, viewer: Viewer,
                                                                   corpus: Corpus) -> None:
    run_id = corpus.background("-p", "claude", "--scenario", "stall", "stall while hidden")
    corpus.wait_status(run_id, "running")
    context = browser.new_context()
    try:
        pages = open_pages(context, viewer, [f"/runs/{run_id}"] * 5)
        assert [page.evaluate(_STATE) for page in pages] == ["stream"] * 4 + ["poll"]
        hidden = pages[0]
        show(hidden, False)
        hidden.wait_for_function(f"() => {_STATE} === 'paused'")
        pages[-1].wait_for_function(f"() => {_STATE} === 'stream'")  # the polling page took the freed stream
        corpus.run("cancel", run_id)
        expect(pages[1].locator("#run-status")).to_have_text("interrupted")
        assert hidden.locator("#run-status").inner_text() == "running"  # hidden: not following
        show(hidden, True)
        expect(hidden.locator("#run-status")).to_have_text("interrupted")  # shown: what it missed
        hidden.wait_for_function(f"() => {_STATE} === 'ended'")
        assert hidden.locator("#cancel").count() == 0
    finally:
        context.close()
        corpus.run("cancel", run_id)


def test_open_pages_say_when_the_viewer_stopped(tab: Tab, corpus: Corpus) -> None:
    run_id = corpus.background("-p", "claude", "--scenario", "stall", "stall until the viewer stops")
    corpus.wait_status(run_id, "running")
    own = start_viewer(["--runs-dir", str(corpus.runs_dir)], corpus.env, corpus.root)
    try:
        run_page = tab.page
        run_page.goto(own.url)
        runs_page = run_page.context.new_page()
        runs_page.set_default_timeout(_SHORT)
        runs_page.goto(own.base + "/")
        run_page.goto(own.base + f"/runs/{run_id}")
        for page in (run_page, runs_page):
            page.wait_for_function(f"() => {_STATE} === 'stream'")
        assert stop_viewer(own) == 0
        for page in (run_page, runs_page):
            expect(page.locator("#live-state")).to_contain_text("The viewer stopped")
            assert page.evaluate(_STATE) == "stopped"
        expect(run_page.locator("#cancel")).to_be_disabled()
        assert "Following the run live" not in run_page.locator("main").inner_text()
        assert run_page.locator(".live-note").inner_text() == "No longer followed: the viewer stopped."
    finally:
        if own.proc.poll() is None:
            stop_viewer(own)
        corpus.run("cancel", run_id)
