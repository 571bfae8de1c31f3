"""The viewer in headless Chromium, on real runs: the runs list (live), a run of every provider, the hostile-text
run inert, a live run followed and cancelled, a background run's approvals answered and another cancelled from its
page, a worker's output linked when it comes, a chat's turns, a batch's report and charts. Screenshots of the main
pages are saved (`screenshots`)."""

from __future__ import annotations

import http.client
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from harness_core.store import pending_approvals
from playwright.sync_api import expect
from view_helpers import DEADLINE, HOSTILE_COMMAND, HOSTILE_PROMPT, HOSTILE_SAY, Corpus, Tab, Viewer

_SCRIPTS_ALLOWED = ["/static/app.js"]


def open_page(tab: Tab, viewer: Viewer, path: str) -> None:
    tab.page.goto(viewer.url)  # the token: sets the cookie, then every page opens without it
    tab.page.goto(viewer.base + path)


def assert_inert(tab: Tab) -> None:
    """Nothing of the hostile text ran or became markup: no script but the viewer's, no handler, no js: link."""
    page = tab.page
    assert page.evaluate("typeof window.__pwned") == "undefined"
    sources = page.evaluate("[...document.scripts].map(s => new URL(s.src || 'inline:', location).pathname)")
    assert sources == _SCRIPTS_ALLOWED
    assert page.evaluate("document.querySelectorAll('[onerror], [onclick], [onload]').length") == 0
    assert page.evaluate("[...document.links].filter(a => a.protocol === 'javascript:').length") == 0
    assert page.evaluate("document.querySelectorAll('main img, main b').length") == 0
    assert not [m for m in tab.console if "Content Security Policy" in m or "pageerror" in m], tab.console


def test_the_runs_list_shows_every_providers_run(tab: Tab, viewer: Viewer, corpus: Corpus,
                                                 screenshots: Path) -> None:
    open_page(tab, viewer, "/")
    page = tab.page
    for provider, run_id in corpus.demo.items():
        row = page.locator(f"tr.run[data-run='{run_id}']")
        assert row.locator("td").nth(2).inner_text() == provider
        assert row.get_attribute("data-status") == "success"
    page.screenshot(path=str(screenshots / "runs.png"), full_page=False)
    page.select_option("select[name=provider]", "claude")
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**/?*provider=claude*")
    shown = page.locator("tr.run td:nth-child(3)").all_inner_texts()
    assert shown and set(shown) == {"claude"}
    page.fill("input[name=q]", "once more")  # the chat's second prompt
    page.click("form.filters button[type=submit]")
    page.wait_for_url("**q=once+more*")
    assert page.locator("tr.run").count() == 1
    assert page.locator("tr.run td.prompt").inner_text() == "and once more"


@pytest.mark.parametrize("provider", ["claude", "claude-acp", "codex-acp", "codex-appserver", "codex-exec", "gemini",
                                      "qwen"])
def test_a_run_of_every_provider_renders(tab: Tab, viewer: Viewer, corpus: Corpus, provider: str,
                                         screenshots: Path) -> None:
    if provider not in corpus.demo:
        pytest.fail(f"the demo played no {provider} run (is its CLI in .tools?)")
    open_page(tab, viewer, f"/runs/{corpus.demo[provider]}")
    page = tab.page
    assert page.locator("#run-status").inner_text() == "success"
    kinds = page.locator("#timeline details.tool .kind").all_inner_texts()
    assert [k.lower() for k in kinds] == ["shell", "read", "edit", "write"]
    shell = page.locator("#timeline details.tool").first
    assert "echo harness-ok" in shell.locator(":scope > summary").inner_text()
    shell.locator(":scope > summary").click()
    if shell.locator("pre.output").count():  # some agents report no output of a command (the ACP Gemini CLI)
        assert "harness-ok" in shell.locator("pre.output").inner_text()
    changes = page.locator("#changes")
    assert sorted(changes.locator(".change-head code").all_inner_texts()) == ["new.txt", "notes.txt"]
    assert changes.locator("pre.diff .del").first.inner_text() == "-alpha"
    assert changes.locator("pre.diff .add").first.inner_text() == "+beta"
    assert page.locator("#head dd").first.inner_text().startswith(provider)
    if provider == "claude":
        page.screenshot(path=str(screenshots / "run.png"), full_page=True)
    raw = page.locator("a", has_text="Run log")
    raw.click()
    page.wait_for_load_state()
    assert json.loads(page.locator("body").inner_text().splitlines()[0])["provider"] == provider


