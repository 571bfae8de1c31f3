"""JSON lines from an agent's stdout: the fast decoder, the batched reader and the per-message pump.

Layer: provider support. Knows the transport's line values (`bytes`, or a `MessageTooLargeError` for a line
over the framing cap) and the two events a malformed line becomes; knows no agent and no wire protocol beyond
"one JSON object per line".
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import orjson

from harness_core.errors import MessageTooLargeError
from harness_core.events import ErrorEvent, HarnessEvent, ProviderRaw

__all__ = ["NON_JSON_METHOD", "Line", "MessageBatches", "json_batches", "json_messages", "loads_line", "scan_once"]

NON_JSON_METHOD = "non_json_stdout"
"""`ProviderRaw.method` of a stdout line that is not a JSON object (its text, truncated, is the payload)."""
_RAW_CHARS = 2000

Line = bytes | MessageTooLargeError
"""What a line channel yields: a line (newline stripped), or the error standing for one over the framing cap."""

scan_once: Callable[[str, int], tuple[Any, int]] = getattr(json.JSONDecoder(), "scan_once")  # noqa: B009
"""The JSON decoder's C scanner (not in the type stubs): `scan_once(text, 0)` returns (value, end index) or
raises StopIteration. Kept for `harness_core.provider.scan_once` (deprecated); lines are read with orjson."""
_orjson_loads: Callable[[bytes], Any] = orjson.loads


def loads_line(line: bytes) -> Any:
    """`json.loads` for one line, four times as fast: `orjson.loads`, falling back to `json.loads` for what
    orjson refuses and the standard library reads (NaN, Infinity, a lone surrogate's escape). One difference: an
    integer past 64 bits is read as a float, the number the JavaScript agent that wrote it holds (a line orjson
    refuses for another reason, NaN, keeps it exact; a JSON-RPC id that large is a float, and unknown).

    Raises:
        ValueError: not valid JSON (or not UTF-8).
    """
    try:
        return _orjson_loads(line)
    except ValueError:
        return _stdlib_loads(line)


def _stdlib_loads(line: bytes) -> Any:
    """`json.loads` of a line orjson refused; nesting past the interpreter's recursion limit is a ValueError too
    (orjson stops at 1024 levels, the standard library's recursion at about as many)."""
    try:
        return json.loads(line.decode())
    except RecursionError as exc:
        raise ValueError("JSON nested too deep") from exc


async def json_messages(
    lines: AsyncIterable[Line],
    emit: Callable[[HarnessEvent], Awaitable[None]],
) -> AsyncIterator[dict[str, Any]]:
    """The JSON objects among `lines` (e.g. `child.lines()`), in order. Blank lines are skipped; a line over
    the framing cap becomes an `error` event (`message_too_large`) and a line that is not a JSON object a
    `provider_raw` event (`method="non_json_stdout"`), both sent with `emit` (`ctx.emit`) — the stream goes on.
    """
    loads = loads_line
    async for line in lines:
        if line.__class__ is bytes or not isinstance(line, MessageTooLargeError):
            try:
                msg = loads(line)  # bytes: checked above
            except ValueError:
                msg = None
            if msg.__class__ is dict:
                yield msg
                continue
        await _odd_line(line, emit)


class MessageBatches:
    """The JSON objects among `lines`, in order, as non-empty lists (an async iterator): every line the line reader
    already holds (`LineReader.take_ready`) is parsed in one plain loop with `orjson.loads`, so a flood costs one
    await per chunk rather than per line. Any other line (over the framing cap, not JSON, not an
    object, blank) ends the list before it and is passed to `on_other`, awaited before the next list: the consumer
    sees everything in the stream's order. The one batched reader of the JSON-RPC peer and of line providers."""

    __slots__ = ("_batch", "_batches", "_chunk", "_start")

    def __init__(self, lines: AsyncIterable[Line], on_other: Callable[[Line], Awaitable[None]]) -> None:
        self._batches = self._read(lines, on_other)
        self._chunk: Sequence[Line] = ()
        self._batch: list[dict[str, Any]] = []
        self._start = 0  # the index in `_chunk` of `_batch[0]`: a list is always a run of consecutive lines

    def __aiter__(self) -> MessageBatches:
        return self

    def __anext__(self) -> Awaitable[list[dict[str, Any]]]:
        return self._batches.__anext__()

    async def aclose(self) -> None:
        """Stop reading (as an async generator's `aclose`)."""
        await self._batches.aclose()

    def line_of(self, msg: dict[str, Any]) -> bytes:
        """The line `msg`, an object of the latest list, was parsed from (to quote it in an error).

        Raises:
            ValueError: `msg` is not in the latest list.
        """
        for i, seen in enumerate(self._batch):
            line = self._chunk[self._start + i]
            if seen is msg and not isinstance(line, MessageTooLargeError):  # parsed: always a line
                return line
        raise ValueError("line_of: not an object of the latest list")

    async def _read(self, lines: AsyncIterable[Line], on_other: Callable[[Line], Awaitable[None]]
                    ) -> AsyncGenerator[list[dict[str, Any]], None]:
        take_ready: Callable[[], list[Line]] | None = getattr(lines, "take_ready", None)
        fast, loads = _orjson_loads, _stdlib_loads
        async for first in lines:
            chunk = (first, *take_ready()) if take_ready is not None else (first,)
            self._chunk = chunk
            batch: list[dict[str, Any]] = []
            start = 0
            for line in chunk:
                if line.__class__ is bytes:
                    try:
                        msg = fast(line)  # bytes: checked above
                        if msg.__class__ is dict:
                            batch.append(msg)
                            continue
                    except ValueError:
                        pass
                if not isinstance(line, MessageTooLargeError):  # the unusual line: NaN, not JSON, not an object
                    try:
                        msg = loads(line)
                    except ValueError:
                        msg = None
                    if msg.__class__ is dict:
                        batch.append(msg)
                        continue
                if batch:  # what came before the odd line is handled before it
                    self._batch, self._start = batch, start
                    yield batch
                start += len(batch) + 1
                batch = []
                await on_other(line)
            if batch:
                self._batch, self._start = batch, start
                yield batch


def json_batches(lines: AsyncIterable[Line], emit: Callable[[HarnessEvent], Awaitable[None]]) -> MessageBatches:
    """`json_messages` a chunk at a time: the JSON objects among `lines` as lists (`MessageBatches`), each odd line
    reported with `emit` as `json_messages` reports it (`error` / `provider_raw`), at the same place in the order."""

    async def other(line: Line) -> None:
        await _odd_line(line, emit)

    return MessageBatches(lines, other)


async def _odd_line(line: Line, emit: Callable[[HarnessEvent], Awaitable[None]]) -> None:
    """Report a line that is not a JSON object: over the cap an `error` event, else (unless blank) `provider_raw`."""
    if isinstance(line, MessageTooLargeError):
        await emit(ErrorEvent(error=line.to_info()))
        return
    text = bytes(line).decode("utf-8", "replace")
    if text.strip():
        await emit(ProviderRaw(method=NON_JSON_METHOD, payload=text[:_RAW_CHARS]))
