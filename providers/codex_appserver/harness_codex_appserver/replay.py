"""Feed a recorded app-server conversation back through the mapping: transcripts → events, offline.

Layer: provider mapping, pure (no process; the mapper's clock is the transcript's `t`). Used by the golden tests
and by wire-log replays. Knows the lifecycle only as far as needed to know which thread and turn a notification
belongs to. The transcript format: providers/codex_appserver/README.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness_core import HarnessEvent, HarnessResult, SessionStarted

from harness_codex_appserver.mapping import TEXT_DELTA, TurnMapper
from harness_codex_appserver.notices import CONFIG_WARNING, config_warning

__all__ = ["Conversation", "conversations", "load_transcript", "replay"]


@dataclass
class Conversation:
    """One app-server process's traffic (a `case` of a multi-case transcript)."""

    case: str | None
    lines: list[dict[str, Any]] = field(default_factory=list)


def load_transcript(path: str | Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def conversations(lines: Iterable[dict[str, Any]]) -> Iterator[Conversation]:
    """Split a transcript into conversations: at `case` markers, and where the clock starts again."""
    current = Conversation(None)
    last_t = 0.0
    for line in lines:
        if "msg" not in line:
            if current.lines:
                yield current
            current = Conversation(str(line.get("case")) if "case" in line else None)
            last_t = 0.0
            continue
        t = float(line.get("t") or 0.0)
        if t < last_t and current.lines:
            yield current
            current = Conversation(current.case)
        last_t = t
        current.lines.append(line)
    if current.lines:
        yield current


class _TranscriptClock:
    """The mapper's clock during a replay: the `t` of the line being fed."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def replay(conversation: Conversation, *, fast: bool = True) -> tuple[list[HarnessEvent], list[HarnessResult]]:
    """The events (and turn outcomes) the provider's mapping makes of one recorded conversation: as the provider
    routes them (`fast`: a text delta through `TurnMapper.text_delta` first, as `Turn.on_text_delta` does), or
    every notification through `feed`."""
    events: list[HarnessEvent] = []
    outcomes: list[HarnessResult] = []
    pending: dict[Any, str] = {}
    mapper: TurnMapper | None = None
    clock = _TranscriptClock()
    for line in conversation.lines:
        msg = line["msg"]
        clock.now = float(line.get("t") or clock.now)
        if not isinstance(msg, dict):
            continue
        if line["dir"] == "out":
            if "method" in msg and "id" in msg:
                pending[msg["id"]] = str(msg["method"])
            continue
        if "method" not in msg and "id" in msg:  # a response to one of our requests
            method = pending.pop(msg["id"], "")
            result = msg.get("result")
            if not isinstance(result, dict):
                continue
            if method in ("thread/start", "thread/resume"):
                thread = result.get("thread") or {}
                mapper = TurnMapper(thread_id=thread.get("id"), clock=clock)
                events.append(
                    SessionStarted(
                        session_id=str(thread.get("id")),
                        resumed=method == "thread/resume",
                        model=result.get("model"),
                    )
                )
            elif method == "turn/start" and mapper is not None:
                mapper.start_turn(str((result.get("turn") or {}).get("id")))
            continue
        if "id" in msg:  # a server request (approvals): the provider's business, not the mapping's
            continue
        if msg.get("method") == CONFIG_WARNING:  # the thread's, not a turn's (as `thread.AppThread` routes it)
            events.append(config_warning(msg.get("params")))
            continue
        if mapper is None:
            mapper = TurnMapper(clock=clock)
        fast_event = mapper.text_delta(msg["params"]) if (
            fast and msg.get("method") == TEXT_DELTA and msg.get("params").__class__ is dict) else None
        if fast_event is not None:
            events.append(fast_event)
        else:
            events += mapper.feed(msg)
        if mapper.outcome is not None:
            outcomes.append(mapper.outcome)
            mapper = TurnMapper(thread_id=mapper.thread_id, clock=clock)
    return events, outcomes