def test_the_hostile_text_run_is_inert(tab: Tab, viewer: Viewer, corpus: Corpus) -> None:
    open_page(tab, viewer, f"/runs/{corpus.hostile_run}")
    page = tab.page
    page.locator("#timeline details.tool").first.locator(":scope > summary").click()
    for details in page.locator("details").all():
        details.evaluate("d => d.open = true")
    assert_inert(tab)
    text = page.locator("main").inner_text()
    assert HOSTILE_PROMPT in text  # shown as the text it is
    assert HOSTILE_SAY in text
    assert HOSTILE_COMMAND in text
    assert "+<script>window.__pwned = 'diff'</script>" in page.locator("#changes").inner_text()
    for path in ("/", f"/?q={HOSTILE_PROMPT[:20]}", "/batches"):
        tab.page.goto(viewer.base + path)
        assert_inert(tab)


def test_a_hostile_results_file_is_inert(tab: Tab, viewer: Viewer, corpus: Corpus) -> None:
    open_page(tab, viewer, "/batches")
    tab.page.click("text=hostile.results")
    tab.page.wait_for_selector("svg.chart")
    assert_inert(tab)
    text = tab.page.locator("main").inner_text()
    assert "<script>window.__pwned='task'</script>" in text
    assert "line 2 is not a task result" in text


def test_a_live_run_updates_and_is_cancelled_from_its_page(tab: Tab, viewer: Viewer, corpus: Corpus) -> None:
    run_id = corpus.background("-p", "codex-appserver", "--scenario", "slow_text", "talk slowly")
    open_page(tab, viewer, f"/runs/{run_id}")
    page = tab.page
    page.wait_for_selector("#timeline[data-live]", state="attached")
    said = page.locator("#timeline .block.text pre.say")
    said.first.wait_for()
    first = said.first.inner_text()
    expect(said.first).not_to_have_text(first)  # it grew while the page was open (the page was not reloaded)
    assert said.first.inner_text().startswith(first)
    assert page.locator("#run-status").inner_text() == "running"
    with page.expect_navigation():
        page.click("#cancel")
    page.wait_for_selector("p.notice")
    expect(page.locator("#run-status")).to_have_text("interrupted")
    assert page.locator("p.notice").inner_text() == "Cancelled: the run is interrupted."
    assert corpus.wait_status(run_id, "interrupted") == "interrupted"


def test_a_background_runs_approvals_are_answered_from_its_page(tab: Tab, viewer: Viewer, corpus: Corpus,
                                                                screenshots: Path) -> None:
    run_id = corpus.background("-p", "claude", "-a", "untrusted", "edit it")
    corpus.wait_status(run_id, "waiting for approval")
    open_page(tab, viewer, f"/runs/{run_id}")
    page = tab.page
    ask = page.locator(".block.approval.open")
    ask.wait_for()
    assert "-alpha" in ask.locator("pre.diff").inner_text() and "+beta" in ask.locator("pre.diff").inner_text()
    assert "Waiting for approval" in page.locator("#head").inner_text()
    page.screenshot(path=str(screenshots / "approval.png"), full_page=True)
    answered = 0
    while page.locator("#run-status").inner_text() != "success":
        ask = page.locator(".block.approval.open form.answer")
        if ask.count():
            with page.expect_navigation():  # the answer, then back to the page (never a click on the old one)
                ask.first.locator("button[value=approve]").click()
            answered += 1
        else:  # the page follows the run: the next request (or the end) arrives without a reload
            page.locator("#run-status:text-is('success'), .block.approval.open form.answer").first.wait_for()
        assert answered < 10
    assert answered >= 2  # the edit and the write
    decisions = page.locator(".block.approval .decision").all_inner_texts()
    assert decisions and all(d.startswith("Approved: answered with harness view") for d in decisions), decisions
    assert "+beta" in page.locator("#changes").inner_text()
    log = [json.loads(line) for line in (corpus.runs_dir / f"{run_id}.jsonl").read_text().splitlines()]
    reasons = [e["reason"] for e in log if e["type"] == "approval_resolved"]
    assert reasons == ["answered with harness view"] * answered


