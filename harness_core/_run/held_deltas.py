"""`HeldDeltas`: streamed deltas held back from the run log while their tail may be the start of a known secret.

Layer: core runtime (the run log's hot path, used by `pipe`). Knows delta texts and the run's secret values; knows
nothing of logs, providers or the consumer. A model streaming a secret token by token would otherwise write it in
pieces no single line holds; the next delta (or any other event) decides: the secret masked across the pieces.
"""

from __future__ import annotations

from harness_core.events import HarnessEvent
from harness_core.redaction import MIN_SECRET, REDACTED

__all__ = ["HeldDeltas", "pending_start"]


def pending_start(text: str, known: tuple[str, ...]) -> int | None:
    """Where the earliest tail of `text` that is a proper prefix of one of `known` begins, or None. Looks only at
    the last `len(value) - 1` characters for each value: O(len(value)²) at worst, whatever the length of `text`."""
    found: int | None = None
    end = len(text)
    for value in known:
        first, start = value[0], max(0, end - len(value) + 1)
        at = text.find(first, start)
        while at != -1 and (found is None or at < found):
            if value.startswith(text[at:]):
                found = at
                break
            at = text.find(first, at + 1)
    return found


class HeldDeltas:
    """The deltas (of one kind, in seq order) held back, with their texts as they will be written."""

    def __init__(self, known: tuple[str, ...]) -> None:
        self.known = tuple(value for value in known if len(value) >= MIN_SECRET)
        self.events: list[HarnessEvent] = []
        self.texts: list[str] = []
        self._ends = (frozenset(value[:1] for value in self.known), frozenset(value[:2] for value in self.known),
                      frozenset(value[i:i + 3] for value in self.known for i in range(len(value) - 3)))
        """What the last 1, 2 or 3 characters of a text are when its tail is a proper prefix of a known value of 1,
        2 or more characters: three set lookups rule out almost every delta before `pending_start` looks."""

    def may_begin(self, text: str) -> bool:
        """Whether the tail of `text` is a proper prefix of a known value (so the delta is to be held)."""
        first, two, three = self._ends
        if text[-3:] in three:  # a prefix of 3 characters or more may end here: look
            return pending_start(text, self.known) is not None
        return text[-2:] in two or text[-1:] in first  # a prefix of 2 or 1 is the whole answer

    def hold(self, event: HarnessEvent, text: str) -> list[tuple[HarnessEvent, str]]:
        """Add a delta (of the kind held, or the first); returns the deltas now decided, in order, each with its text
        to write (a known value that the pieces complete masked: `***` where it starts, the rest of it dropped). The
        pieces from where a known value may still begin stay held."""
        self.events.append(event)
        self.texts.append(text)
        joined = "".join(self.texts)
        spans = _spans(joined, self.known)
        if spans:
            self.texts = _masked(self.texts, joined, spans)
            joined = "".join(self.texts)
        pending = pending_start(joined, self.known)
        if pending is None:
            return self.release()
        decided, offset = 0, 0
        for text in self.texts:
            if offset + len(text) > pending:
                break
            offset += len(text)
            decided += 1
        out = list(zip(self.events[:decided], self.texts[:decided], strict=True))
        del self.events[:decided], self.texts[:decided]
        return out

    def release(self) -> list[tuple[HarnessEvent, str]]:
        """Every held delta with its text, held no longer (another event came: the pieces cannot go on)."""
        out = list(zip(self.events, self.texts, strict=True))
        self.events, self.texts = [], []
        return out


def _spans(text: str, known: tuple[str, ...]) -> list[tuple[int, int]]:
    """The non-overlapping (start, end) of each known value in `text`, longest values first, in order."""
    taken: list[tuple[int, int]] = []
    for value in known:
        at = text.find(value)
        while at != -1:
            end = at + len(value)
            if all(end <= a or at >= b for a, b in taken):
                taken.append((at, end))
            at = text.find(value, at + 1)
    return sorted(taken)


def _masked(pieces: list[str], joined: str, spans: list[tuple[int, int]]) -> list[str]:
    """`pieces` (whose concatenation is `joined`) with each span's characters dropped and `***` put in the piece
    where the span starts."""
    out: list[str] = []
    low = 0
    for piece in pieces:
        high = low + len(piece)
        parts: list[str] = []
        at = low
        for start, end in spans:
            if end <= low or start >= high:
                continue
            if start >= at:
                parts += [joined[at:start], REDACTED]
            at = max(at, min(end, high))
        parts.append(joined[at:high])
        out.append("".join(parts))
        low = high
    return out
