"""A child process in its own session, with line-framed stdout, a bounded stderr tail and bounded shutdown.

Layer: transport. Knows nothing of JSON-RPC or of any CLI. Works under asyncio and trio (anyio). Runs its program
under the process supervisor by default (Linux). Shutdown order: docs/providers.md (child processes); the
supervisor and the recording hooks: docs/process-ownership.md.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import secrets
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType

import anyio
from anyio.abc import ByteReceiveStream, Process, TaskGroup

from harness_core._logging import get_logger
from harness_core.errors import ProcessExitedError, SpawnFailedError
from harness_core.transport.framing import LineReader
from harness_core.transport.proctree import MARK_PREFIX, ProcEntry, descendants, kill_entries, marked
from harness_core.transport.supervisor import Supervision, available

__all__ = ["ChildProcess"]

log = get_logger(__name__)

_SEND_ERRORS = (anyio.BrokenResourceError, anyio.ClosedResourceError, BrokenPipeError, ConnectionResetError)
_EOF_SETTLE = 1.0  # how long the end of `lines()` waits for the child to exit after stdout EOF
_STDERR_SETTLE = 0.5  # how long to let stderr reach EOF after the child exits, so error tails are complete


_STARTED_MARKS: set[str] | None = None
"""The run marks of the children this Python process started, once `track_started_marks()` switched it on
(test code only: a long-lived host must not keep a mark per child forever)."""


class ChildProcess:
    """An agent CLI (or any program) run as a child; use as an async context manager."""

    @staticmethod
    def track_started_marks() -> None:
        """From now on, remember the run mark of every child this process starts (idempotent). For tests
        that check what their own runs left running: `proctree.marked_with(ChildProcess.started_marks())`
        sees exactly that, whatever else runs on the machine. Off by default: the set only grows."""
        global _STARTED_MARKS
        if _STARTED_MARKS is None:
            _STARTED_MARKS = set()

    @staticmethod
    def started_marks() -> frozenset[str]:
        """The marks of the children started since `track_started_marks()` (empty if it was never called)."""
        return frozenset(_STARTED_MARKS or ())

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        max_line_bytes: int = 64 * 1024 * 1024,
        stderr_tail_bytes: int = 64 * 1024,
        stdin: bool = True,
        term_timeout: float = 2.0,
        kill_timeout: float = 2.0,
        stdin_close_timeout: float = 2.0,
        on_line: Callable[[str, bytes], None] | None = None,
        on_record: Callable[[str, bytes], None] | None = None,
        supervise: bool = True,
    ) -> None:
        if not argv:
            raise ValueError("argv must name a program")
        self.argv = [str(a) for a in argv]
        self._mark = secrets.token_hex(8)
        self._remembered: set[ProcEntry] = set()
        self._env = {**(os.environ if env is None else env), f"{MARK_PREFIX}{self._mark}": "1"}
        self._cwd = cwd
        self._max_line_bytes = max_line_bytes
        self._stderr_tail_bytes = stderr_tail_bytes
        self._want_stdin = stdin
        self._term_timeout = term_timeout
        self._kill_timeout = kill_timeout
        self._stdin_close_timeout = stdin_close_timeout
        self._on_line = on_line
        self._on_record = on_record
        self._supervise = supervise and available()
        self._supervision: Supervision | None = None
        self._proc: Process | None = None
        self._tg: TaskGroup | None = None
        self._stderr = bytearray()
        self._stderr_done = anyio.Event()
        self._send_lock = anyio.Lock()
        self._reader: LineReader | None = None
        self._closed = False
        self._closing = False
        self._exit_recorded = False  # the wire log's `exit` and `close` records are written once
        self._stdin_close_recorded = False

    # -- lifecycle -----------------------------------------------------------------------------------------

    async def __aenter__(self) -> ChildProcess:
        await self._spawn()
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._tg = tg
        tg.start_soon(self._drain_stderr)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            await self.aclose()
        finally:
            # Exited here, outside aclose's shielded scope, so cancel scopes stay properly nested. The
            # stderr drain has ended: aclose closed the stream. The body's own exception is not passed in, so
            # it propagates as is instead of wrapped in an exception group.
            tg, self._tg = self._tg, None
            if tg is not None:
                await tg.__aexit__(None, None, None)

    async def _spawn(self) -> None:
        _refuse_during_replay(self.argv)
        sup = self._supervision = Supervision() if self._supervise else None
        if _STARTED_MARKS is not None:
            _STARTED_MARKS.add(self._mark)  # only children really started (see `track_started_marks`)
        try:
            proc = await anyio.open_process(
                self.argv if sup is None else sup.command(self.argv),
                stdin=subprocess.PIPE if self._want_stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self._cwd,
                env=self._env,
                start_new_session=True,
                pass_fds=() if sup is None else sup.pass_fds,
            )
            if sup is not None:
                await sup.started(proc)  # on failure it has killed and reaped the supervisor
        except BaseException as exc:
            if sup is not None:
                sup.close()
            if isinstance(exc, OSError):
                raise _spawn_error(exc, self.argv, self._cwd) from exc
            raise
        self._proc = proc
        log.debug("child_spawned", pid=proc.pid, program=self.argv[0],
                  agent_pid=None if sup is None else sup.agent_pid)

    @property
    def pid(self) -> int:
        return self._require().pid

    @property
    def returncode(self) -> int | None:
        return self._require().returncode

    def _require(self) -> Process:
        if self._proc is None:
            raise RuntimeError("ChildProcess is not started; use `async with ChildProcess(...)`")
        return self._proc

    # -- I/O -----------------------------------------------------------------------------------------------

    async def send_line(self, data: bytes | str) -> None:
        """Write `data` and a newline to the child's stdin.

        Raises:
            ValueError: `data` contains a newline.
            ProcessExitedError: the child's stdin is closed (it exited); carries exit code and stderr tail.
        """
        raw = data.encode() if isinstance(data, str) else data
        if b"\n" in raw:
            raise ValueError("send_line data must not contain a newline")
        await self._send(raw + b"\n", raw)

    async def send_input(self, data: bytes | str) -> None:
        """Write `data` to the child's stdin as it is, no newline added: input a CLI reads whole until its
        stdin closes (a prompt given as `-`, kept out of the command line every local user can read). A wire
        log records it as one line sent.

        Raises:
            ProcessExitedError: the child's stdin is closed (it exited); carries exit code and stderr tail.
        """
        raw = data.encode() if isinstance(data, str) else data
        await self._send(raw, raw)

    async def _send(self, raw: bytes, recorded: bytes) -> None:
        proc = self._require()
        if proc.stdin is None:
            raise RuntimeError("this ChildProcess was started with stdin=False")
        try:
            async with self._send_lock:
                await proc.stdin.send(raw)
        except _SEND_ERRORS:
            # The child is likely exiting: give it a moment so the error has its exit code and stderr.
            with anyio.move_on_after(1.0):
                await self.wait()
            raise self.exit_error("the child closed its input") from None
        if self._on_line is not None:
            self._on_line("out", recorded)

    async def close_stdin(self) -> None:
        proc = self._require()
        if proc.stdin is not None:
            if self._on_record is not None and not self._stdin_close_recorded:
                self._stdin_close_recorded = True
                self._on_record("close", b"")
            with contextlib.suppress(*_SEND_ERRORS, OSError):
                await proc.stdin.aclose()

    def lines(self) -> LineReader:
        """The child's stdout as lines (newline stripped), or `MessageTooLargeError` instances for lines over
        `max_line_bytes`. One reader per process: calling again returns the same iterator. At EOF it waits
        briefly for the child to exit before ending, so `returncode` and `stderr_tail()` are final."""
        if self._reader is None:
            stdout = self._require().stdout
            assert stdout is not None
            self._reader = LineReader(
                stdout,
                max_line_bytes=self._max_line_bytes,
                on_line=self._on_line,
                on_eof=self._settle_after_eof,
            )
        return self._reader

    async def _settle_after_eof(self) -> None:
        # Stdout EOF almost always means the child is exiting: give it a moment, so that whoever reacts to the
        # EOF (e.g. failing pending requests with `exit_error`) sees the exit code and the whole stderr.
        if self._on_record is not None:
            self._on_record("eof", b"")
        with anyio.move_on_after(_EOF_SETTLE):
            await self.wait()

    async def remember_descendants(self) -> None:
        """Snapshot the child's process tree now and kill whatever of it is still alive at shutdown. For the
        helpers a CLI starts with an environment of its own (no run mark) that would otherwise be lost if the
        CLI dies on its own: once it is gone they are reparented and no longer its descendants. Call it when
        the child starts a tool; the start time kept with each pid guards against pid reuse."""
        proc = self._require()
        if proc.returncode is None:
            self._remembered.update(await anyio.to_thread.run_sync(descendants, proc.pid))

    def stderr_tail(self) -> str:
        """The last `stderr_tail_bytes` of the child's stderr."""
        return bytes(self._stderr[-self._stderr_tail_bytes :]).decode("utf-8", "replace")

    async def _drain_stderr(self) -> None:
        stream: ByteReceiveStream | None = self._require().stderr
        try:
            if stream is None:
                return
            limit = self._stderr_tail_bytes
            buf = self._stderr
            on_record = self._on_record
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                async for chunk in stream:
                    buf += chunk
                    if len(buf) > 2 * limit:
                        del buf[:-limit]
                    if on_record is not None:
                        on_record("err", chunk)
        finally:
            self._stderr_done.set()
            if self._on_record is not None:
                self._on_record("err_eof", b"")

    async def wait(self) -> int:
        """Wait for the child to exit (and its stderr to settle, briefly) and return its exit code."""
        code = await self._require().wait()
        with anyio.move_on_after(_STDERR_SETTLE):
            await self._stderr_done.wait()
        self._record_exit(code)
        return code

    def _record_exit(self, code: int | None) -> None:
        """With a wire log: the child's exit status, once (after its stderr, so a replay has it all)."""
        if self._on_record is not None and code is not None and not self._exit_recorded:
            self._exit_recorded = True
            self._on_record("exit", str(code).encode())

    def exit_error(self, what: str) -> ProcessExitedError:
        """A `ProcessExitedError` saying `what`, with the exit code (if known) and the stderr tail."""
        code = self._proc.returncode if self._proc is not None else None
        status = "still running" if code is None else _describe_status(code)
        return ProcessExitedError(
            f"{self.argv[0]}: {what} ({status})", exit_code=code, stderr_tail=self.stderr_tail()
        )

    # -- shutdown ------------------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Stop the child and everything it started, in bounded steps; idempotent, shielded from
        cancellation, always reaps."""
        if self._closed or self._closing or self._proc is None:
            return
        self._closing = True
        proc = self._proc
        with anyio.CancelScope(shield=True):
            try:
                tree = descendants(proc.pid) if proc.returncode is None else []
                await self.close_stdin()
                if not await self._wait_for(self._stdin_close_timeout):
                    self._signal_group(signal.SIGTERM)
                    if not await self._wait_for(self._term_timeout):
                        self._signal_group(signal.SIGKILL)
                        if not await self._wait_for(self._kill_timeout):
                            log.warning("child_unkillable", pid=proc.pid)
                            await proc.wait()
                # Group members and escaped descendants outlive a leader that exited on its own.
                self._signal_group(signal.SIGKILL)
                killed = kill_entries(sorted({*tree, *self._remembered}))
                killed += kill_entries(marked(self._mark))  # escaped before the snapshot (reparented to init)
                if killed:
                    log.debug("killed_descendants", pid=proc.pid, pids=killed)
                with anyio.move_on_after(_STDERR_SETTLE):
                    await self._stderr_done.wait()
            finally:
                try:
                    await proc.aclose()  # closes stdin/stdout/stderr (ending the stderr drain) and reaps
                    self._record_exit(proc.returncode)
                finally:
                    if self._supervision is not None:
                        self._supervision.close()  # only now: before, it would tell the supervisor to kill
                    self._closed = True
        log.debug("child_closed", pid=proc.pid, returncode=proc.returncode)

    async def _wait_for(self, seconds: float) -> bool:
        proc = self._require()
        with anyio.move_on_after(seconds):
            await proc.wait()
        return proc.returncode is not None

    def _signal_group(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._require().pid, sig)


def _describe_status(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _spawn_error(exc: OSError, argv: list[str], cwd: str | Path | None) -> SpawnFailedError:
    program = argv[0]
    if isinstance(exc, FileNotFoundError):
        if cwd is not None and not os.path.isdir(cwd):
            what = f"working directory {cwd} does not exist; create it or pass an existing cwd"
        else:
            what = f"{program} not found; check the path or install the program"
    elif isinstance(exc, PermissionError):
        what = (
            f"permission denied; make it executable (chmod +x {program}) or check the working directory "
            "is accessible"
        )
    else:
        what = f"{exc.strerror or exc}; check it is an executable for this machine"
    return SpawnFailedError(f"cannot start {program}: {what}", argv=argv)


REPLAYING: contextvars.ContextVar[str | None] = contextvars.ContextVar("harness_replaying", default=None)
"""Set (to the wire log's path) while `harness_core.open_replay` drives a run: no real child may start then."""


def _refuse_during_replay(argv: list[str]) -> None:
    replaying = REPLAYING.get()
    if replaying is not None:
        raise SpawnFailedError(f"not starting {argv[0]}: this run is a replay of {replaying}, which plays only the "
                               "children the provider started with `RunContext.spawn`; start the agent's process "
                               "with `ctx.spawn` so that it is recorded and replayed", argv=argv)
