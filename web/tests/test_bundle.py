"""`harness view --bundle`: a static copy that opens from disk in Chromium (file://, no server, no token), its
links relative, its hostile text inert (and no script at all), and refusals that say what to do."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from harness_core.store import list_runs
from view_helpers import HOSTILE_SAY, Corpus, Tab, harness, release


def bundle(corpus: Corpus, out: Path, *args: str) -> str:
    done = harness(["view", "--runs-dir", str(corpus.runs_dir), "--bundle", str(out), *args], corpus.env,
                   cwd=corpus.root)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_bundle_of_runs_opens_from_disk(tab: Tab, corpus: Corpus, tmp_path: Path) -> None:
    out = tmp_path / "share"
    said = bundle(corpus, out, corpus.demo["claude"], corpus.chat[0][:-2], corpus.hostile_run)
    assert f"wrote {out / 'index.html'}" in said and "readable by every user of this machine" in said
    assert (out / "runs" / f"{corpus.demo['claude']}.jsonl").stat().st_mode & 0o777 == 0o644  # as it says
    page = tab.page
    page.goto((out / "index.html").as_uri())
    assert "system-ui" in page.evaluate("getComputedStyle(document.body).fontFamily")  # its style came along
    rows = page.locator("tr.run")
    assert sorted(rows.evaluate_all("rs => rs.map(r => r.dataset.run)")) == sorted(
        [corpus.demo["claude"], corpus.chat[0], corpus.hostile_run])
    page.locator(f"tr.run[data-run='{corpus.demo['claude']}'] a").click()
    page.wait_for_url(f"**/runs/{corpus.demo['claude']}.html")
    assert page.locator("#run-status").inner_text() == "success"
    assert [k.lower() for k in page.locator("#timeline details.tool .kind").all_inner_texts()] == [
        "shell", "read", "edit", "write"]
    assert page.locator("form").count() == 0 and page.locator("script").count() == 0  # nothing to do, nothing run
    page.locator("a", has_text="Run log").click()
    assert '"type":"run_started"' in page.locator("body").inner_text()
    page.go_back()
    page.locator("a.brand").click()
    page.wait_for_url("**/index.html")
    page.locator(f"tr.run[data-run='{corpus.hostile_run}'] a").click()
    for details in page.locator("details").all():
        details.evaluate("d => d.open = true")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("document.querySelectorAll('main img, main b, [onerror]').length") == 0
    assert HOSTILE_SAY in page.locator("main").inner_text()
    assert not [m for m in tab.console if "pageerror" in m], tab.console
    assert not any(p.name.endswith((".answers", ".wire.jsonl")) for p in out.rglob("*"))
    # the chat's second turn was not chosen: nothing of it (its prompt, its id) is in the copy
    for path in (p for p in out.rglob("*") if p.is_file()):
        text = path.read_text()
        assert "and once more" not in text and corpus.chat[1] not in text, path


def test_a_bundle_of_a_batch_holds_its_page_and_runs(tab: Tab, corpus: Corpus, tmp_path: Path) -> None:
    out = tmp_path / "batch-share"
    bundle(corpus, out, "--batch", str(corpus.batch))
    page = tab.page
    page.goto((out / "index.html").as_uri())
    assert page.locator("tr.run").count() == 7
    page.locator("header nav a.batch-link").click()
    page.wait_for_selector("svg.chart")
    assert page.locator("svg.chart").count() == 3
    assert page.locator("table.report tr.group").count() == 2
    shared = "".join(p.read_text() for p in out.glob("*.html"))  # no path of the machine that made it
    assert corpus.batch.name in shared and str(corpus.batch.parent) not in shared
    page.locator("tr.task[data-task='edit-claude'] a").click()
    page.wait_for_url("**/runs/*.html")
    assert "Editing file" in page.locator("#timeline").inner_text()


def test_a_bundle_says_when_runs_started_and_counts_turns_from_1(tab: Tab, corpus: Corpus, tmp_path: Path) -> None:
    """A copy is read later: it gives the time each run started (as the run's page does), never an age that was
    true when it was made ("5 min ago"); a chat's turns are counted from 1, as the CLI counts them."""
    out = tmp_path / "chat-share"
    bundle(corpus, out, *corpus.chat)
    page = tab.page
    page.goto((out / "index.html").as_uri())
    column = page.locator("table.runs thead th").all_inner_texts().index("Started")
    for run_id in corpus.chat:
        started = page.locator(f"tr.run[data-run='{run_id}'] td").nth(column).inner_text()
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}", started), started
    assert "ago" not in page.locator("table.runs").inner_text()
    assert [page.locator(f"tr.run[data-run='{run_id}'] .turn").inner_text() for run_id in corpus.chat] == [
        "turn 1", "turn 2"]
    page.locator(f"tr.run[data-run='{corpus.chat[1]}'] a").click()
    page.wait_for_url(f"**/runs/{corpus.chat[1]}.html")
    assert page.locator("#head dt:text-is('Session') + dd").inner_text().endswith(", turn 2")
    assert page.locator("section.turns li").evaluate_all("items => items.map(li => li.value)") == [1, 2]


