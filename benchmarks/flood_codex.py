#!/usr/bin/env python3
"""A `codex app-server` (codex-cli 0.169.0) stand-in that floods one turn with real-shaped lines, for benchmarks.

Every line is copied from a recorded real session (`transcript-appserver.jsonl`: its handshake answers, its
second turn's notifications, in order, with their thread/turn/item ids and every extra field); only the
`item/agentMessage/delta` notification is repeated, each carrying 40 characters of text, and the final
`item/completed` / `turn/completed` carry the whole text, as the real server's do.
`providers/*/tests/test_bench_flood.py` checks the lines against the recording, shape for shape.

Modes (environment):
  FLOOD_DELTAS=N      the turn streams N `item/agentMessage/delta` notifications
  FLOOD_OUTPUT_MB=M   the turn runs one command that prints M MiB (64 KiB `outputDelta` notifications, shaped
                      as in `transcript-approval.jsonl`; `aggregatedOutput` is not repeated in full)
  FLOOD_RAW=1         skip the handshake: just write the turn's notification lines (the raw-parsing reference)
Lines are serialized once and written in large batches, so the producer costs almost nothing and blocks
on the pipe when the reader is slow (that is what the memory benchmark relies on).
"""

from __future__ import annotations

import copy
import json
import os
import sys
from typing import Any

from _recorded import CODEX_OUTPUT_TRANSCRIPT, Repeats, codex_messages, compact, delta_texts, write_all

_out = sys.stdout.buffer
_RECORDED_CWD = "/tmp/e2e/ws-basic"
_MESSAGES = codex_messages()
_IN = [msg for direction, msg in _MESSAGES if direction == "in"]


def _result(request_id: int) -> dict[str, Any]:
    return copy.deepcopy(next(m for m in _IN if m.get("id") == request_id and "result" in m))


def _with_cwd(obj: Any, cwd: str) -> Any:
    """A recorded answer for this workspace; the thread keeps no rollout file (`path` null, as an ephemeral
    thread's): the recorded one does not exist here, and the provider would wait for it to appear."""
    answer = json.loads(json.dumps(obj).replace(_RECORDED_CWD, cwd))
    thread = (answer.get("result") or answer.get("params") or {}).get("thread")
    if isinstance(thread, dict):
        thread["path"] = None
    return answer


def _second_turn() -> list[dict[str, Any]]:
    """The recorded notifications of the session's second turn (a text answer), from the answer to its
    `turn/start` to `turn/completed`."""
    start = max(i for i, (d, m) in enumerate(_MESSAGES) if d == "out" and m.get("method") == "turn/start")
    turn = [copy.deepcopy(m) for d, m in _MESSAGES[start + 1:] if d == "in" and "method" in m]
    assert turn[-1]["method"] == "turn/completed", "the recording's last turn is incomplete"
    return turn


def turn_lines() -> tuple[bytes, Repeats, bytes]:
    """(head, repeated lines, tail) of the turn's notification stream."""
    notes = _second_turn()
    deltas = [n for n in notes if n["method"] == "item/agentMessage/delta"]
    first = notes.index(deltas[0])
    before, after = notes[:first], [n for n in notes[first:] if n["method"] != "item/agentMessage/delta"]
    output_mb = int(os.environ.get("FLOOD_OUTPUT_MB", "0"))
    if output_mb:
        return _output_turn(before, after, output_mb)
    texts = delta_texts()
    lines = []
    for i, text in enumerate(texts):
        note = copy.deepcopy(deltas[0])
        note["params"]["delta"] = text
        note["emittedAtMs"] += i
        lines.append(compact(note))
    repeats = Repeats(lines, texts, int(os.environ.get("FLOOD_DELTAS", "0")))
    text = repeats.text()
    for note in after:
        if note["method"] == "item/completed" and note["params"]["item"]["type"] == "agentMessage":
            note["params"]["item"]["text"] = text
        if note["method"] == "turn/completed":
            for item in note["params"]["turn"]["items"]:
                if item["type"] == "agentMessage":
                    item["text"] = text
    return b"".join(map(compact, before)), repeats, b"".join(map(compact, after))


def _output_turn(before: list[dict[str, Any]], after: list[dict[str, Any]],
                 output_mb: int) -> tuple[bytes, Repeats, bytes]:
    """The same turn with one command printing `output_mb` MiB before the answer."""
    recorded = codex_messages(CODEX_OUTPUT_TRANSCRIPT)
    delta = next(m for d, m in recorded if m.get("method") == "item/commandExecution/outputDelta")
    first = codex_messages()
    started = next(m for d, m in first if m.get("method") == "item/started"
                   and m["params"]["item"]["type"] == "commandExecution")
    completed = next(m for d, m in first if m.get("method") == "item/completed"
                     and m["params"]["item"]["type"] == "commandExecution")
    ids = {k: before[-1]["params"][k] for k in ("threadId", "turnId")}
    started, completed = copy.deepcopy(started), copy.deepcopy(completed)
    for note in (started, completed):
        note["params"].update(ids)
        note["params"]["item"]["command"] = "/bin/bash -lc 'cat big.log'"
    completed["params"]["item"]["aggregatedOutput"] = "(1 GiB of output, not repeated here)\n"
    chunk = "x" * 65535 + "\n"
    delta = copy.deepcopy(delta)
    delta["params"].update(ids, itemId=started["params"]["item"]["id"], delta=chunk)
    repeats = Repeats([compact(delta)], [chunk], output_mb * 16)
    head = b"".join(map(compact, [*before, started]))
    return head, repeats, compact(completed) + b"".join(map(compact, after))


def write_flood() -> None:
    head, repeats, tail = turn_lines()
    write_all(_out, head, repeats, tail)


def _answer(rid: object, recorded_id: int, cwd: str) -> None:
    result = _result(recorded_id)
    result["id"] = rid
    _out.write(compact(_with_cwd(result, cwd)))


def serve() -> None:
    cwd = os.getcwd()
    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        method, rid = msg.get("method"), msg.get("id")
        if rid is None:
            continue
        if method == "initialize":
            _answer(rid, 1, cwd)
            for note in _IN:
                if note.get("method") in ("configWarning", "remoteControl/status/changed"):
                    _out.write(compact(note))
        elif method in ("thread/start", "thread/resume"):
            cwd = (msg.get("params") or {}).get("cwd") or cwd
            _answer(rid, 2, cwd)
            started = next(m for m in _IN if m.get("method") == "thread/started")
            _out.write(compact(_with_cwd(started, cwd)))
        elif method == "turn/start":
            turn_start = max(m["id"] for d, m in _MESSAGES if d == "out" and m.get("method") == "turn/start")
            _answer(rid, turn_start, cwd)
            _out.flush()
            write_flood()
            continue
        else:
            _out.write(compact({"id": rid, "result": {}}))
        _out.flush()


def main() -> int:
    if "--version" in sys.argv:
        print("codex-cli 0.169.0")
        return 0
    if os.environ.get("FLOOD_RAW"):
        write_flood()
        return 0
    serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
