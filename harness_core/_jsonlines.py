"""JSON lines from an agent's stdout: the fast per-line decoder and the pump every line-protocol provider uses.

Layer: provider support. Knows the transport's line values (`bytes`, or a `MessageTooLargeError` for a line
over the framing cap) and the two events a malformed line becomes; knows no agent and no wire protocol beyond
"one JSON object per line".
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable
from typing import Any

from harness_core.errors import MessageTooLargeError
from harness_core.events import ErrorEvent, HarnessEvent, ProviderRaw

__all__ = ["NON_JSON_METHOD", "json_messages", "loads_line", "scan_once"]

NON_JSON_METHOD = "non_json_stdout"
"""`ProviderRaw.method` of a stdout line that is not a JSON object (its text, truncated, is the payload)."""
_RAW_CHARS = 2000

scan_once: Callable[[str, int], tuple[Any, int]] = getattr(json.JSONDecoder(), "scan_once")  # noqa: B009
"""The JSON decoder's C scanner (not in the type stubs): `scan_once(text, 0)` returns (value, end index) or
raises StopIteration. The hottest loops (the JSON-RPC read loop) call it inline, with `loads_line` as the
fallback when `end != len(text)`, which saves a Python call per line."""


def loads_line(line: bytes) -> Any:
    """`json.loads` for one line, about twice as fast on the usual compact message: it skips encoding
    detection and the whitespace regexes, falling back to `json.loads` for anything unusual.

    Raises:
        ValueError: not valid JSON (or not UTF-8).
    """
    text = line.decode()
    try:
        obj, end = scan_once(text, 0)
    except StopIteration:
        return json.loads(text)
    if end != len(text):
        return json.loads(text)
    return obj


async def json_messages(
    lines: AsyncIterable[bytes | MessageTooLargeError],
    emit: Callable[[HarnessEvent], Awaitable[None]],
) -> AsyncIterator[dict[str, Any]]:
    """The JSON objects among `lines` (e.g. `child.lines()`), in order. Blank lines are skipped; a line over
    the framing cap becomes an `error` event (`message_too_large`) and a line that is not a JSON object a
    `provider_raw` event (`method="non_json_stdout"`), both sent with `emit` (`ctx.emit`) — the stream goes on.
    """
    loads = loads_line
    async for line in lines:
        if line.__class__ is not bytes and isinstance(line, MessageTooLargeError):
            await emit(ErrorEvent(error=line.to_info()))
            continue
        try:
            msg = loads(line)  # bytes: checked above
        except ValueError:
            msg = None
        if msg.__class__ is dict:
            yield msg
            continue
        text = bytes(line).decode("utf-8", "replace")
        if text.strip():
            await emit(ProviderRaw(method=NON_JSON_METHOD, payload=text[:_RAW_CHARS]))