@pytest.mark.parametrize(("decision", "said", "shown"), [
    ("deny", "denied", "Denied: answered with harness view"),
    ("abort", "denied, and the turn stopped", "Denied, turn stopped: answered with harness view"),
])
def test_deny_and_stop_the_turn_from_the_page_says_what_the_run_recorded(tab: Tab, viewer: Viewer, corpus: Corpus,
                                                                         decision: str, said: str,
                                                                         shown: str) -> None:
    run_id = corpus.background("-p", "claude", "-a", "untrusted", "edit it, then stop")
    corpus.wait_status(run_id, "waiting for approval")
    open_page(tab, viewer, f"/runs/{run_id}")
    page = tab.page
    ask = page.locator(".block.approval.open form.answer").first
    ask.wait_for()
    request_id = page.locator(".block.approval.open").first.get_attribute("data-request")
    with page.expect_navigation():
        ask.locator(f"button[value={decision}]").click()
    assert page.locator("p.notice").inner_text() == (
        f"Request {request_id} {said} (answered with harness view), as the run recorded it.")
    assert page.locator(f".block.approval[data-request='{request_id}'] .decision").inner_text().startswith(shown)
    log = [json.loads(line) for line in (corpus.runs_dir / f"{run_id}.jsonl").read_text().splitlines()]
    assert [e["decision"] for e in log if e["type"] == "approval_resolved"][:1] == [decision]
    if decision == "deny":  # the turn goes on: the run is live until it ends or is cancelled
        corpus.run("cancel", run_id)
    assert corpus.wait_status(run_id, "success", "failed", "interrupted") in ("success", "failed", "interrupted")


def test_hostile_text_streamed_live_is_inert(tab: Tab, viewer: Viewer, corpus: Corpus) -> None:
    """The live path inserts what the server rendered (a `block`) and adds streamed text as text (`append`): a
    run whose command output and streamed answer are hostile, followed live from before they came (approved from
    the terminal: the page is never loaded again), stays inert."""
    scenario = json.dumps({"steps": [{"write": "gate.txt", "content": "asks first\n"}, {"run": HOSTILE_COMMAND},
                                     {"say": HOSTILE_SAY, "chunks": 6, "delay": 0.2}]})
    run_id = corpus.background("-p", "claude", "-a", "untrusted", "--scenario", scenario, HOSTILE_PROMPT)
    corpus.wait_status(run_id, "waiting for approval")  # to write: the page opens before any hostile output
    open_page(tab, viewer, f"/runs/{run_id}")
    page = tab.page
    page.wait_for_selector("#timeline[data-live]", state="attached")
    page.locator(".block.approval.open form.answer").wait_for()
    page.evaluate("window.__same = 'page'")  # gone if the page were loaded again
    request_id = next(iter(pending_approvals(corpus.runs_dir / f"{run_id}.jsonl")))
    corpus.run("approve", run_id, request_id, "approve")  # from the terminal: the page stays as it is
    page.wait_for_selector("body[data-ended]", state="attached")  # followed live to its end
    assert page.evaluate("window.__same") == "page"
    for details in page.locator("details").all():
        details.evaluate("d => d.open = true")
    assert_inert(tab)
    text = page.locator("main").inner_text()
    assert HOSTILE_SAY in text
    assert "<img src=x onerror=window.__pwned=1>" in text  # the command's output, as text
    assert corpus.wait_status(run_id, "success") == "success"


