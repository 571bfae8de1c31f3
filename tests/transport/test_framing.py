"""LineReader framing over scripted chunk sequences: every split point, caps, EOF without newline."""

from __future__ import annotations

import anyio
import pytest
from anyio.abc import ByteReceiveStream

from harness_core.errors import MessageTooLargeError
from harness_core.transport import LineReader

pytestmark = pytest.mark.anyio


class Chunks(ByteReceiveStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = list(chunks)
        self.reads = 0

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._chunks:
            raise anyio.EndOfStream
        self.reads += 1
        chunk = self._chunks.pop(0)
        assert len(chunk) <= max_bytes
        return chunk

    async def aclose(self) -> None:
        self._chunks = []


async def collect(chunks: list[bytes], **kw: int) -> list[bytes | str]:
    reader = LineReader(Chunks(chunks), max_line_bytes=kw.get("max_line_bytes", 1 << 20))
    out: list[bytes | str] = []
    async for item in reader:
        out.append(item if isinstance(item, bytes) else f"too large: {item.details['size']}")
    return out


async def test_every_split_point() -> None:
    data = b'{"a":1}\n\n{"b":"x y"}\nlast\n'
    expected = [b'{"a":1}', b"", b'{"b":"x y"}', b"last"]
    for i in range(len(data) + 1):
        for j in range(i, len(data) + 1):
            chunks = [c for c in (data[:i], data[i:j], data[j:]) if c]
            assert await collect(chunks) == expected, (i, j)


async def test_final_line_without_newline_is_kept() -> None:
    assert await collect([b"a\nb", b"c"]) == [b"a", b"bc"]


async def test_oversized_lines_skipped_across_chunks() -> None:
    chunks = [
        b"ok1\n" + b"x" * 50,
        b"x" * 100,
        b"x" * 50 + b"\nok2\n",
        b"y" * 30 + b"\n",
        b"z" * 31 + b"\nend",
    ]
    assert await collect(chunks, max_line_bytes=30) == [
        b"ok1",
        "too large: 200",
        b"ok2",
        b"y" * 30,
        "too large: 31",
        b"end",
    ]


async def test_reads_only_on_demand() -> None:
    stream = Chunks([b"a\nb\n", b"c\n", b"d\n"])
    reader = LineReader(stream, max_line_bytes=100)
    assert await reader.__anext__() == b"a"
    assert await reader.__anext__() == b"b"
    assert stream.reads == 1
    assert await reader.__anext__() == b"c"
    assert stream.reads == 2


async def test_on_line_records_incoming() -> None:
    seen: list[tuple[str, bytes]] = []
    reader = LineReader(
        Chunks([b"a\nb", b"\n"]), max_line_bytes=100, on_line=lambda d, b: seen.append((d, b))
    )
    assert [x async for x in reader] == [b"a", b"b"]
    assert seen == [("in", b"a"), ("in", b"b")]


async def test_error_is_a_value_not_raised() -> None:
    reader = LineReader(Chunks([b"x" * 10 + b"\nok\n"]), max_line_bytes=5)
    items = [x async for x in reader]
    assert isinstance(items[0], MessageTooLargeError) and items[0].code == "message_too_large"
    assert "max_line_bytes" in str(items[0])
    assert items[1] == b"ok"
