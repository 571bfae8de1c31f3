"""Serving the viewer: a socket on 127.0.0.1 (a free port unless one is asked for), uvicorn on it until Ctrl-C,
the URL with its token handed to the caller.

Knows uvicorn and sockets; configures no logging (uvicorn's loggers stay as the application left them).
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Callable
from pathlib import Path

import uvicorn
from harness_core import HarnessError, InvalidSpecError
from harness_core.store import resolve_runs_dir

from harness_view.app import create_app
from harness_view.settings import ViewerSettings

__all__ = ["bind", "serve", "url_of"]

_GRACE = 3
"""Seconds open connections get to close when the viewer stops (a live page's stream ends within a poll, an
action's wait at once, a request still unanswered after `stopping.WAIT` is cut with a 503: none reaches this)."""


_WILDCARDS = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on `host`:`port` (0: a free port).

    Raises:
        HarnessError: the port is taken, or the address is not this machine's.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise HarnessError(f"port {port} on {host} is in use; pick another with --port, or leave --port out "
                               "for a free one") from None
        raise HarnessError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; the viewer listens on "
                           "127.0.0.1 unless --host names an address of this machine") from None
    sock.listen(128)
    return sock


def url_of(settings: ViewerSettings, sock: socket.socket) -> str:
    """The URL to open: the viewer's address with its token (as Jupyter prints it); this machine's loopback for a
    viewer on every address (`0.0.0.0`, `::`: no browser opens those)."""
    port = sock.getsockname()[1]
    host = _WILDCARDS.get(settings.host, settings.host)
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}/?token={settings.token}"


def serve(settings: ViewerSettings, *, port: int = 0, cwd: Path | None = None,
          on_ready: Callable[[str], None] | None = None) -> None:
    """Serve the viewer until interrupted (Ctrl-C, SIGTERM), then return. `on_ready(url)` is called once it
    listens (requests that come meanwhile wait in the socket's backlog: open a browser there).

    Raises:
        HarnessError: the address cannot be listened on (the message says what to do).
        InvalidSpecError: a runs directory asked for (not the default, which the first run makes) is not there.
    """
    if not settings.runs_dir.exists() and settings.runs_dir != resolve_runs_dir():
        raise InvalidSpecError(f"no runs directory {settings.runs_dir} (--runs-dir): check the path (`ls` it), or "
                               f"leave --runs-dir out for the default one, {resolve_runs_dir()}; runs go to a "
                               "directory `harness run --runs-dir DIR` made")
    sock = bind(settings.host, port)
    url = url_of(settings, sock)

    def stopping() -> bool:  # uvicorn was told to stop (Ctrl-C, SIGTERM): the live streams end on their next look
        # `server` is assigned below, before any request can call this: it is read at call time, not here
        return server.should_exit

    config = uvicorn.Config(create_app(settings, cwd=cwd, stopping=stopping), log_config=None, access_log=False,
                            lifespan="off", timeout_graceful_shutdown=_GRACE, server_header=False)
    server = uvicorn.Server(config)
    try:
        if on_ready is not None:  # in the try: a Ctrl-C right after the URL is printed stops the viewer as cleanly
            on_ready(url)
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass  # uvicorn raises the Ctrl-C it caught again once it has stopped: stopping is what it asked for
    finally:
        sock.close()
