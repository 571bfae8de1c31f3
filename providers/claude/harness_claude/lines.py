"""Claude Code's stdout lines → batches of parsed stream-json messages, one batch per chunk read.

Layer: provider (wire). The read path's first step, shared by a one-shot run and a live session's reader: it
takes the child's lines (`ChildProcess.lines()`), parses every line already read in one plain loop (the JSON
C scanner called directly, as `harness_core.jsonrpc` does) and hands them over as one list, so a flood of
token deltas costs one await per chunk rather than per line. A line that is not a JSON object, or one over the
framing cap, goes to `harness_core.provider.json_messages` — the same `provider_raw` / `error` event, at the
same place in the order. Knows nothing of the messages' meaning, of turns or of events beyond those two.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from typing import Any

from harness_core import HarnessEvent, MessageTooLargeError
from harness_core.provider import json_messages, scan_once

__all__ = ["Batches", "message_batches"]

Batches = AsyncIterator[list[dict[str, Any]]]
"""What a turn reads: the parsed messages, in order, a chunk's worth at a time (never an empty list)."""

_scan = scan_once

Line = bytes | MessageTooLargeError


async def message_batches(lines: AsyncIterable[Line], emit: Callable[[HarnessEvent], Awaitable[None]]) -> Batches:
    """The JSON objects among `lines`, in order, as lists: all the lines the reader already holds
    (`LineReader.take_ready`) go in one list. A line that is not a JSON object (or too large) ends the list
    before it and is reported with `emit`, as `json_messages` reports it."""
    take_ready: Callable[[], list[Line]] | None = getattr(lines, "take_ready", None)
    scan = _scan
    async for first in lines:
        batch: list[dict[str, Any]] = []
        for line in (first, *take_ready()) if take_ready is not None else (first,):
            if line.__class__ is bytes:
                try:
                    text = line.decode()  # bytes: checked above
                    msg, end = scan(text, 0)
                    if end == len(text) and msg.__class__ is dict:
                        batch.append(msg)
                        continue
                except (StopIteration, ValueError):
                    pass
            if batch:  # what came before the odd line is handled before its event
                yield batch
                batch = []
            async for msg in json_messages(_one(line), emit):  # padded JSON, a non-object, not JSON, too large
                batch.append(msg)
        if batch:
            yield batch


async def _one(line: Line) -> AsyncIterator[Line]:
    yield line
