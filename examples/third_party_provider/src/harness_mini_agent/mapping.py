"""Responses stream events → Harness events: the pure mapping of one mini-agent run (one mapper per run).

Layer: pure mapping. Knows the Responses stream events mini-agent reacts to and the Harness events they stand
for; must not know HTTP, processes, tools, approvals or interrupts (`agent.py` emits what `feed` returns).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness_core import (
    ContextUsage,
    HarnessError,
    HarnessEvent,
    HarnessResult,
    ProviderRaw,
    ReasoningDelta,
    RunStatus,
    SessionStarted,
    TextDelta,
    Usage,
)

from harness_mini_agent import wire

__all__ = ["Response", "ResponsesMapper"]

_REASONING = frozenset({"response.reasoning_summary_text.delta", "response.reasoning_text.delta"})
_FINISHED = frozenset({"response.completed", "response.incomplete"})
_FAILED = frozenset({"response.failed", "error"})


@dataclass
class Response:
    """What one streamed response left behind."""

    id: str | None = None
    calls: list[wire.ToolCall] = field(default_factory=list)
    """The tool calls the model made, in order: the agent runs them and sends their outputs back."""
    completed: bool = False
    """`response.completed` (or `response.incomplete`) arrived: the response is whole."""
    error: HarnessError | None = None
    """What a `response.failed` or `error` event reported; the run fails with it."""


class ResponsesMapper:
    """Maps the Responses streams of one run onto Harness events and keeps the run's outcome."""

    def __init__(self, model: str, resume_session: str | None = None) -> None:
        self.model = model
        self.session_id: str | None = resume_session
        """The last response with no tool call left to answer: the one a later run can continue from."""
        self.usage = Usage()
        self.response = Response()
        self._resume = resume_session
        self._announced = resume_session is not None
        self._text: list[str] = []
        self._streamed: set[str] = set()

    @property
    def text(self) -> str:
        """Everything the model said in this run, as the text deltas carried it."""
        return "".join(self._text)

    def start(self) -> list[HarnessEvent]:
        """The events that open the run: `session_started` (resumed) when it continues a session. A new
        session is announced when its first response is created (its id is the session id)."""
        if self._resume is None:
            return []
        return [SessionStarted(session_id=self._resume, resumed=True, model=self.model)]

    def start_response(self) -> Response:
        """Begin the next response of the run; `feed` then fills it in."""
        self.response = Response()
        self._streamed = set()
        return self.response

    def feed(self, event: dict[str, Any]) -> list[HarnessEvent]:
        """The Harness events one stream event stands for (often none)."""
        kind = event.get("type")
        if kind == "response.output_text.delta":
            delta = event.get("delta")
            if not delta:
                return []
            self._streamed.add(str(event.get("item_id")))
            self._text.append(delta)
            return [TextDelta(text=delta, item_id=event.get("item_id"))]
        if kind in _REASONING:
            delta = event.get("delta")
            return [ReasoningDelta(text=delta, item_id=event.get("item_id"))] if delta else []
        if kind == "response.output_item.done":
            return self._item(event.get("item") or {})
        if kind == "response.created":
            return self._created(event.get("response") or {})
        if kind in _FINISHED:
            return self._finished(event.get("response") or {})
        if kind in _FAILED:
            self.response.error = wire.stream_error(event)
        return []

    def result(self, status: RunStatus, error: HarnessError | None = None) -> HarnessResult:
        """The run's result so far, ending with `status` (and `error`, for a failed or interrupted run)."""
        return HarnessResult(
            status=status,
            final_text=self.text,
            session_id=self.session_id,
            usage=self.usage,
            error=error.to_info() if error else None,
        )

    # -- one event at a time ---------------------------------------------------------------------------

    def _created(self, response: dict[str, Any]) -> list[HarnessEvent]:
        if response.get("id"):
            self.response.id = str(response["id"])
        if self._announced or self.response.id is None:
            return []
        self._announced = True
        return [SessionStarted(session_id=self.response.id, model=response.get("model") or self.model)]

    def _item(self, item: dict[str, Any]) -> list[HarnessEvent]:
        call = wire.tool_call(item)
        if call is not None:
            self.response.calls.append(call)
            return []
        item_type = item.get("type")
        if item_type == "message":
            if str(item.get("id")) in self._streamed:
                return []
            text = "".join(
                p.get("text", "") for p in item.get("content") or [] if p.get("type") == "output_text"
            )
            if not text:
                return []
            self._text.append(text)  # a server that does not stream deltas: the whole message at once
            return [TextDelta(text=text, item_id=item.get("id"))]
        if item_type == "reasoning":
            return []
        return [ProviderRaw(method=str(item_type), payload=item)]

    def _finished(self, response: dict[str, Any]) -> list[HarnessEvent]:
        current = self.response
        if response.get("id"):
            current.id = str(response["id"])
        usage = wire.parse_usage(response.get("usage"))
        self.usage = self.usage + usage
        current.completed = True
        if not current.calls:
            self.session_id = current.id
        return [ContextUsage(usage=usage)]
