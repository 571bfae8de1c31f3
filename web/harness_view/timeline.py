"""A run's events folded into what its page shows: the header facts and an ordered list of blocks (text,
reasoning, a tool call with its result, an approval with its answer, an error, a notice), built incrementally.

Pure: events in, blocks out; `apply` says which blocks an event changed (what a live page re-renders). Knows
Harness's event types; knows nothing of files, HTTP or HTML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from harness_core import (
    ApprovalRequested,
    ApprovalResolved,
    ContextUsage,
    Done,
    ErrorEvent,
    ErrorInfo,
    FileChange,
    FilesChanged,
    HarnessEvent,
    HarnessResult,
    HarnessToolDetails,
    Notice,
    ProviderRaw,
    ReasoningDelta,
    RunStarted,
    SessionStarted,
    TextDelta,
    ToolResult,
    ToolSummary,
    ToolUse,
    Usage,
)

__all__ = ["HEAD", "CHANGES", "RESULT", "Block", "Timeline"]

HEAD, CHANGES, RESULT = "head", "changes", "result"
"""The keys of the page's fixed sections (the header, the files changed, the result); the rest are blocks."""


@dataclass
class Block:
    """One entry of the timeline. `kind` says which fields are set."""

    key: str
    kind: Literal["text", "reasoning", "tool", "approval", "error", "notice", "summary"]
    ts: float
    item_id: str | None = None
    parts: list[str] = field(default_factory=list)
    tool_id: str | None = None
    name: str = ""
    use: HarnessToolDetails | None = None
    result: HarnessToolDetails | None = None
    input: dict[str, Any] | None = None
    output: str | None = None
    is_error: bool = False
    ended: float | None = None
    notes: list[str] = field(default_factory=list)
    request: ApprovalRequested | None = None
    resolved: ApprovalResolved | None = None
    error: ErrorInfo | None = None
    notice: Notice | None = None

    @property
    def text(self) -> str:
        return "".join(self.parts)

    @property
    def display(self) -> HarnessToolDetails | None:
        """The tool's latest details (its result's, else its start's; the request's for an approval)."""
        if self.request is not None:
            return self.request.display
        return self.result or self.use

    @property
    def duration_ms(self) -> int | None:
        shown = self.display
        if shown is not None and shown.duration_ms is not None:
            return shown.duration_ms
        return round((self.ended - self.ts) * 1000) if self.ended is not None else None

    @property
    def changes(self) -> tuple[FileChange, ...]:
        shown = self.display
        if shown is None:
            return ()
        return shown.changes or (self.use.changes if self.use is not None else ())


@dataclass
class Timeline:
    """The page of one run, folded from its events in order (`apply` each, or `of(events)`)."""

    run_id: str = ""
    started: RunStarted | None = None
    session: SessionStarted | None = None
    usage: Usage | None = None
    context_window: int | None = None
    files: tuple[FileChange, ...] | None = None
    done: HarnessResult | None = None
    raw_count: int = 0
    last_seq: int = -1
    blocks: list[Block] = field(default_factory=list)
    _tools: dict[str, Block] = field(default_factory=dict, repr=False)
    _approvals: dict[str, Block] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, events: list[HarnessEvent]) -> Timeline:
        timeline = cls()
        for event in events:
            timeline.apply(event)
        return timeline

    @property
    def spec(self) -> dict[str, Any]:
        return self.started.spec if self.started is not None else {}

    @property
    def model(self) -> str | None:
        asked = self.spec.get("model")
        if isinstance(asked, str) and asked:
            return asked
        return self.session.model if self.session is not None else None

    @property
    def pending(self) -> list[Block]:
        """Approval requests without an answer yet, oldest first."""
        return [b for b in self._approvals.values() if b.resolved is None]

    def approval(self, request_id: str) -> Block | None:
        """The approval block of `request_id` (its request and, once answered, how the run resolved it)."""
        return self._approvals.get(request_id)

    def block(self, key: str) -> Block | None:
        return next((b for b in self.blocks if b.key == key), None)

    def apply(self, event: HarnessEvent) -> list[str]:
        """Fold `event` in; the keys of what it changed (blocks, or `HEAD`, `CHANGES`, `RESULT`)."""
        self.run_id = self.run_id or event.run_id
        self.last_seq = max(self.last_seq, event.seq)
        if isinstance(event, (TextDelta, ReasoningDelta)):
            return [self._delta(event)]
        if isinstance(event, ToolUse):
            return [self._tool_use(event)]
        if isinstance(event, ToolResult):
            return [self._tool_result(event)]
        if isinstance(event, ToolSummary):
            return [self._summary(event)]
        if isinstance(event, ApprovalRequested):
            block = self._new("approval", event.ts, request=event, tool_id=event.tool_id)
            self._approvals[event.request_id] = block
            return [block.key, HEAD]
        if isinstance(event, ApprovalResolved):
            return self._resolved(event)
        if isinstance(event, ErrorEvent):
            return [self._new("error", event.ts, error=event.error).key]
        if isinstance(event, Notice):
            return [self._new("notice", event.ts, notice=event).key]
        return self._fact(event)

    def _fact(self, event: HarnessEvent) -> list[str]:
        if isinstance(event, RunStarted):
            self.started = event
        elif isinstance(event, SessionStarted):
            self.session = event
        elif isinstance(event, ContextUsage):
            self.usage = event.usage
            self.context_window = event.context_window or self.context_window
        elif isinstance(event, FilesChanged):
            self.files = event.files
            return [CHANGES]
        elif isinstance(event, Done):
            self.done = event.result
            return [HEAD, RESULT]
        elif isinstance(event, ProviderRaw):
            self.raw_count += 1
            return [RESULT]
        return [HEAD]

    def _new(self, kind: Any, ts: float, **fields: Any) -> Block:
        block = Block(key=f"b{len(self.blocks)}", kind=kind, ts=ts, **fields)
        self.blocks.append(block)
        return block

    def _delta(self, event: TextDelta | ReasoningDelta) -> str:
        kind = "text" if isinstance(event, TextDelta) else "reasoning"
        last = self.blocks[-1] if self.blocks else None
        if last is None or last.kind != kind or last.item_id != event.item_id:
            last = self._new(kind, event.ts, item_id=event.item_id)
        last.parts.append(event.text)
        return last.key

    def _tool_use(self, event: ToolUse) -> str:
        block = self._tools.get(event.tool_id)
        if block is None:
            block = self._new("tool", event.ts, tool_id=event.tool_id)
            self._tools[event.tool_id] = block
        block.name, block.use, block.input = event.name, event.display, event.input
        return block.key

    def _tool_result(self, event: ToolResult) -> str:
        block = self._tools.get(event.tool_id)
        if block is None:  # a result without its start (a log cut at the front): shown alone
            block = self._new("tool", event.ts, tool_id=event.tool_id)
            self._tools[event.tool_id] = block
        block.name = block.name or event.name
        block.result, block.output, block.is_error, block.ended = event.display, event.output, event.is_error, event.ts
        return block.key

    def _summary(self, event: ToolSummary) -> str:
        block = self._tools.get(event.tool_id) if event.tool_id is not None else None
        if block is None:
            return self._new("summary", event.ts, name=event.kind, parts=[event.text]).key
        block.notes.append(event.text)
        return block.key

    def _resolved(self, event: ApprovalResolved) -> list[str]:
        block = self._approvals.get(event.request_id)
        if block is None:
            return [HEAD]
        block.resolved = event
        return [block.key, HEAD]
