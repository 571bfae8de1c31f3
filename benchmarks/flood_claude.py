#!/usr/bin/env python3
"""A minimal `claude` (Claude Code 2.1.328, stream-json mode) stand-in that floods one turn, for benchmarks.

    flood_claude.py --version                      # prints `2.1.328 (Claude Code)`
    FLOOD_DELTAS=N flood_claude.py -p --output-format stream-json --input-format stream-json ...

Reads stream-json from stdin: answers `control_request`s (the SDK's `initialize`, and any other) with a
success `control_response`; on the first `user` message writes the turn: `system/init`, N `stream_event`
content_block_delta/text_delta lines, the `assistant` message, the `result` line. Then it keeps reading
stdin and exits at EOF, as the real CLI does in `--input-format stream-json` mode.

Shapes are copied from a recorded Claude Code 2.1.328 transcript (`transcript-bash-partial.jsonl`; the
`init` lists are shortened). Lines are serialized once and written in large batches, so the producer
costs almost nothing and blocks on the pipe when the reader is slow.

Modes (environment):
  FLOOD_DELTAS=N        the turn streams N text deltas (default 0)
  FLOOD_DELTA_BYTES=B   each delta carries B bytes of text instead of "token " (for memory runs)
"""

from __future__ import annotations

import contextlib
import json
import os
import sys

SESSION = "c53283f4-ddc6-4182-b27f-51af23d01ab8"
MESSAGE = "msg_526b6e8a255a491495680216"
MODEL = "claude-opus-5-5"
_out = sys.stdout.buffer


def line(obj: dict) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def init_line(cwd: str) -> bytes:
    return line({
        "type": "system", "subtype": "init", "cwd": cwd, "session_id": SESSION,
        "tools": ["Task", "Bash", "Edit", "Read", "Write"], "mcp_servers": [], "model": MODEL,
        "permissionMode": "bypassPermissions", "slash_commands": ["compact", "context", "init"],
        "apiKeySource": "ANTHROPIC_API_KEY", "claude_code_version": "2.1.328", "output_style": "default",
        "agents": ["general-purpose"], "skills": [], "plugins": [], "capabilities": [],
        "analytics_disabled": True, "product_feedback_disabled": True,
        "uuid": "83e4d9ff-ba06-43f3-932a-f5066d54a9ce", "original_cwd": cwd, "additional_directories": [],
        "fast_mode_state": "off", "fast_mode_disabled_reason": "sdk_opt_in_required",
    })


def stream_event(event: dict, uuid: str) -> bytes:
    return line({"type": "stream_event", "event": event, "session_id": SESSION, "parent_tool_use_id": None,
                 "uuid": uuid, "api_message_id": MESSAGE})


def turn_lines(cwd: str) -> tuple[bytes, bytes, int, bytes]:
    """(head, repeated line, count, tail) of the turn."""
    deltas = int(os.environ.get("FLOOD_DELTAS", "0"))
    size = int(os.environ.get("FLOOD_DELTA_BYTES", "0"))
    piece = "x" * size if size else "token "
    usage = {"input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 0}
    head = init_line(cwd)
    head += line({"type": "system", "subtype": "status", "status": "requesting", "session_id": SESSION,
                  "uuid": "a44e482e-c9cf-4da8-b379-2135133bc378"})
    head += stream_event({"type": "message_start", "message": {
        "id": MESSAGE, "type": "message", "role": "assistant", "model": MODEL, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": usage}}, "5e0b1f7c-6a43-4d2c-9d65-0c1f3b8a7e21")
    head += stream_event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                         "f0ba9dde-2ea6-44fa-888d-fb1080644942")
    repeated = stream_event({"type": "content_block_delta", "index": 0,
                             "delta": {"type": "text_delta", "text": piece}},
                            "ace0c328-829c-496a-9bb8-b97b59ad9ce7")
    text = piece * min(deltas, 10)
    tail = line({"type": "assistant", "message": {
        "id": MESSAGE, "type": "message", "role": "assistant", "model": MODEL,
        "content": [{"type": "text", "text": text}], "stop_reason": None, "stop_sequence": None,
        "usage": usage, "context_management": None}, "parent_tool_use_id": None, "session_id": SESSION,
        "uuid": "b92a8bff-05e2-4701-9294-d528914a57c4", "timestamp": "2026-11-30T00:16:31.264Z",
        "request_id": "req_fake_96cf9aff7cb1"})
    tail += stream_event({"type": "content_block_stop", "index": 0}, "254f9bf6-0e65-4007-a93d-48d573582937")
    tail += stream_event({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                          "usage": {"output_tokens": max(deltas, 1)}}, "42935ef4-2e44-4ac6-a70d-6fa806c0aa70")
    tail += stream_event({"type": "message_stop"}, "9d59b7bb-6230-4e3b-be60-fd088fc759db")
    total = {"input_tokens": 100, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
             "output_tokens": max(deltas, 1), "server_tool_use": {"web_search_requests": 0,
                                                                  "web_fetch_requests": 0},
             "service_tier": "standard"}
    tail += line({
        "type": "result", "subtype": "success", "is_error": False, "api_error_status": None,
        "duration_ms": 120, "duration_api_ms": 97, "num_turns": 1, "result": text, "stop_reason": "end_turn",
        "session_id": SESSION, "total_cost_usd": 0.00128, "usage": total,
        "modelUsage": {MODEL: {"inputTokens": 100, "outputTokens": max(deltas, 1), "cacheReadInputTokens": 0,
                               "cacheCreationInputTokens": 0, "webSearchRequests": 0, "costUSD": 0.00128,
                               "contextWindow": 1000000, "maxOutputTokens": 128000}},
        "permission_denials": [], "terminal_reason": "completed", "fast_mode_state": "off",
        "uuid": "0f3c2d5e-8b1a-4c7d-9e6f-2a4b6c8d0e1f",
    })
    return head, repeated, deltas, tail


def write_turn(cwd: str) -> None:
    head, repeated, count, tail = turn_lines(cwd)
    _out.write(head)
    batch = max(1, (1 << 20) // len(repeated))
    full, rest = divmod(count, batch)
    block = repeated * batch
    for _ in range(full):
        _out.write(block)
    _out.write(repeated * rest + tail)
    _out.flush()


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
            _out.write(line({"type": "control_response", "response": {
                "subtype": "success", "request_id": msg.get("request_id"), "response": response}}))
            _out.flush()
        elif kind == "user" and not played:
            played = True
            write_turn(cwd)


def main() -> int:
    if "--version" in sys.argv or "-v" in sys.argv:
        print("2.1.328 (Claude Code)")
        return 0
    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt):
        serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
