"""A run's events folded into its page, on the real logs of every provider: the blocks are the tools, texts and
approvals the run had, and `apply` names every section an event changes (what a live page re-renders), so a page
followed live ends the same as the page loaded at the end."""

from __future__ import annotations

from harness_core.store import read_events, summarize
from view_helpers import Corpus

from harness_view.pages import Site
from harness_view.render import Links
from harness_view.settings import ViewerSettings
from harness_view.timeline import CHANGES, HEAD, RESULT, Timeline


def _sections(site: Site, timeline: Timeline, run_id: str, summary: object) -> dict[str, str]:
    page = site.page_of(run_id, timeline, summary)  # type: ignore[arg-type]
    keys = [HEAD, RESULT, CHANGES, *(b.key for b in timeline.blocks)]
    return {key: site.section(page, key, links=Links()) for key in keys}


def test_every_change_an_event_makes_is_named(corpus: Corpus) -> None:
    site = Site(ViewerSettings(corpus.runs_dir))
    for run_id in [*corpus.demo.values(), corpus.hostile_run, *corpus.chat]:
        path = corpus.runs_dir / f"{run_id}.jsonl"
        summary = summarize(path)
        timeline = Timeline()
        before = _sections(site, timeline, run_id, summary)
        for event in read_events(path):
            named = set(timeline.apply(event))
            after = _sections(site, timeline, run_id, summary)
            changed = {key for key, html in after.items() if before.get(key) != html}
            assert changed <= named, (run_id, event.type, changed - named)
            before = after
        assert timeline.done is not None and timeline.last_seq == len(list(read_events(path))) - 1


def test_a_demo_run_folds_into_its_tools(corpus: Corpus) -> None:
    for provider, run_id in corpus.demo.items():
        timeline = Timeline.of(list(read_events(corpus.runs_dir / f"{run_id}.jsonl")))
        tools = [b for b in timeline.blocks if b.kind == "tool"]
        assert [b.display.kind.value for b in tools if b.display] == ["shell", "read", "edit", "write"], provider
        assert all(b.result is not None for b in tools), provider  # each start met its result
        assert timeline.files is not None and {f.path for f in timeline.files} == {"notes.txt", "new.txt"}
        assert timeline.done is not None and timeline.done.status.value == "success"
        assert timeline.started is not None and timeline.started.provider == provider
