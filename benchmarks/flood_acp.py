#!/usr/bin/env python3
"""An ACP agent (Gemini CLI 0.61.0, `gemini --acp`) stand-in that floods one prompt turn with real-shaped lines.

    FLOOD_DELTAS=N flood_acp.py         # newline-delimited JSON-RPC on stdio, as `gemini --acp` speaks it

Every line is copied from a recorded Gemini CLI 0.61.0 session (`providers/acp/tests/transcripts/gemini/say.jsonl`):
the `initialize` and `session/new` answers (its agentInfo, authMethods, modes, models, sessionId), then for the
`session/prompt` its turn in order: the `available_commands_update`, the `agent_message_chunk` notification
repeated N times (40 characters of text each, the envelope as recorded: `jsonrpc`, `method`, `params.sessionId`,
`update.content`), and the prompt's answer (`stopReason`, `_meta.quota`). Other requests (`session/set_mode`, ...)
get an empty result; notifications (`session/cancel`) are read and dropped. It exits at the end of its stdin, as
the real agent does. `providers/acp/tests/test_bench_flood.py` checks the lines against the recording, shape for
shape. Lines are serialized once and written in large batches, so the producer costs almost nothing and blocks on
the pipe when the reader is slow.

Modes (environment):
  FLOOD_DELTAS=N   the turn streams N `agent_message_chunk` notifications (default 0)
  FLOOD_RAW=1      no handshake: just write the turn's lines (the raw-parsing reference)
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import sys
from typing import Any

from _recorded import Repeats, acp_messages, compact, delta_texts, write_all

_out = sys.stdout.buffer
_MESSAGES = acp_messages()
VERSION = "0.61.0"


def _request(method: str) -> dict[str, Any]:
    return next(m for d, m in _MESSAGES if d == "out" and m.get("method") == method)


def _answer(method: str, rid: object) -> dict[str, Any]:
    """The recorded answer to the recorded request of `method`, with the id `rid` (key order kept)."""
    recorded_id = _request(method)["id"]
    answer = copy.deepcopy(next(m for d, m in _MESSAGES if d == "in" and m.get("id") == recorded_id
                                and "result" in m))
    answer["id"] = rid
    return answer


def _is_chunk(msg: dict[str, Any]) -> bool:
    return msg.get("method") == "session/update" and msg["params"]["update"]["sessionUpdate"] == "agent_message_chunk"


def turn_lines(prompt_id: object) -> tuple[bytes, Repeats, bytes]:
    """(head, repeated lines, tail) of the prompt turn: what the agent wrote from the recorded `session/prompt` to
    its answer, the answer carrying `prompt_id`."""
    start = next(i for i, (d, m) in enumerate(_MESSAGES) if d == "out" and m.get("method") == "session/prompt")
    notes = [copy.deepcopy(m) for d, m in _MESSAGES[start + 1:] if d == "in" and "method" in m]
    chunks = [n for n in notes if _is_chunk(n)]
    first = notes.index(chunks[0])
    before, after = notes[:first], [n for n in notes[first:] if not _is_chunk(n)]
    texts = delta_texts()
    lines = []
    for text in texts:
        chunk = copy.deepcopy(chunks[0])
        chunk["params"]["update"]["content"]["text"] = text
        lines.append(compact(chunk))
    repeats = Repeats(lines, texts, int(os.environ.get("FLOOD_DELTAS", "0")))
    tail = [*after, _answer("session/prompt", prompt_id)]
    return b"".join(map(compact, before)), repeats, b"".join(map(compact, tail))


def write_turn(prompt_id: object) -> None:
    head, repeats, tail = turn_lines(prompt_id)
    write_all(_out, head, repeats, tail)


def serve() -> None:
    for raw in sys.stdin.buffer:
        try:
            msg = json.loads(raw)
        except ValueError:
            continue
        method, rid = msg.get("method"), msg.get("id")
        if rid is None or method is None:  # a notification (session/cancel) or an answer
            continue
        if method in ("initialize", "session/new"):
            _out.write(compact(_answer(method, rid)))
        elif method == "session/prompt":
            write_turn(rid)
            continue
        else:
            _out.write(compact({"jsonrpc": "2.0", "id": rid, "result": {}}))
        _out.flush()


def main() -> int:
    if "--version" in sys.argv:
        print(VERSION)
        return 0
    if os.environ.get("FLOOD_RAW"):
        write_turn(_request("session/prompt")["id"])
        return 0
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
