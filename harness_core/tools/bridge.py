"""The stdio bridge an agent spawns to reach the Python tools Harness serves: `python -m harness_core.tools.bridge`.

It relays its stdin and stdout to the tool server's unix socket (`HARNESS_TOOLS_SOCKET`), after proving the
per-run secret (`HARNESS_TOOLS_SECRET`). It exits when its stdin closes, when the Harness side goes away, or when
its parent (the agent) dies: never an orphan. It knows only bytes: no MCP, no Harness import beyond this module.
"""

from __future__ import annotations

import os
import select
import socket
import sys

__all__ = ["main"]

SOCKET_ENV = "HARNESS_TOOLS_SOCKET"
SECRET_ENV = "HARNESS_TOOLS_SECRET"
_CONNECT_DEADLINE = 10.0
_PARENT_CHECK = 0.5
"""Seconds between checks that the parent is still the agent that spawned the bridge."""
_CHUNK = 1 << 16


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
    conn.setblocking(True)
    conn.settimeout(None)
    stdin, stdout, sock = sys.stdin.buffer.fileno(), sys.stdout.buffer.fileno(), conn.fileno()
    try:
        while True:
            ready, _, _ = select.select([stdin, sock], [], [], _PARENT_CHECK)
            if os.getppid() != parent:  # the agent died and we were re-parented
                return 0
            if stdin in ready:
                data = os.read(stdin, _CHUNK)
                if not data:
                    return 0
                conn.sendall(data)
            if sock in ready:
                data = conn.recv(_CHUNK)
                if not data:
                    return 0
                _write_all(stdout, data)
    except (OSError, KeyboardInterrupt):
        return 0
    finally:
        conn.close()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


if __name__ == "__main__":
    sys.exit(main())
