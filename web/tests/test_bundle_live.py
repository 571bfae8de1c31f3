"""`harness view --bundle` of a run still running: the static copy says the run was still running when it was
made (never "Following the run live…": a copy follows nothing), and a request not yet answered says so."""

from __future__ import annotations

from pathlib import Path

from view_helpers import Corpus, Tab, harness


def test_a_bundle_of_a_running_run_says_it_was_running_when_made(tab: Tab, corpus: Corpus, tmp_path: Path) -> None:
    run_id = corpus.background("-p", "claude", "-a", "untrusted", "edit it, bundled while it waits")
    try:
        corpus.wait_status(run_id, "waiting for approval")
        out = tmp_path / "share"
        done = harness(["view", "--runs-dir", str(corpus.runs_dir), "--bundle", str(out), run_id], corpus.env,
                       cwd=corpus.root)
        assert done.returncode == 0, done.stderr
        page = tab.page
        page.goto((out / "runs" / f"{run_id}.html").as_uri())
        text = page.locator("main").inner_text()
        assert "Following the run live" not in text
        assert page.locator("#result").inner_text() == (
            "The run was still waiting for approval when this copy was made: the copy shows its log up to then.")
        assert page.locator(".block.approval.open").inner_text().endswith("Not answered yet when this copy was made.")
        assert "Waiting for an answer in the terminal" not in text
    finally:
        corpus.run("cancel", run_id)
