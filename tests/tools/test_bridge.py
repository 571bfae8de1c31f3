"""The stdio bridge between an agent and the tool server: it relays both ways at once (a large request and a large
response in flight together), exits when either side goes away, and never outlives its agent."""

from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from harness_core import tool
from harness_core.tools.bridge import SECRET_ENV, SOCKET_ENV
from harness_core.tools.server import ToolServer

_DEADLINE = 30.0


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _exactly(read: Callable[[int], bytes], size: int) -> bytes:
    got = bytearray()
    while len(got) < size:
        chunk = read(min(1 << 16, size - len(got)))
        if not chunk:
            break
        got += chunk
    return bytes(got)


def test_a_large_request_and_a_large_response_at_once_both_arrive() -> None:
    """The agent writes a large request before it reads, while the server writes a large response before it
    reads (its buffers full): the bridge must take from both sides at once, or each waits on the other forever."""
    size = 8 << 20
    request, response = bytes(range(256)) * (size // 256), bytes(reversed(range(256))) * (size // 256)
    where = Path(tempfile.mkdtemp(prefix="hb-", dir="/tmp"))  # short: a unix socket path is at most 107 bytes
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(where / "s.sock"))
    listener.listen(1)
    listener.settimeout(_DEADLINE)
    received: dict[str, bytes] = {}

    def server() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(_DEADLINE)
            hello = b""
            while not hello.endswith(b"\n"):
                hello += conn.recv(1)
            received["hello"] = hello
            conn.sendall(response)  # all of it before reading anything
            received["request"] = _exactly(conn.recv, size)

    def agent() -> None:
        assert bridge.stdin is not None and bridge.stdout is not None
        bridge.stdin.write(request)  # all of it before reading anything
        bridge.stdin.flush()
        received["response"] = _exactly(bridge.stdout.read, size)

    serving = threading.Thread(target=server, daemon=True)
    serving.start()
    bridge = subprocess.Popen([sys.executable, "-m", "harness_core.tools.bridge"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, env={**os.environ, SOCKET_ENV: str(where / "s.sock"),
                                                           SECRET_ENV: "s3cret"})
    try:
        calling = threading.Thread(target=agent, daemon=True)
        calling.start()
        calling.join(_DEADLINE)
        serving.join(_DEADLINE)
        assert not calling.is_alive() and not serving.is_alive(), f"the bridge relayed neither way in {_DEADLINE} s"
        assert received["hello"] == b"s3cret\n"
        assert received["request"] == request and received["response"] == response
        assert bridge.stdin is not None
        bridge.stdin.close()  # the agent is done: the bridge exits
        assert bridge.wait(timeout=_DEADLINE) == 0
    finally:
        if bridge.poll() is None:
            bridge.kill()
            bridge.wait(timeout=_DEADLINE)
        listener.close()
        for leftover in where.iterdir():
            leftover.unlink()
        where.rmdir()


def _spawn_bridge(server: ToolServer) -> subprocess.Popen[bytes]:
    command, args, env = server.bridge_command()
    return subprocess.Popen([command, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            env={**os.environ, **env})


@pytest.mark.anyio
async def test_the_bridge_exits_when_the_harness_side_goes_away() -> None:
    server = ToolServer([add])
    async with server.serving():
        bridge = _spawn_bridge(server)
        try:
            with anyio.fail_after(20):
                assert bridge.stdin is not None and bridge.stdout is not None
                bridge.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
                bridge.stdin.flush()
                assert b'"id":1' in await anyio.to_thread.run_sync(bridge.stdout.readline)  # connected
        except BaseException:
            bridge.kill()
            raise
    code = await anyio.to_thread.run_sync(lambda: bridge.wait(timeout=10))  # raises if it outlives the server
    assert code == 0


def test_the_bridge_exits_when_its_agent_is_killed() -> None:
    async def main() -> None:
        server = ToolServer([add])
        async with server.serving():
            command, args, env = server.bridge_command()
            agent = await anyio.open_process([sys.executable, "-c", AGENT, command, *args], env={**os.environ, **env},
                                             stdin=subprocess.DEVNULL, stderr=None)
            try:
                assert agent.stdout is not None
                with anyio.fail_after(20):
                    line = b""
                    while not line.endswith(b"\n"):
                        line += await agent.stdout.receive(64)
                bridge = os.pidfd_open(int(line))  # not our child: its pidfd says when it is gone
                try:
                    agent.kill()  # SIGKILL: the agent cannot clean up
                    with anyio.fail_after(10):
                        await agent.wait()
                    gone, _, _ = await anyio.to_thread.run_sync(select.select, [bridge], [], [], 10.0)
                    assert gone, "the bridge outlived its agent by 10 s"
                finally:
                    os.close(bridge)
            finally:
                if agent.returncode is None:
                    agent.kill()
                await agent.aclose()

    anyio.run(main)


AGENT = (
    "import subprocess, sys, time\n"
    "b = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)\n"
    "b.stdin.write(b'{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\\n'); b.stdin.flush()\n"
    "b.stdout.readline()\n"
    "print(b.pid, flush=True)\n"
    "time.sleep(600)\n"
)
"""An "agent": spawns the bridge with pipes it alone holds, pings through it, prints its pid, then waits."""


def test_the_bridge_run_by_hand_says_it_is_not_a_command() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_TOOLS_")}
    done = subprocess.run([sys.executable, "-m", "harness_core.tools.bridge"], env=env, capture_output=True,
                          timeout=30, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert b"HARNESS_TOOLS_SOCKET and HARNESS_TOOLS_SECRET must be set" in done.stderr
