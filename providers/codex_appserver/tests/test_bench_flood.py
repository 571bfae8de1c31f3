"""The benchmark flood of `codex app-server` is real-shaped: every line it writes has the shape (key order, value types,
nested) of a line the real CLI wrote in the recorded transcript it was built from, and the text adds up."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[3] / "benchmarks"
sys.path.insert(0, str(BENCH))
import _recorded  # noqa: E402


def _flood(**env: str) -> list[bytes]:
    lines = _recorded.flood_lines("flood_codex.py", **env)
    assert all(b": " not in line[:40] for line in lines), "lines are compact JSON, as the CLIs write them"
    return lines


def _kind(msg: dict[str, Any]) -> tuple[str, str]:
    item = (msg.get("params") or {}).get("item") or {}
    return msg.get("method", ""), item.get("type", "")


@pytest.mark.parametrize("env", [{"FLOOD_DELTAS": "130"}, {"FLOOD_OUTPUT_MB": "1"}], ids=["deltas", "output"])
def test_codex_flood_lines_have_the_recorded_shapes(env: dict[str, str]) -> None:
    recorded = [m for d, m in _recorded.codex_messages() if d == "in" and "method" in m]
    recorded += [m for d, m in _recorded.codex_messages(_recorded.CODEX_OUTPUT_TRANSCRIPT)
                 if d == "in" and "method" in m]
    shapes: dict[Any, list[Any]] = {}
    for msg in recorded:
        shapes.setdefault(_kind(msg), []).append(_recorded.shape(msg))
    lines = [json.loads(line) for line in _flood(**env)]
    for msg in lines:
        assert _recorded.shape(msg) in shapes[_kind(msg)], msg
    assert lines[-1]["method"] == "turn/completed"
    if "FLOOD_DELTAS" in env:
        deltas = [m["params"]["delta"] for m in lines if m["method"] == "item/agentMessage/delta"]
        assert len(deltas) == 130 and {len(d) for d in deltas} == {40}
        completed = next(m for m in lines if _kind(m) == ("item/completed", "agentMessage"))
        assert completed["params"]["item"]["text"] == "".join(deltas)
        assert lines[-1]["params"]["turn"]["items"][-1]["text"] == "".join(deltas)
    else:
        chunks = [m["params"]["delta"] for m in lines if m["method"] == "item/commandExecution/outputDelta"]
        assert sum(map(len, chunks)) == 1 << 20


def test_delta_lines_are_as_long_as_the_real_ones_with_40_characters_of_text() -> None:
    deltas = [line for line in _flood(FLOOD_DELTAS="100") if b"agentMessage/delta" in line]
    assert 230 <= sum(map(len, deltas)) / len(deltas) <= 260  # the recorded line with 40 characters of text
