"""Newline framing of a byte stream: split into lines, cap line length without accumulating oversized lines.

Layer: transport. Knows nothing of JSON-RPC, of processes, or of any CLI: it reads from any anyio
`ByteReceiveStream`. Linear in bytes read, and reads only when the consumer asks for the next line, so nothing
unbounded is buffered (docs/process-ownership.md, the transport).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import cast

import anyio
from anyio.abc import ByteReceiveStream

from harness_core.errors import MessageTooLargeError

__all__ = ["CHUNK_SIZE", "LineReader"]

CHUNK_SIZE = 64 * 1024

_EOF_ERRORS = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError)


class LineReader:
    """Async iterator of the lines of `stream` (newline stripped); an oversized line is skipped and yielded
    as a `MessageTooLargeError` instance (not raised), so the reader survives it. Ends at EOF; a final line
    without a newline is still yielded. `on_eof` is awaited once before iteration ends."""

    __slots__ = (
        "_done",
        "_max",
        "_on_eof",
        "_on_line",
        "_partial",
        "_partial_len",
        "_pos",
        "_ready",
        "_skipped",
        "_stream",
    )

    def __init__(
        self,
        stream: ByteReceiveStream,
        *,
        max_line_bytes: int,
        on_line: Callable[[str, bytes], None] | None = None,
        on_eof: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._stream = stream
        self._on_eof = on_eof
        self._max = max_line_bytes
        self._on_line = on_line
        self._ready: list[bytes | MessageTooLargeError] = []
        self._pos = 0
        self._partial: list[bytes] = []  # pieces of an unfinished line
        self._partial_len = 0
        self._skipped = -1  # >= 0 while discarding an oversized line: bytes discarded so far
        self._done = False

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> bytes | MessageTooLargeError:
        pos = self._pos
        ready = self._ready
        if pos < len(ready):
            self._pos = pos + 1
            return ready[pos]
        while not self._done:
            await self._fill()
            if self._ready:
                self._pos = 1
                return self._ready[0]
        if self._on_eof is not None:
            on_eof, self._on_eof = self._on_eof, None
            await on_eof()
        raise StopAsyncIteration

    def take_ready(self) -> list[bytes | MessageTooLargeError]:
        """The lines already read and not yet returned (possibly none), without awaiting or reading more: lets a
        consumer go through the rest of a chunk in a plain loop instead of one `__anext__` await per line."""
        pos, ready = self._pos, self._ready
        if pos >= len(ready):
            return []
        self._pos = len(ready)
        return ready[pos:]

    def _too_large(self, size: int) -> MessageTooLargeError:
        return MessageTooLargeError(
            f"skipped a line of {size} bytes from the child, over the {self._max}-byte limit; raise the "
            "transport's max_line_bytes if such lines are expected",
            size=size,
            limit=self._max,
        )

    def _line(self, line: bytes) -> bytes | MessageTooLargeError:
        if len(line) > self._max:
            return self._too_large(len(line))
        if self._on_line is not None:
            self._on_line("in", line)
        return line

    def _finish_partial(self, tail: bytes) -> bytes | MessageTooLargeError:
        """Complete the unfinished line with `tail` (the bytes before a newline)."""
        if self._skipped >= 0:
            size = self._skipped + len(tail)
            self._skipped = -1
            return self._too_large(size)
        if self._partial:
            self._partial.append(tail)
            tail = b"".join(self._partial)
            self._partial = []
            self._partial_len = 0
        return self._line(tail)

    def _keep_partial(self, piece: bytes) -> None:
        if not piece:
            return
        if self._skipped >= 0:
            self._skipped += len(piece)
            return
        self._partial_len += len(piece)
        if self._partial_len > self._max:
            # Over the cap: stop keeping it, only count what follows until its newline.
            self._skipped = self._partial_len
            self._partial = []
            self._partial_len = 0
        else:
            self._partial.append(piece)

    async def _fill(self) -> None:
        """Read one chunk and turn it into ready lines (possibly none)."""
        self._ready = []
        self._pos = 0
        try:
            chunk = await self._stream.receive(CHUNK_SIZE)
        except _EOF_ERRORS:
            self._done = True
            if self._skipped >= 0 or self._partial:
                self._ready.append(self._finish_partial(b""))
            return
        pieces = chunk.split(b"\n")
        last = pieces.pop()
        if pieces:
            ready = cast("list[bytes | MessageTooLargeError]", pieces)
            first = pieces[0]
            if self._skipped >= 0 or self._partial:
                ready[0] = self._finish_partial(first)
            elif len(first) > self._max or self._on_line is not None:
                ready[0] = self._line(first)
            if self._max < CHUNK_SIZE:
                for i in range(1, len(ready)):
                    ready[i] = self._line(pieces[i])
            elif self._on_line is not None:
                # The usual cap (above the chunk size): no line inside one chunk can be over it, so only the
                # callback is due per line, called directly rather than through `_line`.
                on_line = self._on_line
                for i in range(1, len(pieces)):
                    on_line("in", pieces[i])
            self._ready = ready
        self._keep_partial(last)