def test_a_run_waiting_for_approval_is_cancelled_from_its_page(tab: Tab, viewer: Viewer, corpus: Corpus) -> None:
    run_id = corpus.background("-p", "claude", "-a", "untrusted", "edit it, then stop")
    corpus.wait_status(run_id, "waiting for approval")
    open_page(tab, viewer, f"/runs/{run_id}")
    page = tab.page
    page.locator(".block.approval.open form.answer").wait_for()
    with page.expect_navigation():
        page.click("#cancel")
    page.wait_for_selector("p.notice")
    expect(page.locator("#run-status")).to_have_text("interrupted")
    assert page.locator(".block.approval .decision").first.inner_text().startswith("Denied, turn stopped")
    assert page.locator(".block.approval.open form.answer").count() == 0


def test_a_worker_output_that_comes_later_is_linked_on_the_open_page(tab: Tab, viewer: Viewer,
                                                                     corpus: Corpus) -> None:
    """A live page opened while the worker has said nothing (its output empty: not linked) links the output once
    the worker writes to it (a warning, its traceback as it dies), through the page's live stream: no reload."""
    run_id = corpus.background("-p", "claude", "-a", "untrusted", "edit it")  # live until it is cancelled
    corpus.wait_status(run_id, "waiting for approval")
    worker = corpus.runs_dir / f"{run_id}.worker.log"
    assert worker.is_file() and worker.stat().st_size == 0
    open_page(tab, viewer, f"/runs/{run_id}")
    page = tab.page
    page.wait_for_selector("#timeline[data-live]", state="attached")
    assert page.locator("section.files ul").inner_text().startswith("Run log")
    assert page.locator("section.files a:text-is('Background worker output')").count() == 0
    page.evaluate("window.__same = 'page'")  # gone if the page were loaded again
    try:
        with worker.open("a") as output:  # as the worker's stderr takes a warning
            output.write("harness: warning: something the worker said\n")
        link = page.locator("section.files a:text-is('Background worker output')")
        expect(link).to_be_visible()
        assert link.get_attribute("href") == f"/runs/{run_id}/worker"
        assert page.evaluate("window.__same") == "page"
        assert page.locator("section.files a:text-is('Run log')").count() == 1
    finally:
        corpus.run("cancel", run_id)


def test_the_runs_list_updates_live(tab: Tab, viewer: Viewer, corpus: Corpus) -> None:
    open_page(tab, viewer, "/")
    page = tab.page
    before = page.locator("tr.run").count()
    run_id = corpus.background("-p", "claude", "--scenario", "say", "appear in the list")
    page.wait_for_selector(f"tr.run[data-run='{run_id}']")
    page.wait_for_selector(f"tr.run[data-run='{run_id}'][data-status='success']")
    assert page.locator("tr.run").count() == before + 1
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1  # never reloaded


_COUNT_RUNS_EVENTS = """
window.__runsAt = [];
window.__sources = [];
window.__deaf = false;
const Real = window.EventSource;
window.EventSource = class extends Real {
  constructor(...args) {
    super(...args);
    window.__sources.push(this);
    this.addEventListener("runs", (e) => {
      window.__runsAt.push(Date.now());
      if (window.__deaf) e.stopImmediatePropagation();  // as if the stream were away: the page is not told
    });
  }
};
"""


