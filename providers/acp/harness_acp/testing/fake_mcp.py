"""The fake ACP agent's MCP client: calls one tool of a stdio MCP server, as a real agent does (stdlib only).

Layer: testing (fake CLI). Knows MCP's stdio transport (newline-delimited JSON-RPC: `initialize`,
`notifications/initialized`, `tools/call`) and ACP's `McpServer` stdio shape; knows no scenario. Every read has a
deadline, and the server process is always ended.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import subprocess
import time
from typing import Any

__all__ = ["McpCallFailed", "call_tool"]

PROTOCOL = "2025-06-18"
DEADLINE = 60.0


class McpCallFailed(Exception):
    """The server could not be started or did not answer; the message says which."""


def _read_answer(proc: subprocess.Popen[bytes], rid: int, deadline: float) -> dict[str, Any]:
    assert proc.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    buffer = b""
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise McpCallFailed(f"the MCP server did not answer request {rid} in time")
            if not selector.select(left):
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                raise McpCallFailed(f"the MCP server exited before answering request {rid}")
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if isinstance(msg, dict) and msg.get("id") == rid and "method" not in msg:
                    return msg
    finally:
        selector.close()


def call_tool(server: dict[str, Any], tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    """Call `tool` of the ACP stdio `server` (`{name, command, args, env:[{name, value}]}`): (its text, is_error).

    Raises:
        McpCallFailed: the server did not start or did not answer within `DEADLINE` seconds.
    """
    env = {**os.environ, **{e["name"]: e["value"] for e in server.get("env") or () if isinstance(e, dict)}}
    try:
        proc = subprocess.Popen([server["command"], *server.get("args", ())], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    except OSError as exc:
        raise McpCallFailed(f"could not start MCP server {server.get('name')!r}: {exc}") from None
    assert proc.stdin is not None
    deadline = time.monotonic() + DEADLINE

    def send(msg: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write((json.dumps({"jsonrpc": "2.0", **msg}) + "\n").encode())
        proc.stdin.flush()

    try:
        send({"id": 1, "method": "initialize", "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                                                           "clientInfo": {"name": "fake-acp-agent",
                                                                          "version": "1"}}})
        _read_answer(proc, 1, deadline)
        send({"method": "notifications/initialized"})
        send({"id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
        answer = _read_answer(proc, 2, deadline)
    except (BrokenPipeError, OSError) as exc:
        raise McpCallFailed(f"MCP server {server.get('name')!r} failed: {exc}") from None
    finally:
        with contextlib.suppress(OSError):
            proc.stdin.close()
        try:
            proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if "error" in answer:
        return str((answer["error"] or {}).get("message") or answer["error"]), True
    result = answer.get("result") or {}
    texts = [str(c.get("text")) for c in result.get("content") or () if isinstance(c, dict) and c.get("type") == "text"]
    return "\n".join(texts), bool(result.get("isError"))
