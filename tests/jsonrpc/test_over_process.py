"""JsonRpcPeer over a real ChildProcess: a tiny JSON-RPC server script, including a crash mid-request."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest

from harness_core.errors import ProcessExitedError
from harness_core.jsonrpc import JsonRpcPeer
from harness_core.transport import ChildProcess

pytestmark = pytest.mark.anyio

SERVER = r"""
import json, sys
for raw in sys.stdin:
    msg = json.loads(raw)
    if msg.get("method") == "crash":
        sys.stderr.write("panic: crash requested\n"); sys.stderr.flush(); sys.exit(101)
    if "method" in msg and "id" in msg:
        print(json.dumps({"method": "progress", "params": {"for": msg["id"]}}), flush=True)
        print(json.dumps({"id": msg["id"], "result": {"echo": msg.get("params")}}), flush=True)
"""


async def ignore(method: str, params: Any, msg: dict[str, Any]) -> None:
    pass


async def test_request_over_child_then_crash_fails_pending_with_exit_error() -> None:
    with anyio.fail_after(10):
        async with ChildProcess([sys.executable, "-c", SERVER]) as proc:
            peer = JsonRpcPeer(
                proc, on_notification=ignore, closed_error=lambda: proc.exit_error("server exited")
            )
            async with anyio.create_task_group() as tg:
                tg.start_soon(peer.run)
                assert await peer.request("hello", {"n": 0}) == {"echo": {"n": 0}}
                with pytest.raises(ProcessExitedError) as info:
                    await peer.request("crash")
    assert info.value.exit_code == 101 and "panic: crash requested" in info.value.stderr_tail
    assert proc.returncode == 101