def test_the_runs_list_shows_a_change_said_while_it_was_fetching(tab: Tab, viewer: Viewer, corpus: Corpus) -> None:
    """A slow list (a runs dir of thousands of runs takes a second to list): the list's answer, made while the run
    waited for approval, comes only after the run ended and the page was told so. The page fetches once more,
    and shows the run's end (it used to drop what it was told while a fetch was on its way)."""
    page = tab.page
    page.add_init_script(_COUNT_RUNS_EVENTS)  # counts the page's `runs` events (the viewer's script is unchanged)
    held: list[tuple[Any, Any]] = []
    holding = [True]

    def slow(route: Any) -> None:
        if holding[0]:
            held.append((route, route.fetch()))  # the answer as the server makes it now, given to the page later
        else:
            route.continue_()

    page.route("**/fragments/runs*", slow)
    open_page(tab, viewer, "/")
    run_id = corpus.background("-p", "claude", "-a", "untrusted", "edit it")
    corpus.wait_status(run_id, "waiting for approval")
    deadline = time.monotonic() + DEADLINE
    while not held:  # the page was told the run came, and asked for the list (held)
        assert time.monotonic() < deadline, "the page never asked for the list"
        page.wait_for_timeout(50)
    corpus.run("cancel", run_id)
    assert corpus.wait_status(run_id, "interrupted") == "interrupted"
    ended = (corpus.runs_dir / f"{run_id}.jsonl").stat().st_mtime * 1000
    page.wait_for_function(f"() => window.__runsAt.some(t => t > {ended})")  # told of the end, the old answer not back
    holding[0] = False
    for route, answer in held:
        route.fulfill(response=answer)
    expect(page.locator(f"tr.run[data-run='{run_id}']")).to_have_attribute("data-status", "interrupted")
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1  # never reloaded


def test_the_runs_list_catches_up_when_its_stream_comes_back(tab: Tab, viewer: Viewer, corpus: Corpus) -> None:
    """A run starts and ends while the list's stream is away (the laptop slept, the network dropped: the page is
    told nothing). When the stream opens again, the page fetches the list: the run is there, ended."""
    page = tab.page
    page.add_init_script(_COUNT_RUNS_EVENTS)
    open_page(tab, viewer, "/")
    page.wait_for_function("() => window.__sources.length === 1 && window.__sources[0].readyState === 1")
    # (a function, not an expression: Playwright evaluates an expression with eval, which the page's CSP forbids)
    page.evaluate("window.__deaf = true")
    run_id = corpus.background("-p", "claude", "--scenario", "say", "come and go unseen")
    assert corpus.wait_status(run_id, "success") == "success"
    ended = (corpus.runs_dir / f"{run_id}.jsonl").stat().st_mtime * 1000
    page.wait_for_function(f"() => window.__runsAt.some(t => t > {ended})")  # the stream said it; the page missed it
    assert page.locator(f"tr.run[data-run='{run_id}']").count() == 0
    page.evaluate("window.__deaf = false; window.__sources[0].dispatchEvent(new Event('open'))")  # it came back
    expect(page.locator(f"tr.run[data-run='{run_id}']")).to_have_attribute("data-status", "success")
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1  # never reloaded


def test_a_page_refused_a_live_stream_says_so(tab: Tab, viewer: Viewer, corpus: Corpus) -> None:
    """Past the viewer's cap of live pages (here held open by plain connections until one is refused), a page
    opened next cannot follow live: it says so and what to do, never a page that silently stops updating."""
    held: list[http.client.HTTPConnection] = []
    try:
        while True:
            assert len(held) <= 64, "the viewer never refused a live stream"
            conn = http.client.HTTPConnection("127.0.0.1", viewer.port, timeout=30)
            conn.request("GET", "/events", headers={"Cookie": f"harness_view_{viewer.port}={viewer.token}"})
            answer = conn.getresponse()
            if answer.status == 503:
                assert "Too many live pages open" in answer.read().decode()
                conn.close()
                break
            assert answer.status == 200
            held.append(conn)
        open_page(tab, viewer, "/")
        expect(tab.page.locator("#live-lost")).to_have_text(re.compile(r"^This page no longer updates live .*"
                                                                       r"close some of its tabs, then reload"))
    finally:
        for conn in held:
            conn.close()


