"""`lines.message_batches`: a chunk's lines parsed into one list, odd lines reported in their place."""

from __future__ import annotations

from typing import Any

import pytest
from harness_core import HarnessEvent, MessageTooLargeError

from harness_claude.lines import message_batches

pytestmark = pytest.mark.anyio

Line = bytes | MessageTooLargeError


class Chunks:
    """A `LineReader` stand-in: `__anext__` gives a chunk's first line, `take_ready` the rest of it."""

    def __init__(self, *chunks: list[Line]) -> None:
        self.chunks = list(chunks)
        self.rest: list[Line] = []

    def __aiter__(self) -> Chunks:
        return self

    async def __anext__(self) -> Line:
        if not self.chunks:
            raise StopAsyncIteration
        first, *self.rest = self.chunks.pop(0)
        return first

    def take_ready(self) -> list[Line]:
        rest, self.rest = self.rest, []
        return rest


async def play(lines: Any) -> list[Any]:
    """What the reader sees, in order: each batch (as a list of its types) and each reported event."""
    seen: list[Any] = []

    async def emit(event: HarnessEvent) -> None:
        seen.append(event.type if event.type != "provider_raw" else ("raw", event.payload))

    async for batch in message_batches(lines, emit):
        assert batch
        seen.append([m["type"] for m in batch])
    return seen


async def test_a_chunk_is_one_batch() -> None:
    chunk: list[Line] = [b'{"type":"a"}', b'{"type":"b"}', b'{"type":"c"}']
    assert await play(Chunks(chunk, [b'{"type":"d"}'])) == [["a", "b", "c"], ["d"]]


async def test_odd_lines_are_reported_in_their_place() -> None:
    too_large = MessageTooLargeError("too large", size=10, limit=5)
    chunk: list[Line] = [b'{"type":"a"}', b"not json", b'  {"type":"padded"} ', b"", b"[1]", too_large,
                         b'{"type":"b"}', b"\xff"]
    assert await play(Chunks(chunk)) == [["a"], ("raw", "not json"), ["padded"], ("raw", "[1]"), "error", ["b"],
                                         ("raw", "\ufffd")]


async def test_lines_without_take_ready_are_batches_of_one() -> None:
    async def lines() -> Any:
        for line in (b'{"type":"a"}', b'{"type":"b"}'):
            yield line

    assert await play(lines()) == [["a"], ["b"]]
