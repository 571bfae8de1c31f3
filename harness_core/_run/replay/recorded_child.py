"""The recorded child of a replay: a `ChildProcess` that plays a `ChildScript` instead of running a program.

Layer: core runtime (used by `replay.run`). Knows the `ChildProcess` interface and the script `wirelog` reads; knows
nothing of runs, providers or the wire file. An answer never overtakes its question; nothing sleeps the recorded
gaps (docs/run-store.md, replay).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

import anyio

from harness_core._run.wirelog import ChildScript, ScriptItem, method_and_id
from harness_core.errors import MessageTooLargeError, ProcessExitedError
from harness_core.transport import ChildProcess
from harness_core.transport.process import _describe_status

__all__ = ["ReplayProcess"]

_EOF_SETTLE = 1.0  # as the real child: the end of stdout waits this long for the exit


class ReplayProcess(ChildProcess):
    """A `ChildProcess` that plays a recorded child (`ChildScript`) instead of running one."""

    def __init__(self, script: ChildScript, argv: Sequence[str], warnings: list[str], played: Callable[[], None],
                 *, stdin: bool = True, stderr_tail_bytes: int = 64 * 1024, **_options: Any) -> None:
        super().__init__(argv, env={}, stdin=stdin, stderr_tail_bytes=stderr_tail_bytes, supervise=False)
        self._script = script
        self._warnings = warnings
        self._played = played
        self._sent = 0
        self._input_closed = False
        self._changed = anyio.Event()
        self._code: int | None = None
        self._next = 0
        self._exit = next((item for item in script.items if item.kind == "exit"), None)

    async def __aenter__(self) -> ReplayProcess:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    @property
    def pid(self) -> int:
        return 0

    @property
    def returncode(self) -> int | None:
        if self._code is None and self._exit is not None and self._released(self._exit):
            self._code = self._exit.code
        return self._code

    def _released(self, item: ScriptItem) -> bool:
        return item.after_outs <= self._sent and (self._input_closed or not item.after_close)

    async def _until_released(self, item: ScriptItem) -> None:
        while not self._released(item):
            changed = self._changed
            await changed.wait()

    def _bump(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def send_line(self, data: bytes | str) -> None:
        raw = data.encode() if isinstance(data, str) else data
        if b"\n" in raw:
            raise ValueError("send_line data must not contain a newline")
        await self.send_input(raw)

    async def send_input(self, data: bytes | str) -> None:
        raw = data.encode() if isinstance(data, str) else data
        if not self._want_stdin:
            raise RuntimeError("this ChildProcess was started with stdin=False")
        outs = self._script.outs
        if self._input_closed or (self._sent >= len(outs) and self.returncode is not None):
            raise self.exit_error("the child closed its input")
        if self._sent < len(outs):
            sent, recorded = method_and_id(raw.decode("utf-8", "replace")), outs[self._sent]
            if sent != recorded:
                self._warnings.append(f"line {self._sent + 1} sent to the child differs from the recording: "
                                      f"method/id {sent} instead of {recorded}")
        self._sent += 1
        self._bump()

    async def close_stdin(self) -> None:
        self._input_closed = True
        self._bump()

    def lines(self) -> _ReplayLines:  # type: ignore[override]  # the same async iterator of lines
        return _ReplayLines(self)

    async def _next_line(self) -> bytes | None:
        """The next recorded stdout line once it is due, or None at the end of stdout."""
        items = self._script.items
        while self._next < len(items):
            item = items[self._next]
            if item.kind == "exit":
                self._next += 1
                continue
            await self._until_released(item)
            self._next += 1
            if item.kind == "in":
                return item.line
            self._played()
            with anyio.move_on_after(_EOF_SETTLE):
                await self.wait()
            return None
        self._played()
        await anyio.sleep_forever()  # the recorded stdout never ended: it was stopped
        return None  # pragma: no cover

    async def remember_descendants(self) -> None:
        return

    def stderr_tail(self) -> str:
        return self._script.stderr.encode()[-self._stderr_tail_bytes:].decode("utf-8", "replace")

    async def wait(self) -> int:
        if self._exit is None:
            await anyio.sleep_forever()  # the recording ends before the child did
        assert self._exit is not None
        await self._until_released(self._exit)
        self._code = self._exit.code
        return self._code

    def exit_error(self, what: str) -> ProcessExitedError:
        code = self.returncode
        status = "still running" if code is None else _describe_status(code)
        return ProcessExitedError(f"{self.argv[0]}: {what} ({status})", exit_code=code,
                                  stderr_tail=self.stderr_tail())

    async def aclose(self) -> None:
        self._input_closed = True
        self._bump()
        if self._code is None and self._exit is not None:
            self._code = self._exit.code  # stopped at the end, as the recorded child was


class _ReplayLines:
    def __init__(self, process: ReplayProcess) -> None:
        self._process = process

    def __aiter__(self) -> _ReplayLines:
        return self

    async def __anext__(self) -> bytes | MessageTooLargeError:
        line = await self._process._next_line()
        if line is None:
            raise StopAsyncIteration
        return line