def test_a_chats_turns_link_to_each_other(tab: Tab, viewer: Viewer, corpus: Corpus) -> None:
    """Turns are counted from 1, as the CLI counts them (`[turn 2]`, `turn 2 of session`): in the list, the facts
    and the session's turns."""
    first, second = corpus.chat
    open_page(tab, viewer, f"/runs/{second}")
    page = tab.page
    turns = page.locator("section.turns li")
    assert turns.count() == 2
    assert turns.evaluate_all("items => items.map(li => li.value)") == [1, 2]
    assert page.locator("#head dt:text-is('Session') + dd").inner_text().endswith(", turn 2")
    turns.first.locator("a").click()
    page.wait_for_url(f"**/runs/{first}")
    assert "hello" in page.locator("pre.prompt-text").inner_text()
    assert page.locator("#head dt:text-is('Session') + dd").inner_text().endswith(", turn 1")
    page.click("#head a[href*='session=']")
    page.wait_for_url("**/?session=*")  # loaded: a count taken before would read the page still coming in
    expect(page.locator("tr.run")).to_have_count(2)
    assert page.locator(f"tr.run[data-run='{first}'] .turn").inner_text() == "turn 1"
    assert page.locator(f"tr.run[data-run='{second}'] .turn").inner_text() == "turn 2"


def test_the_runs_list_fits_a_1400_pixel_window(browser: Any, viewer: Viewer, corpus: Corpus) -> None:
    """Every run listed (the long model names of ACP agents, the chat's turn labels, long prompts) in a window
    1400 px wide: no sideways scrolling, the prompt column in view, the header bar as wide as the table."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = context.new_page()
        page.set_default_timeout(DEADLINE * 1000)
        page.goto(viewer.url)
        page.goto(viewer.base + "/?all=1")
        page.locator("table.runs").wait_for()
        assert page.evaluate("document.documentElement.scrollWidth") <= 1400
        table = page.locator("table.runs").bounding_box()
        header = page.locator("header.top").bounding_box()
        assert table is not None and header is not None
        assert table["x"] + table["width"] <= 1400 and header["width"] >= table["width"]
        prompt = page.locator("tr.run td.prompt").first.bounding_box()
        assert prompt is not None and prompt["x"] + prompt["width"] <= 1400
    finally:
        context.close()


def test_a_batch_page_draws_its_report_and_charts(tab: Tab, viewer: Viewer, corpus: Corpus,
                                                  screenshots: Path) -> None:
    open_page(tab, viewer, "/batches")
    page = tab.page
    page.click("text=tasks.results")
    page.wait_for_selector("svg.chart")
    groups = page.locator("table.report tr.group")
    labels = [groups.nth(i).locator("td").first.inner_text() for i in range(groups.count())]
    assert len(labels) == 2 and labels[0].startswith("claude") and labels[1].startswith("codex-appserver")
    claude = groups.nth(0).locator("td").all_inner_texts()
    assert claude[1:4] == ["4", "4", "3/4"]  # hello, edit, hostile passed; broken failed
    assert "model_error ×1" in claude[-1]
    codex = groups.nth(1).locator("td").all_inner_texts()
    assert codex[1:4] == ["3", "3", "2/3"]
    assert page.locator("svg.chart").count() == 3
    assert page.locator("svg.chart rect.bar.pass").count() == 2
    assert page.locator("svg.chart circle.dot").count() == 7
    assert page.locator("table.tasks tr.task").count() == 7
    edit = page.locator("details.patch", has=page.locator("summary .id", has_text="edit-claude"))
    edit.evaluate("d => d.open = true")
    assert "notes.txt" in edit.inner_text()
    assert edit.locator("pre.diff .del").first.inner_text() == "-alpha"
    assert edit.locator("pre.diff .add").first.inner_text() == "+beta"
    page.screenshot(path=str(screenshots / "batch.png"), full_page=True)
    page.locator("tr.task[data-task='edit-claude'] a").click()
    page.wait_for_url("**/runs/*")
    assert "Editing file" in page.locator("#timeline").inner_text()
