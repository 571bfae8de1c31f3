"""Reading run logs: every event of a log (`read_events`), and following one while its writer lives
(`LogFollower`, `follow_events`, `follow_events_async`); the bad lines readers skip and name (`BadLine`).

Layer: core storage (behind `harness_core.store`, which re-exports all of it). Knows events, the log's line
format and the writer's lock (`store.locks.locked`); knows nothing of providers, the runner or rendering.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio
from pydantic import ValidationError

from harness_core.errors import InvalidSpecError
from harness_core.events import ApprovalRequested, ApprovalResolved, Done, HarnessEvent, parse_event
from harness_core.store.locks import locked

__all__ = [
    "BAD_LINE_HEAD",
    "BadLine",
    "LogFollower",
    "follow_events",
    "follow_events_async",
    "open_approvals",
    "pending_approvals",
    "read_events",
]

_CHUNK = 1 << 16


@dataclass(frozen=True)
class BadLine:
    """A complete line of a run log that is not a Harness event: where it is, how it starts, what is wrong."""

    number: int
    """1-based line number."""
    head: str
    """Its first bytes (at most `BAD_LINE_HEAD`), decoded with replacement characters."""
    problem: str

    def describe(self) -> str:
        return f"line {self.number} {self.problem}: {self.head!r}"

    def as_json(self) -> dict[str, Any]:
        return {"line": self.number, "head": self.head, "problem": self.problem}


BAD_LINE_HEAD = 60
"""Bytes of a bad line quoted when naming it."""


def _bad_line(number: int, raw: bytes, exc: ValidationError) -> BadLine:
    kinds = {err["type"] for err in exc.errors()}
    head = raw[:BAD_LINE_HEAD].decode("utf-8", "replace").rstrip("\n")
    if "json_invalid" in kinds or "json_type" in kinds:
        problem = "is not JSON (a corrupt or cut line)"
    elif "union_tag_not_found" in kinds:
        problem = "is not a Harness event (it has no `type`)"
    elif "union_tag_invalid" in kinds:
        problem = "is not an event type this Harness knows (written by a newer Harness?)"
    else:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"][1:]) or "event"
        problem = f"is not a valid Harness event ({where}: {first['msg']})"
    return BadLine(number, head, problem)


def read_events(path: str | Path, *, on_bad_line: Callable[[BadLine], None] | None = None) -> Iterator[HarnessEvent]:
    """The events of a run log. A torn last line (no newline yet) is skipped. A bad line elsewhere (not JSON, an
    unknown event type, a missing field) is given to `on_bad_line` and skipped, so a reader shows what is
    readable; without `on_bad_line` it raises.

    Raises:
        InvalidSpecError: a bad line and no `on_bad_line`; the message names the file, the line number, its
            first bytes and the problem.
    """
    with Path(path).open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.endswith(b"\n"):
                return  # torn tail: the writer is mid-line or died mid-line
            try:
                yield parse_event(raw)
            except ValidationError as exc:
                bad = _bad_line(number, raw, exc)
                if on_bad_line is None:
                    raise InvalidSpecError(f"{path}:{number} {bad.problem}: {bad.head!r}") from None
                on_bad_line(bad)


class LogFollower:
    """Reads a run log as it grows: each `read()` gives the events appended since the last one. Over (`over`)
    once `done` was read, or once the writer is gone (a lost run) and its last bytes were read. A torn line
    grows in one buffer and is parsed once whole (newlines are searched only in new bytes: linear for any line
    length). Use it as a context manager, or `close()` it.

    Raises (from `read`): InvalidSpecError, as `read_events`, for a bad line without `on_bad_line`; OSError
    when the log cannot be read.
    """

    def __init__(self, path: Path, *, on_bad_line: Callable[[BadLine], None] | None = None) -> None:
        self.path = path
        self.over = False
        self._on_bad_line = on_bad_line
        self._fh = path.open("rb")
        self._number = 0
        self._pending = bytearray()

    def __enter__(self) -> LogFollower:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._fh.close()

    def read(self) -> list[HarnessEvent]:
        """The events appended since the last call ([] while the log is quiet and its writer lives)."""
        if self.over:
            return []
        events: list[HarnessEvent] = []
        while True:
            chunk = self._fh.read(_CHUNK)
            if not chunk:
                if locked(self.path):  # the writer lives: more may come
                    return events
                chunk = self._fh.read(_CHUNK)  # the writer is gone: what it wrote is all there is, after a last read
                if not chunk:
                    self.over = True
                    return events
            if self._parse(chunk, events):
                self.over = True
                return events

    def _parse(self, chunk: bytes, events: list[HarnessEvent]) -> bool:
        """Add the complete lines of `chunk` to `events`; True once `done` was read (what follows is ignored)."""
        pending = self._pending
        scanned = len(pending)  # no newline before here: search only what just came
        pending += chunk
        begin = 0
        lines: list[bytes] = []
        while (end := pending.find(b"\n", scanned)) >= 0:
            lines.append(bytes(pending[begin:end]))
            begin = scanned = end + 1
        del pending[:begin]
        for raw in lines:
            self._number += 1
            try:
                event = parse_event(raw)
            except ValidationError as exc:
                bad = _bad_line(self._number, raw, exc)
                if self._on_bad_line is None:
                    raise InvalidSpecError(f"{self.path}:{self._number} {bad.problem}: {bad.head!r}") from None
                self._on_bad_line(bad)
                continue
            events.append(event)
            if isinstance(event, Done):
                return True
        return False


def follow_events(path: Path, *, poll: float = 0.05, on_bad_line: Callable[[BadLine], None] | None = None,
                  on_wait: Callable[[], None] | None = None) -> Iterator[HarnessEvent]:
    """The events of a run log as `read_events` gives them, then each one appended while its writer lives, until
    `done` (the run ended) or the writer is gone without it (the run is lost: the iteration just ends). Polls
    every `poll` seconds while the log is quiet, calling `on_wait` each time (a live view's clock); every wait
    ends when the writer does.

    Raises:
        InvalidSpecError: as `read_events`, for a bad line without `on_bad_line`.
    """
    with LogFollower(path, on_bad_line=on_bad_line) as follower:
        while True:
            events = follower.read()
            yield from events
            if follower.over:
                return
            if not events:
                if on_wait is not None:
                    on_wait()
                time.sleep(poll)


async def follow_events_async(
    path: Path, *, poll: float = 0.05, on_bad_line: Callable[[BadLine], None] | None = None,
) -> AsyncGenerator[HarnessEvent, None]:
    """`follow_events` for an event loop (asyncio or trio): the wait is `anyio.sleep`, so nothing blocks and an
    abandoned iteration holds no thread. Reading is synchronous (a log is a local file; a read returns at once).

    Raises: as `follow_events`; OSError when the log cannot be read.
    """
    with LogFollower(path, on_bad_line=on_bad_line) as follower:
        while True:
            events = follower.read()
            for event in events:
                yield event
            if follower.over:
                return
            if not events:
                await anyio.sleep(poll)


def open_approvals(events: Iterable[HarnessEvent]) -> dict[str, ApprovalRequested]:
    """The approval requests among `events` that have no `approval_resolved` after them, oldest first."""
    waiting: dict[str, ApprovalRequested] = {}
    for event in events:
        if isinstance(event, ApprovalRequested):
            waiting[event.request_id] = event
        elif isinstance(event, ApprovalResolved):
            waiting.pop(event.request_id, None)
    return waiting


def pending_approvals(path: Path) -> dict[str, ApprovalRequested]:
    """The approval requests of a run log waiting for an answer (bad lines skipped), oldest first."""
    return open_approvals(read_events(path, on_bad_line=lambda _bad: None))
