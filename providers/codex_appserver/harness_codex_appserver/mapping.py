"""Codex app-server notifications → `HarnessEvent`s: one small stateful mapper per turn, no I/O.

Layer: provider mapping, pure. Knows the app-server's notification methods and payloads (codex-cli 0.169.0,
`generate-json-schema`) and the event types; knows nothing of processes, JSON-RPC framing or the runner.
`feed(message)` → events, `outcome` once `turn/completed` arrived. Rules: providers/codex_appserver/README.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from harness_codex_common import Reconnect, Reconnects, parse_reconnect
from harness_core import (
    ContextUsage,
    ErrorEvent,
    ErrorInfo,
    HarnessError,
    HarnessEvent,
    HarnessResult,
    ProviderRaw,
    ReasoningDelta,
    RunStatus,
    TextDelta,
    ToolResult,
    ToolStatus,
    ToolSummary,
    ToolUse,
    Usage,
)
from harness_core.provider import OUTPUT_CHARS, bounded_tail, fast_text_delta

from harness_codex_appserver.coalesce import OutputBuffers
from harness_codex_appserver.items import TOOL_ITEM_TYPES, ToolCall, tool_calls
from harness_codex_appserver.payloads import codex_error_status, turn_failure, usage_from_wire

__all__ = ["IGNORED", "TEXT_DELTA", "TurnMapper"]

TEXT_DELTA = "item/agentMessage/delta"
"""The notification of a streamed token: the hot path (`TurnMapper.text_delta`)."""

IGNORED = frozenset(
    {
        "thread/started",  # the provider emits session_started from the thread/start|resume response
        "turn/started",  # turn id is taken from the turn/start response; tracked here too
        "thread/status/changed",  # active/idle bookkeeping, implied by the turn events
        "serverRequest/resolved",  # a withdrawn approval: the provider withdraws it, the runner reports it
        "item/reasoning/summaryPartAdded",  # a section break; the next summaryTextDelta has the text
    }
)

_STATUS = {"completed": RunStatus.SUCCESS, "interrupted": RunStatus.INTERRUPTED, "failed": RunStatus.FAILED}

# `TextDelta(text=..., item_id=...)` minus `BaseModel.__init__`'s frame and keyword packing (a third of the cost).
_text_delta_event = TextDelta.__pydantic_validator__.validate_python


class TurnMapper:
    """Maps the notifications of one thread's turn, in order: `feed` each one. Once `finished`, `outcome` is
    the turn's `HarnessResult` (status, final text, this run's usage, error; `session_id` is the thread).
    `clock` (seconds, monotonic) is read when command output arrives, to flush it every `flush_interval`.
    `reconnects` counts Codex's retries and bounds them (default: `MAX_RECONNECTS`, base URL unknown).
    `baseline`: the thread's total before this turn, when known (a live session's earlier turns)."""

    def __init__(
        self,
        *,
        thread_id: str | None = None,
        flush_bytes: int = 4096,
        flush_interval: float = 0.5,
        max_streamed_chars: int = 256_000,
        clock: Callable[[], float] = time.monotonic,
        reconnects: Reconnects | None = None,
        baseline: Usage | None = None,
    ) -> None:
        self.thread_id = thread_id
        self.reconnects = reconnects if reconnects is not None else Reconnects()
        self.gave_up: HarnessError | None = None
        self.tool_ids: set[str] = set()  # every tool item seen (so the provider adds no second display)
        self.turn_id: str | None = None
        self.outcome: HarnessResult | None = None
        self.usage = Usage()
        self._baseline = baseline
        self._out = OutputBuffers(clock=clock, flush_bytes=flush_bytes, flush_interval=flush_interval,
                                  max_streamed_chars=max_streamed_chars)
        self._streamed_items: set[str] = set()
        self._last_streamed: Any = None  # the item id last added to _streamed_items by a text delta
        self._open: dict[str, list[ToolCall]] = {}
        self._messages: list[tuple[str | None, str]] = []
        self._last_error: ErrorInfo | None = None
        self._last_diff: str | None = None

    @property
    def finished(self) -> bool:  # `turn/completed` arrived: `outcome` is set
        return self.outcome is not None

    def open_calls(self, item_id: str) -> list[ToolCall]:
        """The tool actions of an item that started and has not completed (for approval displays)."""
        return list(self._open.get(item_id, []))

    def start_turn(self, turn_id: str) -> None:  # from the `turn/start` response
        self.turn_id = turn_id

    # --- dispatch ---------------------------------------------------------------------------------------

    def feed(self, message: dict[str, Any]) -> list[HarnessEvent]:
        """The events for one notification, `{"method": ..., "params": ...}` (possibly none, never silently:
        see `IGNORED`)."""
        method = message.get("method")
        params = message.get("params")
        p: dict[str, Any] = params if params.__class__ is dict else {}
        if method.__class__ is not str:
            return [ProviderRaw(method=None, payload=message)]
        if self._foreign(method, p):
            return [ProviderRaw(method=method, payload=params)]
        handler = _HANDLERS.get(method)
        if handler is not None:
            return handler(self, p)
        if method in IGNORED:
            if method == "turn/started":
                self.turn_id = self.turn_id or (p.get("turn") or {}).get("id")
            return []
        return [ProviderRaw(method=method, payload=params)]

    def _foreign(self, method: str, p: dict[str, Any]) -> bool:
        """A notification about another thread or turn (a sub-agent, a stale turn): kept raw. Token usage
        of earlier turns is not foreign: it is the baseline of the per-run figures."""
        # Hot path (every notification): plain comparisons, no tuple building.
        thread_id = self.thread_id
        if thread_id:
            other = p.get("threadId")
            if other is not None and other != thread_id:
                return True
        turn_id = self.turn_id
        if not turn_id:
            return False
        if method == "turn/completed":
            other = (p.get("turn") or {}).get("id")
        elif method == "thread/tokenUsage/updated":
            return False
        else:
            other = p.get("turnId")
        return other is not None and other != turn_id

    # --- text and reasoning -----------------------------------------------------------------------------

    def text_delta(self, p: dict[str, Any]) -> HarnessEvent | None:
        """`feed` of an `item/agentMessage/delta` notification in its plain case (this thread and turn, some
        text, the turn not over), the hottest path of a run: its one event. None: not the plain case, `feed`
        it."""
        if self._foreign(TEXT_DELTA, p):
            return None
        delta = p.get("delta")
        if delta.__class__ is not str or not delta or self.outcome is not None:
            return None
        item_id = p.get("itemId")
        if item_id.__class__ is not str:
            return None
        if item_id and item_id != self._last_streamed:  # else the set already holds it
            self._last_streamed = item_id
            self._streamed_items.add(item_id)
        return fast_text_delta(delta, item_id)

    def _text_delta(self, p: dict[str, Any]) -> list[HarnessEvent]:
        # The general case (`text_delta` is the hot one): an odd item id or delta, another turn's, a late one.
        item_id = p.get("itemId")
        if item_id and item_id != self._last_streamed:  # else the set already holds it
            if type(item_id) is str:
                self._last_streamed = item_id
            self._streamed_items.add(str(item_id))
        delta = p.get("delta")
        if not delta:
            return []
        return [_text_delta_event({"text": delta if type(delta) is str else str(delta), "item_id": item_id})]

    def _reasoning_delta(self, p: dict[str, Any]) -> list[HarnessEvent]:
        item_id = p.get("itemId")
        if item_id:
            self._streamed_items.add(str(item_id))
        return [ReasoningDelta(text=str(p.get("delta") or ""), item_id=item_id)] if p.get("delta") else []

    # --- items ------------------------------------------------------------------------------------------

    def _item_started(self, p: dict[str, Any]) -> list[HarnessEvent]:
        item = p.get("item") or {}
        kind = item.get("type")
        if kind in TOOL_ITEM_TYPES:
            calls = tool_calls(item, completed=False)
            self._open[str(item.get("id"))] = calls
            self.tool_ids.add(str(item.get("id")))
            return [ToolUse(tool_id=c.tool_id, name=c.name, display=c.display, input=c.input) for c in calls]
        if kind in ("userMessage", "agentMessage", "reasoning", "plan"):
            return []  # their content arrives as deltas or with item/completed
        return [ProviderRaw(method="item/started", payload=p)]

    def _item_completed(self, p: dict[str, Any]) -> list[HarnessEvent]:
        item = p.get("item") or {}
        kind, item_id = item.get("type"), str(item.get("id"))
        if kind in TOOL_ITEM_TYPES:
            self.tool_ids.add(item_id)
            events = self._out.flush(("output", item_id), force=True)
            events += self._finish_tool(item_id, tool_calls(item, completed=True))
            return events
        if kind == "agentMessage":
            text = str(item.get("text") or "")
            self._messages.append((item.get("phase"), text))
            if item_id not in self._streamed_items and text:
                return [TextDelta(text=text, item_id=item_id)]
            return []
        if kind == "reasoning":
            if item_id in self._streamed_items:
                return []
            parts = [str(s) for s in (item.get("summary") or [])] + [
                str(c) for c in (item.get("content") or [])
            ]
            text = "\n\n".join(part for part in parts if part)
            return [ReasoningDelta(text=text, item_id=item_id)] if text else []
        if kind == "plan":
            events = self._out.flush(("plan", item_id), force=True)
            if item_id not in self._streamed_items and item.get("text"):
                events.append(ToolSummary(tool_id=item_id, kind="plan", text=str(item["text"])))
            return events
        if kind == "userMessage":
            return []  # the echo of our own prompt
        return [ProviderRaw(method="item/completed", payload=p)]

    def _finish_tool(self, item_id: str, calls: list[ToolCall]) -> list[HarnessEvent]:
        self._open.pop(item_id, None)
        return [
            ToolResult(
                tool_id=c.tool_id, name=c.name, display=c.display, output=c.output, is_error=c.is_error
            )
            for c in calls
        ]

    # --- coalesced output -------------------------------------------------------------------------------

    def _output_delta(self, p: dict[str, Any]) -> list[HarnessEvent]:
        return self._out.add(("output", str(p.get("itemId"))), str(p.get("delta") or ""))

    def _plan_delta(self, p: dict[str, Any]) -> list[HarnessEvent]:
        item_id = str(p.get("itemId"))
        self._streamed_items.add(item_id)
        return self._out.add(("plan", item_id), str(p.get("delta") or ""))

    # --- turn-level -------------------------------------------------------------------------------------

    def _plan_updated(self, p: dict[str, Any]) -> list[HarnessEvent]:
        marks = {"completed": "[x]", "inProgress": "[~]", "pending": "[ ]"}
        lines = [str(p["explanation"])] if p.get("explanation") else []
        lines += [f"{marks.get(s.get('status'), '[ ]')} {s.get('step')}" for s in p.get("plan") or []]
        return [ToolSummary(kind="plan", text="\n".join(lines))] if lines else []

    def _diff_updated(self, p: dict[str, Any]) -> list[HarnessEvent]:
        diff = str(p.get("diff") or "")
        if diff == self._last_diff or not diff:
            return []
        self._last_diff = diff
        return [ToolSummary(kind="diff", text=bounded_tail(diff, OUTPUT_CHARS) or "")]

    def _token_usage(self, p: dict[str, Any]) -> list[HarnessEvent]:
        usage = p.get("tokenUsage") or {}
        total = usage_from_wire(usage.get("total"))
        window = usage.get("modelContextWindow")
        ours = self.turn_id is not None and p.get("turnId", self.turn_id) == self.turn_id
        if not ours:
            self._baseline = total
            return [ContextUsage(usage=total, cumulative=True, context_window=window)]
        if self._baseline is None:
            self._baseline = total - usage_from_wire(usage.get("last"))
        self.usage = total - self._baseline
        return [ContextUsage(usage=self.usage, cumulative=False, context_window=window)]

    def _error(self, p: dict[str, Any]) -> list[HarnessEvent]:
        error = p.get("error") or {}
        if not p.get("willRetry"):
            self._last_error = turn_failure(error, self.reconnects).to_info()
            return [ErrorEvent(error=self._last_error)]
        message, extra = str(error.get("message") or "Reconnecting..."), error.get("additionalDetails")
        retry = parse_reconnect(message, extra) or Reconnect(None, None, str(extra or message))
        status = codex_error_status(error.get("codexErrorInfo"))[1]
        shown = f"{message} ({extra})" if extra else message
        events: list[HarnessEvent] = [self.reconnects.notice(shown, retry, status)]
        if self.reconnects.exhausted and self.gave_up is None:
            self.gave_up = self.reconnects.give_up()
            events.append(ErrorEvent(error=self.gave_up.to_info()))
        return events

    def _turn_completed(self, p: dict[str, Any]) -> list[HarnessEvent]:
        turn = p.get("turn") or {}
        events: list[HarnessEvent] = []
        events += self._out.flush_all()
        for item_id, calls in list(self._open.items()):
            ended = [
                ToolCall(
                    c.tool_id,
                    c.name,
                    c.display.model_copy(
                        update={"status": ToolStatus.FAILED, "summary": "the turn ended before this finished"}
                    ),
                    c.input,
                )
                for c in calls
            ]
            events += self._finish_tool(item_id, ended)
        status = _STATUS.get(str(turn.get("status")), RunStatus.FAILED)
        error = self._last_error
        if self.gave_up is not None:  # however Codex ended the turn we stopped
            status, error = RunStatus.FAILED, self.gave_up.to_info()
        elif status is RunStatus.FAILED and isinstance(turn.get("error"), dict):
            error = turn_failure(turn["error"], self.reconnects).to_info()
        elif status is RunStatus.FAILED and error is None:
            error = ErrorInfo(
                code="model_error", message=f"the turn ended with status {turn.get('status')!r}"
            )
        if status is not RunStatus.FAILED:
            error = None
        final = next((t for ph, t in reversed(self._messages) if ph == "final_answer"), None)
        if final is None:
            final = self._messages[-1][1] if self._messages else ""
        self.outcome = HarnessResult(
            status=status, final_text=final, session_id=self.thread_id, usage=self.usage, error=error
        )
        return events


_HANDLERS = {
    "item/agentMessage/delta": TurnMapper._text_delta,
    "item/reasoning/summaryTextDelta": TurnMapper._reasoning_delta,
    "item/reasoning/textDelta": TurnMapper._reasoning_delta,
    "item/started": TurnMapper._item_started,
    "item/completed": TurnMapper._item_completed,
    "item/commandExecution/outputDelta": TurnMapper._output_delta,
    "item/plan/delta": TurnMapper._plan_delta,
    "turn/plan/updated": TurnMapper._plan_updated,
    "turn/diff/updated": TurnMapper._diff_updated,
    "thread/tokenUsage/updated": TurnMapper._token_usage,
    "error": TurnMapper._error,
    "turn/completed": TurnMapper._turn_completed,
}
