"""Command output and plan text of a codex turn, coalesced into bounded `tool_summary` events.

Layer: provider (codex-appserver), a pure helper of the turn mapper. Knows `ToolSummary` and a clock; knows
nothing of the wire or of the run. The flush and bound rules: providers/codex_appserver/README.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from harness_core import HarnessEvent, ToolSummary

__all__ = ["OutputBuffers"]

Key = tuple[str, str]
"""("output" | "plan", item id)."""


@dataclass
class _Buffer:
    parts: list[str] = field(default_factory=list)
    size: int = 0
    streamed: int = 0
    held_back: int = 0
    last_flush: float | None = None


class OutputBuffers:
    """The open items' buffered output, by `Key`."""

    def __init__(self, *, clock: Callable[[], float], flush_bytes: int, flush_interval: float,
                 max_streamed_chars: int) -> None:
        self._clock = clock
        self._flush_bytes = flush_bytes
        self._flush_interval = flush_interval
        self._max_streamed = max_streamed_chars
        self._buffers: dict[Key, _Buffer] = {}

    def add(self, key: Key, delta: str) -> list[HarnessEvent]:
        """Buffer `delta`: the events due now (a flush), usually none."""
        now = self._clock()
        buf = self._buffers.get(key)
        if buf is None:
            buf = self._buffers[key] = _Buffer(last_flush=now)
        room = self._max_streamed - buf.streamed - buf.size
        if room <= 0:
            buf.held_back += len(delta)
            return []
        if len(delta) > room:
            buf.held_back += len(delta) - room
            delta = delta[:room]
        buf.parts.append(delta)
        buf.size += len(delta)
        due = buf.last_flush is not None and now - buf.last_flush >= self._flush_interval
        if buf.size >= self._flush_bytes or due:
            return self.flush(key, now=now)
        return []

    def flush(self, key: Key, *, force: bool = False, now: float = 0.0) -> list[HarnessEvent]:
        """The buffered text of `key` as a `tool_summary`; `force` (the item completed): also the note of what
        was held back, and the buffer is dropped."""
        buf = self._buffers.get(key)
        if buf is None:
            return []
        events: list[HarnessEvent] = []
        kind, item_id = key
        if buf.parts:
            text = "".join(buf.parts)
            buf.parts, buf.streamed, buf.size = [], buf.streamed + buf.size, 0
            buf.last_flush = now
            events.append(
                ToolSummary(tool_id=item_id, kind="output" if kind == "output" else "plan", text=text)
            )
        if force:
            if buf.held_back:
                events.append(
                    ToolSummary(
                        tool_id=item_id,
                        kind="note",
                        text=f"[{buf.held_back} more characters of output not streamed]",
                    )
                )
            del self._buffers[key]
        return events

    def flush_all(self) -> list[HarnessEvent]:
        """Every open item's buffered text and notes (the turn ended)."""
        events: list[HarnessEvent] = []
        for key in list(self._buffers):
            events += self.flush(key, force=True)
        return events
