"""Golden tests: recorded app-server transcripts (shared ones and our own) → the exact events we map.

Sources live in the repository: tests/transcripts/*.jsonl (ours, tests/record.py) and tests/transcripts/shared/
(copies of the shared real-codex transcripts, so a fresh clone compares every golden). A golden without a
source fails, and so does a source without a golden (it is written first, for review).
Regenerate after an intended mapping change with `HARNESS_UPDATE_GOLDEN=1 pytest tests/test_appserver_golden.py`
and review the diff of tests/golden/.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness_codex_appserver.replay import conversations, load_transcript, replay

HERE = Path(__file__).parent
TRANSCRIPTS = HERE / "transcripts"
GOLDEN = HERE / "golden"
SOURCES = sorted([*TRANSCRIPTS.glob("*.jsonl"), *(TRANSCRIPTS / "shared").glob("*.jsonl")])


def _render(path: Path) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for index, conv in enumerate(conversations(load_transcript(path))):
        events, outcomes = replay(conv)
        out.append(
            {
                "conversation": index,
                "case": conv.case,
                "events": [e.model_dump(mode="json", exclude={"run_id", "seq", "ts"}) for e in events],
                "outcomes": [
                    {
                        "status": o.status.value,
                        "final_text": o.final_text,
                        "usage": o.usage.model_dump(mode="json"),
                        "error": o.error.model_dump(mode="json") if o.error else None,
                    }
                    for o in outcomes
                ],
            }
        )
    return out


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_transcript_maps_to_golden_events(source: Path) -> None:
    golden = GOLDEN / f"{source.stem}.json"
    actual = _render(source)
    if os.environ.get("HARNESS_UPDATE_GOLDEN") or not golden.exists():
        golden.write_text(json.dumps(actual, indent=1, ensure_ascii=False) + "\n")
        if not os.environ.get("HARNESS_UPDATE_GOLDEN"):
            pytest.fail(f"wrote missing golden file {golden}; review it and run again")
    assert actual == json.loads(golden.read_text())


def test_some_source_exists() -> None:
    assert SOURCES, f"no transcripts found under {TRANSCRIPTS} (record some with tests/record.py)"


def test_every_golden_has_a_source() -> None:
    """A golden whose transcript is missing would otherwise never be compared (silently)."""
    stems = [p.stem for p in SOURCES]
    assert len(stems) == len(set(stems)), f"two transcripts share a name: {sorted(stems)}"
    orphans = sorted(g.name for g in GOLDEN.glob("*.json") if g.stem not in stems)
    assert not orphans, f"golden files without a transcript in {TRANSCRIPTS}: {orphans}"


def test_recorded_endless_reconnecting_gives_notices_then_the_run_fails_past_the_bound() -> None:
    """real-reconnect.jsonl: codex 0.169.0 against a closed 127.0.0.1 port (its "waiting for network" mode,
    stopped by the provider at `max_reconnects=1`; then its bounded mode, ending by itself)."""
    from harness_codex_common import Reconnects

    from harness_codex_appserver.mapping import TurnMapper

    waiting, bounded = conversations(load_transcript(TRANSCRIPTS / "real-reconnect.jsonl"))
    mapper = TurnMapper(reconnects=Reconnects(1, "http://127.0.0.1:1/v1"))
    events = [e for line in waiting.lines if line.get("dir") == "in" and "method" in line["msg"]
              for e in mapper.feed(line["msg"])]
    kinds = [e.type for e in events if e.type in ("notice", "error")]
    assert kinds == ["notice", "notice", "error"]
    assert mapper.gave_up is not None and mapper.outcome is not None  # turn/completed (interrupted) arrived
    assert mapper.outcome.status.value == "failed" and mapper.outcome.error is not None
    assert mapper.outcome.error.message.startswith(
        "the agent could not reach its model API at http://127.0.0.1:1/v1 after 2 attempts"
    )
    replayed, (outcome,) = replay(bounded)
    reconnects = [e for e in replayed if e.type == "notice" and e.code == "reconnecting"]
    assert [e.details["attempt"] for e in reconnects] == [1, 2, 3, 4, 5]
    assert [e.type for e in replayed].count("error") == 1
    assert outcome.error is not None and "after 6 attempts" in outcome.error.message


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_text_delta_fast_path_maps_as_feed_does(source: Path) -> None:
    """`Turn.on_text_delta` tries `TurnMapper.text_delta` before `feed` (the goldens replay that route): every
    recorded conversation maps to the same events and outcomes through `feed` alone."""
    for conv in conversations(load_transcript(source)):
        assert replay(conv, fast=True) == replay(conv, fast=False)


def test_the_text_delta_fast_path_leaves_every_odd_case_to_feed() -> None:
    from harness_codex_appserver.mapping import TurnMapper

    mapper = TurnMapper(thread_id="thr")
    mapper.start_turn("turn")
    plain = {"threadId": "thr", "turnId": "turn", "itemId": "msg_1", "delta": "hi"}
    event = mapper.text_delta(plain)
    assert event is not None and event.model_dump(exclude={"run_id", "seq", "ts"}) == {
        "type": "text_delta", "text": "hi", "item_id": "msg_1"}
    for odd in ({**plain, "threadId": "other"}, {**plain, "turnId": "other"}, {**plain, "itemId": 7},
                {**plain, "delta": ""}, {**plain, "delta": 5}):
        assert mapper.text_delta(odd) is None, odd
    mapper.feed({"method": "turn/completed", "params": {"threadId": "thr", "turn": {"id": "turn",
                                                                                   "status": "completed"}}})
    assert mapper.outcome is not None and mapper.text_delta(plain) is None  # after the turn: `feed` decides
