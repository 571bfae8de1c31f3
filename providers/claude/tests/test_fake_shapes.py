"""The fake claude CLI must print the same line shapes as the real one (recorded transcripts): no drift.

For every kind of line (type + subtype / stream event type / block type) the fake prints, the real CLI must
print it too, every key the real CLI always sends must be there, and the fake must send no key the real CLI
never sent. Checked at the top level and one level down (`message`, `event`, `request`, `response`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

RECORDED = Path(__file__).parent / "transcripts" / "recorded"
NESTED = ("message", "event", "request", "response")


def kind_of(msg: dict[str, Any]) -> str:
    t = msg.get("type")
    if t == "system":
        return f"system/{msg.get('subtype')}"
    if t == "stream_event":
        return f"stream_event/{msg['event'].get('type')}"
    if t in ("assistant", "user"):
        content = msg["message"]["content"]
        first = content[0].get("type") if isinstance(content, list) and content else "str"
        return f"{t}/{first}"
    if t == "result":
        return f"result/{msg.get('subtype')}/{'error' if msg.get('is_error') else 'ok'}"
    if t == "control_request":
        return f"control_request/{msg['request'].get('subtype')}"
    return str(t)


def shapes(lines: list[dict[str, Any]]) -> dict[str, list[dict[str, frozenset[str]]]]:
    out: dict[str, list[dict[str, frozenset[str]]]] = {}
    for msg in lines:
        shape = {"": frozenset(msg)}
        for key in NESTED:
            if isinstance(msg.get(key), dict):
                shape[key] = frozenset(msg[key])
        out.setdefault(kind_of(msg), []).append(shape)
    return out


def real_lines() -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for path in sorted(RECORDED.glob("*.jsonl"))
        if not path.name.endswith(".stdin.jsonl")
        for line in path.read_text().splitlines()
        if line.strip()
    ]


def fake_lines(tmp_path: Path, scenario: str, *args: str, answers: list[dict[str, Any]] = ()) -> list[dict]:  # type: ignore[assignment]
    user = {"type": "user", "message": {"role": "user", "content": f"SCENARIO:{scenario}"}}
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness_claude.testing.fake", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=tmp_path,
        text=True,
    )
    assert proc.stdin and proc.stdout
    proc.stdin.write(json.dumps(user) + "\n")
    proc.stdin.flush()
    out = []
    for line in proc.stdout:
        msg = json.loads(line)
        out.append(msg)
        if msg["type"] == "control_request":
            answer = answers[0] if answers else {"behavior": "allow", "updatedInput": msg["request"]["input"]}
            resp = {"subtype": "success", "request_id": msg["request_id"], "response": answer}
            proc.stdin.write(json.dumps({"type": "control_response", "response": resp}) + "\n")
            proc.stdin.flush()
        if msg["type"] == "result":
            proc.stdin.close()
    assert proc.wait(timeout=10) in (0, 1)
    return out


@pytest.fixture(scope="module")
def real() -> dict[str, list[dict[str, frozenset[str]]]]:
    return shapes(real_lines())


@pytest.mark.parametrize(
    ("scenario", "args"),
    [
        ("tools", ()),
        ("think", ()),
        ("fail_500", ()),
        ("tools", ("--permission-prompt-tool", "stdio", "--permission-mode", "default")),
    ],
)
def test_fake_lines_match_real_shapes(
    tmp_path: Path, real: dict[str, list[dict[str, frozenset[str]]]], scenario: str, args: tuple[str, ...]
) -> None:
    fake = shapes(fake_lines(tmp_path, scenario, *args))
    unknown = set(fake) - set(real)
    assert not unknown, f"the fake prints kinds of lines the real CLI never did: {unknown}"
    for kind, samples in fake.items():
        for level in {lvl for s in real[kind] for lvl in s}:
            seen = [s[level] for s in real[kind] if level in s]
            always, ever = frozenset.intersection(*seen), frozenset.union(*seen)
            for sample in samples:
                got = sample.get(level, frozenset())
                where = f"{kind} {level or 'top level'}"
                assert always <= got, f"{where}: the fake lacks {sorted(always - got)}"
                assert got <= ever, f"{where}: the fake adds {sorted(got - ever)}"


def test_core_kinds_are_covered_by_the_recordings(real: dict[str, list[dict[str, frozenset[str]]]]) -> None:
    needed = {
        "system/init",
        "stream_event/content_block_delta",
        "assistant/text",
        "assistant/tool_use",
        "assistant/thinking",
        "user/tool_result",
        "result/success/ok",
        "control_request/can_use_tool",
    }
    assert needed <= set(real)
