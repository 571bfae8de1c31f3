"""A failed run's page says its error once: in the timeline, where it happened (with whether it is retryable);
the result points to it instead of repeating it."""

from __future__ import annotations

import json

from view_helpers import Corpus, Tab, Viewer


def test_a_failed_runs_error_is_shown_once(tab: Tab, viewer: Viewer, corpus: Corpus) -> None:
    results = [json.loads(line) for line in corpus.batch.read_text().splitlines()]
    run_id = next(r["run_id"] for r in results if r["id"] == "broken-claude")
    page = tab.page
    page.goto(viewer.url)
    page.goto(viewer.base + f"/runs/{run_id}")
    assert page.locator("#run-status").inner_text() == "failed"
    assert page.locator(".block.error").count() == 1
    error = page.locator("#timeline .block.error")
    assert "model_error" in error.inner_text()
    result = page.locator("#result")
    assert "Failed with the error above: model_error." in result.inner_text()
    result.locator("a[href^='#']").click()
    assert page.evaluate("location.hash") == "#" + error.get_attribute("id")


def test_the_session_filter_names_the_agent_session_the_chat_printed(tab: Tab, viewer: Viewer,
                                                                     corpus: Corpus) -> None:
    """`harness chat` prints the agent's session id on every turn; the list's Session filter names Harness's own
    session with that id beside it, and either id filters to the chat's turns."""
    runs = {r["run_id"]: r for r in json.loads(corpus.run("runs", "--json"))}
    turn = runs[corpus.chat[-1]]
    agent = turn["session_id"]  # the agent's session: what `harness chat` printed
    assert agent and agent != turn["session"]
    page = tab.page
    page.goto(viewer.url)
    option = page.locator(f"select[name=session] option[value='{turn['session']}']")
    assert option.inner_text() == f"{turn['session']} (agent session {agent})"
    page.goto(viewer.base + f"/?session={agent}")
    assert sorted(page.locator("tr.run").evaluate_all("rs => rs.map(r => r.dataset.run)")) == sorted(corpus.chat)