def test_a_bundle_of_some_turns_numbers_them_as_the_session_does(tab: Tab, corpus: Corpus, tmp_path: Path) -> None:
    """Turns 1 and 3 of a chat of three, bundled: the copy counts them 1 and 3 (the session's numbers, not their
    places in the copy), in the runs list and in the list of the session's turns on a run's page."""
    runs_dir = tmp_path / "runs"
    runs_dir.mkdir(mode=0o700)
    chat = harness(["chat", "--offline", "-p", "claude", "--runs-dir", str(runs_dir)], corpus.env, cwd=corpus.root,
                   stdin="one\ntwo\nthree\n")
    assert chat.returncode == 0, chat.stderr
    turns = sorted((r for r in list_runs(runs_dir) if r.session is not None), key=lambda r: r.turn or 0)
    assert [r.turn for r in turns] == [0, 1, 2]
    first, third = turns[0].run_id, turns[2].run_id
    out = tmp_path / "turns-1-and-3"
    done = harness(["view", "--runs-dir", str(runs_dir), "--bundle", str(out), first, third], corpus.env,
                   cwd=corpus.root)
    assert done.returncode == 0, done.stderr
    page = tab.page
    page.goto((out / "index.html").as_uri())
    assert [page.locator(f"tr.run[data-run='{run_id}'] .turn").inner_text() for run_id in (first, third)] == [
        "turn 1", "turn 3"]
    page.locator(f"tr.run[data-run='{third}'] a").click()
    page.wait_for_url(f"**/runs/{third}.html")
    turns_shown = page.locator("section.turns li")
    assert turns_shown.evaluate_all("items => items.map(li => li.value)") == [1, 3]
    assert turns_shown.nth(0).locator("a").inner_text() == first and "(this run)" in turns_shown.nth(1).inner_text()


@pytest.mark.parametrize(("args", "said"), [
    ([], "name what to bundle"),
    (["no-such-run"], "no run 'no-such-run'"),
    (["--batch", "missing.results.jsonl"], "no results file"),
])
def test_a_bundle_refuses_what_it_cannot_do(corpus: Corpus, tmp_path: Path, args: list[str], said: str) -> None:
    done = harness(["view", "--runs-dir", str(corpus.runs_dir), "--bundle", str(tmp_path / "out"), *args],
                   corpus.env, cwd=corpus.root)
    assert done.returncode == 2 and said in done.stderr
    assert not (tmp_path / "out" / "index.html").exists()


def test_a_bundle_overwrites_nothing(corpus: Corpus, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    done = harness(["view", "--runs-dir", str(corpus.runs_dir), "--bundle", str(tmp_path), "last"], corpus.env,
                   cwd=corpus.root)
    assert done.returncode == 2 and "not an empty directory" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_a_bundle_refuses_a_link_named_like_a_log(corpus: Corpus, tmp_path: Path) -> None:
    """A link in the runs dir to a file outside it (here a copy of a real log beside a secret) is not a run: the
    bundle, made to be shared, copies nothing of it and says so."""
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes((corpus.runs_dir / f"{corpus.demo['claude']}.jsonl").read_bytes() + b"SECRET-OUTSIDE\n")
    link = corpus.runs_dir / "linkedbundle.jsonl"
    link.symlink_to(outside)
    try:
        done = harness(["view", "--runs-dir", str(corpus.runs_dir), "--bundle", str(tmp_path / "out"),
                        "linkedbundle"], corpus.env, cwd=corpus.root)
    finally:
        link.unlink()
    assert done.returncode == 2, done.stderr
    assert "is not a run's own log (a symbolic link" in done.stderr
    assert not any("SECRET-OUTSIDE" in p.read_text() for p in (tmp_path / "out").rglob("*") if p.is_file())


def test_a_bundle_of_a_fifo_named_like_a_log_refuses_it_at_once(corpus: Corpus, tmp_path: Path) -> None:
    """A FIFO in the runs dir named like a log is not a run's file: the bundle exits 2 naming it, at once (never
    waiting for a writer to open it)."""
    pipe = corpus.runs_dir / "pipedbundle.jsonl"
    os.mkfifo(pipe, 0o600)
    try:
        done = harness(["view", "--runs-dir", str(corpus.runs_dir), "--bundle", str(tmp_path / "out"),
                        "pipedbundle"], corpus.env, cwd=corpus.root, timeout=60)
    finally:
        release(pipe)
    assert done.returncode == 2, done.stderr
    assert f"{pipe} is not a run's own log" in done.stderr
    assert not (tmp_path / "out" / "index.html").exists()
