#!/usr/bin/env python3
"""A minimal `codex app-server` stand-in that floods one turn with pre-serialized lines, for benchmarks.

Modes (environment):
  FLOOD_DELTAS=N      the turn streams N `item/agentMessage/delta` notifications
  FLOOD_OUTPUT_MB=M   the turn runs one command that prints M MiB (64 KiB `outputDelta` notifications)
  FLOOD_RAW=1         skip the handshake: just write the notification lines (the raw-parsing reference)
Lines are serialized once and written in large batches, so the producer costs almost nothing and blocks
on the pipe when the reader is slow (that is what the memory benchmark relies on).
"""

from __future__ import annotations

import json
import os
import sys

THREAD, TURN = "thr_bench", "turn_bench"
_out = sys.stdout.buffer


def line(obj: dict) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def note(method: str, params: dict) -> bytes:
    return line({"method": method, "params": params, "emittedAtMs": 1})


def flood_lines() -> tuple[bytes, bytes, int, bytes]:
    """(head, repeated line, count, tail) of the turn's notification stream."""
    ids = {"threadId": THREAD, "turnId": TURN}
    deltas = int(os.environ.get("FLOOD_DELTAS", "0"))
    output_mb = int(os.environ.get("FLOOD_OUTPUT_MB", "0"))
    head = note("turn/started", {"threadId": THREAD, "turn": {"id": TURN, "items": [], "status": "inProgress",
                                                              "error": None}})
    if output_mb:
        item = {"type": "commandExecution", "id": "call_1", "command": "bash -lc 'cat big'", "cwd": "/tmp",
                "processId": None, "status": "inProgress", "commandActions": [], "aggregatedOutput": None,
                "exitCode": None, "durationMs": None}
        head += note("item/started", {**ids, "item": item})
        repeated = note("item/commandExecution/outputDelta", {**ids, "itemId": "call_1", "delta": "x" * 65535 + "\n"})
        count = output_mb * 16
        done = {**item, "status": "completed", "aggregatedOutput": "(elided)", "exitCode": 0, "durationMs": 5}
        tail = note("item/completed", {**ids, "item": done})
    else:
        item = {"type": "agentMessage", "id": "msg_1", "text": "", "phase": None}
        head += note("item/started", {**ids, "item": item})
        repeated = note("item/agentMessage/delta", {**ids, "itemId": "msg_1", "delta": "token "})
        count = deltas
        tail = note("item/completed", {**ids, "item": {**item, "text": "token " * min(deltas, 10)}})
    usage = {"totalTokens": 15, "inputTokens": 10, "cachedInputTokens": 0, "outputTokens": 5,
             "reasoningOutputTokens": 0}
    tail += note("thread/tokenUsage/updated", {**ids, "tokenUsage": {"total": usage, "last": usage,
                                                                       "modelContextWindow": 1000}})
    tail += note("turn/completed", {"threadId": THREAD, "turn": {"id": TURN, "items": [], "status": "completed",
                                                                 "error": None}})
    return head, repeated, count, tail


def write_flood() -> None:
    head, repeated, count, tail = flood_lines()
    _out.write(head)
    batch = max(1, (1 << 20) // len(repeated))
    full, rest = divmod(count, batch)
    block = repeated * batch
    for _ in range(full):
        _out.write(block)
    _out.write(repeated * rest + tail)
    _out.flush()


def serve() -> None:
    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        method, rid = msg.get("method"), msg.get("id")
        if rid is None:
            continue
        if method == "initialize":
            result: dict = {"userAgent": "flood/0.169.0", "codexHome": "/tmp", "platformFamily": "unix",
                            "platformOs": "linux"}
        elif method in ("thread/start", "thread/resume"):
            cwd = (msg.get("params") or {}).get("cwd", "/tmp")
            result = {"thread": {"id": THREAD, "preview": "", "ephemeral": True, "modelProvider": "mock",
                                 "createdAt": 0, "updatedAt": 0, "status": {"type": "idle"}, "path": None,
                                 "cwd": cwd, "cliVersion": "0.169.0", "source": "appServer", "turns": []},
                      "model": "gpt-5.5", "modelProvider": "mock", "cwd": cwd, "approvalPolicy": "never",
                      "sandbox": {"type": "dangerFullAccess"}, "reasoningEffort": None}
        elif method == "turn/start":
            _out.write(line({"id": rid, "result": {"turn": {"id": TURN, "items": [], "status": "inProgress",
                                                            "error": None}}}))
            _out.flush()
            write_flood()
            continue
        else:
            result = {}
        _out.write(line({"id": rid, "result": result}))
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
