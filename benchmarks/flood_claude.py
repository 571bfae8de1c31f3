#!/usr/bin/env python3
"""A `claude` (Claude Code 2.1.328, stream-json mode) stand-in that floods one turn with real-shaped lines.

    flood_claude.py --version                      # prints `2.1.328 (Claude Code)`
    FLOOD_DELTAS=N flood_claude.py -p --output-format stream-json --input-format stream-json ...

Reads stream-json from stdin: answers `control_request`s (the SDK's `initialize`, and any other) with a
success `control_response`; on the first `user` message writes the turn. Then it keeps reading stdin and exits
at EOF, as the real CLI does in `--input-format stream-json` mode.

Every line is copied from a recorded Claude Code 2.1.328 session (`transcript-bash-partial.jsonl`, with
`--include-partial-messages`): `system/init` (its cwd replaced), `system/status`, and its second message in
order — `message_start`, `content_block_start`, the `content_block_delta` text_delta repeated N times (each
`stream_event` wrapper with its own 36-character `uuid`, the `session_id`, `parent_tool_use_id`,
`api_message_id`, as the real CLI writes them; 40 characters of text per delta), the `assistant` message and
the `result` carrying the whole text, `content_block_stop`, `message_delta`, `message_stop`.
`providers/*/tests/test_bench_flood.py` checks the lines against the recording, shape for shape. Lines are serialized
once and written in large batches, so the producer costs almost nothing and blocks on the pipe when the
reader is slow.

Modes (environment):
  FLOOD_DELTAS=N        the turn streams N text deltas (default 0)
  FLOOD_DELTA_BYTES=B   each delta carries B bytes of text instead of 40 characters (for memory runs)
  FLOOD_RAW=1           no control protocol: just write the turn's lines (the raw-parsing reference)
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import sys
from typing import Any

from _recorded import Repeats, claude_lines, compact, delta_texts, fake_uuids, write_all

_out = sys.stdout.buffer
_RECORDED = claude_lines()
_RECORDED_CWD = _RECORDED[0]["cwd"]


def _second_message() -> list[dict[str, Any]]:
    """The recorded lines of the turn's last message, from its `message_start` to the `result`."""
    starts = [i for i, m in enumerate(_RECORDED)
              if m["type"] == "stream_event" and m["event"]["type"] == "message_start"]
    return copy.deepcopy(_RECORDED[starts[-1]:])


def turn_lines(cwd: str) -> tuple[bytes, Repeats, bytes]:
    """(head, repeated lines, tail) of the turn."""
    init = json.loads(json.dumps(_RECORDED[0]).replace(_RECORDED_CWD, cwd))
    status = next(m for m in _RECORDED if m["type"] == "system" and m.get("subtype") == "status")
    message = _second_message()
    deltas = [m for m in message if m["type"] == "stream_event" and m["event"]["type"] == "content_block_delta"]
    first = message.index(deltas[0])
    before, after = message[:first], [m for m in message[first:] if m not in deltas]
    size = int(os.environ.get("FLOOD_DELTA_BYTES", "0"))
    texts = ["x" * size] if size else delta_texts()
    uuids = fake_uuids(max(len(texts), 4096))
    lines = []
    for i, uuid in enumerate(uuids):
        wrapper = copy.deepcopy(deltas[0])
        wrapper["event"]["delta"]["text"] = texts[i % len(texts)]
        wrapper["uuid"] = uuid
        lines.append(compact(wrapper))
    texts = [texts[i % len(texts)] for i in range(len(uuids))]
    repeats = Repeats(lines, texts, int(os.environ.get("FLOOD_DELTAS", "0")))
    text = repeats.text()
    for line_ in after:
        if line_["type"] == "assistant":
            line_["message"]["content"] = [{"type": "text", "text": text}]
        elif line_["type"] == "result":
            line_["result"] = text
    return compact(init) + compact(status) + b"".join(map(compact, before)), repeats, b"".join(
        map(compact, after))


def write_turn(cwd: str) -> None:
    head, repeats, tail = turn_lines(cwd)
    write_all(_out, head, repeats, tail)


def serve() -> None:
    cwd = os.getcwd()
    played = False
    for raw in sys.stdin.buffer:
        try:
            msg = json.loads(raw)
        except ValueError:
            continue
        kind = msg.get("type")
        if kind == "control_request":
            subtype = (msg.get("request") or {}).get("subtype")
            response: dict = {"commands": [], "output_style": "default", "available_output_styles": ["default"],
                              "models": [], "account": {}} if subtype == "initialize" else {}
            _out.write(compact({"type": "control_response", "response": {
                "subtype": "success", "request_id": msg.get("request_id"), "response": response}}))
            _out.flush()
        elif kind == "user" and not played:
            played = True
            write_turn(cwd)


def main() -> int:
    if "--version" in sys.argv or "-v" in sys.argv:
        print("2.1.328 (Claude Code)")
        return 0
    if os.environ.get("FLOOD_RAW"):
        write_turn(os.getcwd())
        return 0
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
