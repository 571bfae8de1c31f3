"""Codex's own warnings (`configWarning`) → `notice` events with code `cli_warning` (`notices.config_warning`):
golden from the real line codex 0.169.0 sends when bubblewrap is missing, and the payload's optional fields."""

from __future__ import annotations

import json
from pathlib import Path

from harness_codex_appserver.notices import CLI_WARNING, config_warning
from harness_codex_appserver.replay import conversations, load_transcript, replay

TRANSCRIPTS = Path(__file__).parent / "transcripts"


def _real_line() -> dict[str, object]:
    for line in load_transcript(TRANSCRIPTS / "real-tools.jsonl"):
        if line.get("dir") == "in" and line["msg"].get("method") == "configWarning":
            return dict(line["msg"])
    raise AssertionError("real-tools.jsonl has no configWarning line")


def test_the_real_bubblewrap_warning() -> None:
    msg = _real_line()
    notice = config_warning(msg["params"])
    assert notice.model_dump(mode="json", exclude={"run_id", "seq", "ts"}) == {
        "type": "notice",
        "level": "warning",
        "code": CLI_WARNING,
        "message": "Codex could not find bubblewrap on PATH. Install bubblewrap with your OS package manager. See "
        "the sandbox prerequisites: https://developers.openai.com/codex/concepts/sandboxing#prerequisites. Codex "
        "will use the bundled bubblewrap in the meantime.",
        "details": {"source": "codex configWarning"},
    }


def test_a_config_file_warning_names_the_file_and_line() -> None:
    notice = config_warning({"summary": "unknown key  `modle`", "details": "did you mean `model`?",
                             "path": "/home/u/.codex/config.toml",
                             "range": {"start": {"line": 3, "column": 1}, "end": {"line": 3, "column": 6}}})
    assert notice.message == ("codex: unknown key `modle` (/home/u/.codex/config.toml:3:1) — did you mean `model`?")
    assert notice.details["path"] == "/home/u/.codex/config.toml" and notice.details["range"]["start"]["line"] == 3


def test_a_malformed_payload_still_warns() -> None:
    assert config_warning(None).message == "codex reported a configuration warning"
    assert config_warning({"summary": "x", "path": 7}).message == "codex: x"


def test_replayed_transcripts_turn_the_warning_into_a_notice_before_the_session() -> None:
    (conv,) = list(conversations(load_transcript(TRANSCRIPTS / "real-tools.jsonl")))[:1]
    events, _ = replay(conv)
    kinds = [(e.type, getattr(e, "code", None)) for e in events[:3]]
    assert ("notice", CLI_WARNING) in kinds
    assert not any(e.type == "provider_raw" and e.method == "configWarning" for e in events)
    assert json.dumps(_real_line()["params"])  # the source line is a real one (golden: tests/golden/real-tools.json)
