"""Claude Code's stdout lines → batches of parsed stream-json messages, one batch per chunk read.

Layer: provider (wire). The read path's first step, shared by a one-shot run and a live session's reader: the
child's lines (`ChildProcess.lines()`) through Harness's batched reader (`harness_core.provider.json_batches`),
so a flood of token deltas costs one await per chunk rather than per line. Knows nothing of the messages' meaning.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from typing import Any

from harness_core import HarnessEvent, MessageTooLargeError
from harness_core.provider import json_batches

__all__ = ["Batches", "message_batches"]

Batches = AsyncIterator[list[dict[str, Any]]]
"""What a turn reads: the parsed messages, in order, a chunk's worth at a time (never an empty list)."""


def message_batches(lines: AsyncIterable[bytes | MessageTooLargeError],
                    emit: Callable[[HarnessEvent], Awaitable[None]]) -> Batches:
    """The JSON objects among `lines`, in order, as lists: all the lines the reader already holds
    (`LineReader.take_ready`) go in one list. A line that is not a JSON object (or too large) ends the list
    before it and is reported with `emit`, as `json_messages` reports it."""
    return json_batches(lines, emit)
