"""Harness's side of the process supervisor: whether it can run here, its command line, its control socket.

Layer: transport. Knows nothing of JSON-RPC or of any CLI. `ChildProcess(supervise=True)` is its user; the
supervisor process itself is `_supervise.py`. Why a supervisor, how to drive one and the lifeline's policy:
docs/process-ownership.md (the supervisor).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import signal
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import anyio
from anyio.abc import Process

from harness_core._logging import get_logger
from harness_core.errors import SpawnFailedError
from harness_core.transport import _supervise

__all__ = ["DEFAULT_GRACE", "ParentExitPolicy", "Supervision", "available", "command"]

log = get_logger(__name__)

ParentExitPolicy = Literal["kill", "keep"]
DEFAULT_GRACE = _supervise.DEFAULT_GRACE
"""Seconds between SIGTERM and SIGKILL when the supervisor kills the run's tree."""

_DIR = str(Path(_supervise.__file__).parent)
# Imported, not run as a script, so its compiled bytecode is reused (compiling it would cost ~5 ms a spawn);
# `-I -S`: no site-packages, no PYTHON* variables, no current directory on the path.
_BOOT = "import sys; sys.path[:0] = [sys.argv.pop(1)]; from _supervise import main; main(sys.argv[1:])"
_START_TIMEOUT = 20.0  # for the supervisor to start the agent and say so: normally ~10 ms
_EXIT_WAIT = 2.0  # for a supervisor that failed to start the agent to exit


@functools.cache
def available() -> bool:
    """Whether agents can run under the supervisor here: Linux, with a Python interpreter to run it."""
    return (
        sys.platform.startswith("linux")
        and bool(sys.executable)
        and not getattr(sys, "frozen", False)
        and hasattr(os, "fork")
        and os.path.isdir("/proc")
    )


def command(
    argv: Sequence[str],
    *,
    control_fd: int | None,
    parent_pid: int | None = None,
    on_parent_exit: ParentExitPolicy = "kill",
    grace: float = DEFAULT_GRACE,
) -> list[str]:
    """The command line that runs `argv` under the supervisor, which must inherit `control_fd` (a connected
    socket; None for none) and be a child of `parent_pid` (default: this process)."""
    if on_parent_exit not in _supervise.POLICIES:
        raise ValueError(f"on_parent_exit must be one of {_supervise.POLICIES}, not {on_parent_exit!r}")
    if not argv:
        raise ValueError("argv must name a program")
    return [
        sys.executable, "-I", "-S", "-c", _BOOT, _DIR,
        "--control-fd", str(-1 if control_fd is None else control_fd),
        "--parent", str(os.getpid() if parent_pid is None else parent_pid),
        "--on-parent-exit", on_parent_exit,
        "--grace", repr(float(grace)),
        "--", *argv,
    ]


class Supervision:
    """One supervised spawn, seen from Harness: the control socket and the start-up handshake."""

    def __init__(self, *, on_parent_exit: ParentExitPolicy = "kill", grace: float = DEFAULT_GRACE) -> None:
        self._on_parent_exit: ParentExitPolicy = on_parent_exit
        self._grace = grace
        self._ours, self._theirs = socket.socketpair()
        self._argv: list[str] = []
        self._program = "the agent"
        self.agent_pid: int | None = None
        self.subreaper = False

    @property
    def pass_fds(self) -> tuple[int, ...]:
        """The file descriptors the supervisor must inherit (pass them to `open_process`)."""
        return (self._theirs.fileno(),)

    def command(self, argv: Sequence[str]) -> list[str]:
        """The command line to start (with `pass_fds`) instead of `argv`."""
        self._argv = [str(a) for a in argv]
        self._program = self._argv[0] if self._argv else self._program
        return command(argv, control_fd=self._theirs.fileno(), on_parent_exit=self._on_parent_exit,
                       grace=self._grace)

    async def started(self, proc: Process) -> int:
        """Wait for the supervisor started as `proc` to start the agent; return the agent's pid. On any failure
        (and on cancellation) the supervisor's process group is killed and reaped before this raises.

        Raises:
            OSError: the agent could not be executed (not found, not executable...): the supervisor's errno.
            SpawnFailedError: the supervisor itself failed, or did not answer within 20 s.
        """
        self._theirs.close()  # the supervisor holds its own copy; EOF must mean "the supervisor is gone"
        try:
            return await self._handshake(proc)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await _kill(proc)
            self.close()
            raise

    async def _handshake(self, proc: Process) -> int:
        try:
            with anyio.fail_after(_START_TIMEOUT):
                reply = await self._read_line()
        except TimeoutError:
            raise SpawnFailedError(
                f"cannot start {self._program}: the process supervisor did not start it within "
                f"{_START_TIMEOUT:g} s; the machine may be overloaded: try again", argv=self._argv,
            ) from None
        word, *rest = reply.split() or [""]
        if word == "ok" and rest and rest[0].isdigit():
            self.agent_pid = int(rest[0])
            self.subreaper = rest[1:2] == ["1"]
            if not self.subreaper:
                log.warning("supervisor_not_subreaper", pid=proc.pid, agent_pid=self.agent_pid,
                            hint="prctl(PR_SET_CHILD_SUBREAPER) failed: descendants may escape to init")
            return self.agent_pid
        if word == "err" and rest and rest[0].isdigit():
            code = int(rest[0]) or errno.EIO
            raise OSError(code, os.strerror(code))
        raise await self._broken(proc, reply)

    async def _read_line(self) -> str:
        sock = self._ours
        sock.setblocking(False)
        data = b""
        while b"\n" not in data:
            await anyio.wait_readable(sock)
            try:
                chunk = sock.recv(256)
            except BlockingIOError:
                continue
            if not chunk:
                break
            data += chunk
        return data.decode("ascii", "replace").strip()

    async def _broken(self, proc: Process, reply: str) -> SpawnFailedError:
        with anyio.move_on_after(_EXIT_WAIT):
            await proc.wait()
        stderr = b""
        if proc.stderr is not None:
            with anyio.move_on_after(0.5), contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError):
                while len(stderr) < 8192:
                    stderr += await proc.stderr.receive()
        status = "still running" if proc.returncode is None else f"exit status {proc.returncode}"
        detail = stderr.decode("utf-8", "replace").strip() or (f"it said {reply!r}" if reply else "no output")
        return SpawnFailedError(
            f"cannot start {self._program}: its process supervisor ({sys.executable} -I -S …/_supervise.py) "
            f"failed first ({status}): {detail}; check that this Python runs, or start the agent without "
            "`supervise`", argv=self._argv,
        )

    def close(self) -> None:
        """Close Harness's end of the control socket. While the supervisor runs, this tells it the owner is gone
        (policy `kill`: it kills the run's tree); call it once the supervisor is reaped."""
        self._theirs.close()
        self._ours.close()


async def _kill(proc: Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with anyio.move_on_after(_EXIT_WAIT):
        await proc.aclose()
