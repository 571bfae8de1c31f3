"""The stdio bridge an agent spawns to reach the Python tools Harness serves: `python -m harness_core.tools.bridge`.

It relays its stdin and stdout to the tool server's unix socket (`HARNESS_TOOLS_SOCKET`), after proving the
per-run secret (`HARNESS_TOOLS_SECRET`). It exits when its stdin closes, when the Harness side goes away, or when
its parent (the agent) dies: never an orphan. It knows only bytes: no MCP, no Harness import beyond this module.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import sys
import time
from collections.abc import Callable

__all__ = ["main"]

SOCKET_ENV = "HARNESS_TOOLS_SOCKET"
SECRET_ENV = "HARNESS_TOOLS_SECRET"
_CONNECT_DEADLINE = 10.0
_PARENT_CHECK = 0.5
"""Seconds between checks that the parent is still the agent that spawned the bridge."""
_DRAIN_DEADLINE = 10.0
"""Seconds one side's last bytes get to be delivered once the other side has closed."""
_CHUNK = 1 << 16
_WRITE_MAX = 1 << 20


def main() -> int:
    """Relay until one side closes; the exit status says why (0: stdin or the server closed, 2: misused)."""
    path, secret = os.environ.get(SOCKET_ENV), os.environ.get(SECRET_ENV)
    if not path or not secret:
        sys.stderr.write(f"harness toolbridge: {SOCKET_ENV} and {SECRET_ENV} must be set; Harness sets them when "
                         "it gives an agent its Python tools (this is not a command to run by hand)\n")
        return 2
    parent = os.getppid()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(_CONNECT_DEADLINE)
    try:
        conn.connect(path)
        conn.sendall(secret.encode() + b"\n")
    except OSError as exc:
        sys.stderr.write(f"harness toolbridge: cannot reach the Harness tool server at {path}: {exc} (has the "
                         "run ended?)\n")
        return 1
    stdin, stdout = sys.stdin.buffer.fileno(), sys.stdout.buffer.fileno()
    was_blocking = {fd: os.get_blocking(fd) for fd in (stdin, stdout)}
    try:
        for fd in was_blocking:
            os.set_blocking(fd, False)
        conn.setblocking(False)
        return _relay(stdin, stdout, conn, parent)
    except (OSError, KeyboardInterrupt):
        return 0
    finally:
        for fd, blocking in was_blocking.items():  # a terminal or a pipe shared with others stays as it was
            with contextlib.suppress(OSError):
                os.set_blocking(fd, blocking)
        conn.close()


class _Pending:
    """The bytes on their way in one direction: added as read, taken from the front as written. Unbounded: a cap
    would make a side that writes before it reads wait on the other again (each side bounds its own messages)."""

    def __init__(self) -> None:
        self._data = bytearray()
        self._start = 0

    def __bool__(self) -> bool:
        return self._start < len(self._data)

    def add(self, data: bytes) -> None:
        self._data += data

    def front(self) -> bytes:
        return bytes(self._data[self._start:self._start + _WRITE_MAX])

    def taken(self, count: int) -> None:
        self._start += count
        if self._start == len(self._data):
            self._data.clear()
            self._start = 0
        elif self._start > _WRITE_MAX and self._start * 2 > len(self._data):
            del self._data[:self._start]
            self._start = 0


def _relay(stdin: int, stdout: int, conn: socket.socket, parent: int) -> int:
    """Both directions at once, every fd non-blocking, each direction with its own buffer: a side writing a large
    message while the other writes one too never waits on it. Returns 0 when a side has closed and the bytes it
    sent are delivered (at most `_DRAIN_DEADLINE` s), or the parent is gone."""
    sock = conn.fileno()
    upstream, downstream = _Pending(), _Pending()  # agent → server, server → agent
    agent_open = server_open = True
    drain_by: float | None = None
    while (agent_open or upstream) and (server_open or downstream):
        if drain_by is not None and time.monotonic() > drain_by:
            return 0
        readers = [fd for fd, is_open in ((stdin, agent_open), (sock, server_open)) if is_open]
        writers = [fd for fd, pending in ((sock, upstream), (stdout, downstream)) if pending]
        readable, writable, _ = select.select(readers, writers, [], _PARENT_CHECK)
        if os.getppid() != parent:  # the agent died and we were re-parented
            return 0
        if stdin in readable:
            data = _read(lambda: os.read(stdin, _CHUNK))
            agent_open = data != b""
            upstream.add(data or b"")
        if sock in readable:
            data = _read(lambda: conn.recv(_CHUNK))
            server_open = data != b""
            downstream.add(data or b"")
        if sock in writable:
            upstream.taken(_write(lambda: conn.send(upstream.front())))
        if stdout in writable:
            downstream.taken(_write(lambda: os.write(stdout, downstream.front())))
        if drain_by is None and not (agent_open and server_open):
            drain_by = time.monotonic() + _DRAIN_DEADLINE
    return 0


def _read(read: Callable[[], bytes]) -> bytes | None:
    """What `read()` gives (b"": closed), or None if nothing was there after all."""
    try:
        return read()
    except (BlockingIOError, InterruptedError):
        return None


def _write(write: Callable[[], int]) -> int:
    """How many bytes `write()` took (0 if it would have waited)."""
    try:
        return write()
    except (BlockingIOError, InterruptedError):
        return 0


if __name__ == "__main__":
    sys.exit(main())
