"""The benchmark flood of an ACP agent (Gemini CLI 0.61.0) is real-shaped: every line it writes, handshake answers
included, has the shape (key order, value types, nesting) of a line the real agent wrote in the recorded Gemini
transcripts, and the text adds up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[3] / "benchmarks"
sys.path.insert(0, str(BENCH))
import _recorded  # noqa: E402


def _kind(msg: dict[str, Any]) -> tuple[str, str, str]:
    """What a line is: its method and update kind, or which request it answers (by its result's first key)."""
    update = (msg.get("params") or {}).get("update") or {}
    result = msg.get("result")
    return msg.get("method", ""), update.get("sessionUpdate", ""), next(iter(result), "") if result else ""


def _recorded_shapes() -> dict[Any, list[Any]]:
    shapes: dict[Any, list[Any]] = {}
    for path in sorted(_recorded.GEMINI_TRANSCRIPTS.glob("*.jsonl")):
        for direction, msg in _recorded.acp_messages(path):
            if direction == "in":
                shapes.setdefault(_kind(msg), []).append(_recorded.shape(msg))
    return shapes


def _compact(lines: list[bytes]) -> list[dict[str, Any]]:
    assert all(b": " not in line[:40] for line in lines), "lines are compact JSON, as the agent writes them"
    return [json.loads(line) for line in lines]


def test_acp_flood_lines_have_the_recorded_shapes() -> None:
    shapes = _recorded_shapes()
    raw = _recorded.flood_lines("flood_acp.py", FLOOD_DELTAS="130")
    lines = _compact(raw)
    for msg in lines:
        assert _recorded.shape(msg) in shapes[_kind(msg)], msg
    chunks = [m for m in lines if _kind(m)[1] == "agent_message_chunk"]
    texts = [m["params"]["update"]["content"]["text"] for m in chunks]
    assert len(texts) == 130 and {len(t) for t in texts} == {40}
    assert "".join(texts) == _recorded.Repeats([], _recorded.delta_texts(), 130).text()
    assert lines[-1]["result"]["stopReason"] == "end_turn" and lines[-1]["id"] == 3
    assert [_kind(m)[1] for m in lines if m not in chunks] == ["available_commands_update", ""]
    sizes = [len(line) for line in raw if b"agent_message_chunk" in line]
    assert 225 <= sum(sizes) / len(sizes) <= 235  # the recorded line with 40 characters of text


def test_acp_flood_answers_the_handshake_as_recorded() -> None:
    """Served (no FLOOD_RAW): each request's answer is the recorded one, with the request's own id."""
    requests = [{"jsonrpc": "2.0", "id": i, "method": m, "params": {}}
                for i, m in enumerate(("initialize", "session/new", "session/set_mode", "session/prompt"))]
    stdin = b"".join(_recorded.compact(r) for r in requests)
    env = {k: v for k, v in os.environ.items() if k != "FLOOD_RAW"}
    out = subprocess.run([sys.executable, str(BENCH / "flood_acp.py")], input=stdin, capture_output=True, check=True,
                         timeout=60, env={**env, "FLOOD_DELTAS": "3"}).stdout
    lines = _compact(out.splitlines(keepends=True))
    answers = {m["id"]: m for m in lines if "id" in m}
    assert sorted(answers) == [0, 1, 2, 3]
    recorded = {m["id"]: m for d, m in _recorded.acp_messages() if d == "in" and "result" in m}
    assert answers[0] == {**recorded[1], "id": 0} and answers[1] == {**recorded[2], "id": 1}
    assert answers[2]["result"] == {}
    assert answers[3] == {**recorded[3], "id": 3} and lines[-1] is answers[3]
    session = answers[1]["result"]["sessionId"]
    assert all(m["params"]["sessionId"] == session for m in lines if "method" in m)
    shapes = _recorded_shapes()
    for msg in lines:
        if msg is not answers[2]:
            assert _recorded.shape(msg) in shapes[_kind(msg)], msg
