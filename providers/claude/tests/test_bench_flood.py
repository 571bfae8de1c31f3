"""The benchmark flood of Claude Code is real-shaped: every line it writes has the shape (key order, value types,
nested) of a line the real CLI wrote in the recorded transcript it was built from, and the text adds up."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[3] / "benchmarks"
sys.path.insert(0, str(BENCH))
import _recorded  # noqa: E402


def _flood(**env: str) -> list[bytes]:
    lines = _recorded.flood_lines("flood_claude.py", **env)
    assert all(b": " not in line[:40] for line in lines), "lines are compact JSON, as the CLIs write them"
    return lines


def _kind(line: dict[str, Any]) -> tuple[str, str, str, str]:
    event = line.get("event") or {}
    return line["type"], line.get("subtype", ""), event.get("type", ""), (event.get("delta") or {}).get("type", "")


def test_claude_flood_lines_have_the_recorded_shapes() -> None:
    shapes: dict[Any, list[Any]] = {}
    for recorded in _recorded.claude_lines():
        shapes.setdefault(_kind(recorded), []).append(_recorded.shape(recorded))
    raw = _flood(FLOOD_DELTAS="5000")
    lines = [json.loads(line) for line in raw]
    for line in lines:
        assert _recorded.shape(line) in shapes[_kind(line)], line
    deltas = [line for line in lines if _kind(line)[2] == "content_block_delta"]
    texts = [d["event"]["delta"]["text"] for d in deltas]
    assert len(texts) == 5000 and {len(t) for t in texts} == {40}
    assert len({d["uuid"] for d in deltas}) == 4096, "each stream_event wrapper has its own uuid, as recorded"
    assert all(len(d["uuid"]) == 36 and d["parent_tool_use_id"] is None for d in deltas)
    whole = "".join(texts)
    assistant = next(line for line in lines if line["type"] == "assistant")
    assert assistant["message"]["content"] == [{"type": "text", "text": whole}]
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == whole
    sizes = [len(line) for line in raw if b"content_block_delta" in line]
    assert 315 <= sum(sizes) / len(sizes) <= 335  # the recorded line with 40 characters of text
