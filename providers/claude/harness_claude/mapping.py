"""Claude Code stream-json output lines → `HarnessEvent`s, and the turn's outcome.

Layer: provider (pure mapping): no I/O, no clocks (durations come from the lines' own timestamps), never relies on
key order. `ClaudeMapper.feed(msg)` → events, `outcome` once the `result` line is fed; tool results are `results`'.
Knows nothing of processes, stdin, the runner or time. Tested against recorded real transcripts (tests/transcripts/).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from harness_core import (
    ApprovalRequested,
    ContextUsage,
    HarnessError,
    HarnessEvent,
    HarnessResult,
    McpServer,
    Notice,
    ProviderRaw,
    ReasoningDelta,
    RunStatus,
    SessionStarted,
    TextDelta,
    ToolResult,
    ToolStatus,
    ToolSummary,
    ToolUse,
    Usage,
)
from harness_core.provider import failed_server_next_step, fast_text_delta

from harness_claude._json import count, obj, string, timestamp
from harness_claude.changes import file_display
from harness_claude.display import summarize, tool_display
from harness_claude.outcome import Limits, TurnEnd, classify_api_error, total_cost, turn_end
from harness_claude.results import OpenTool, tool_result

__all__ = ["ClaudeMapper", "approval_request"]

_IGNORED_SYSTEM = frozenset({"status", "thinking_tokens", "hook_started", "hook_response", "ui_invalidate"})
_IGNORED_STREAM = frozenset({"message_stop", "content_block_stop"})
_FAILED_SERVER = {"failed": "did not start", "needs-auth": "needs authentication"}
"""The `mcp_servers` statuses of Claude Code's init line (2.1.328) that leave a server's tools out of the run."""
_SERVER_NEXT_STEP = {"needs-auth": "give it its credentials (the server's `env` or `headers`) or sign in to it in "
                     "Claude Code"}  # "failed": `failed_server_next_step`, which knows a command from a URL
_SILENT = frozenset(
    {"control_request", "control_response", "control_cancel_request", "keep_alive", "command_lifecycle"}
)

@dataclass
class _Block:
    """One streamed content block: only how much was streamed, so the complete block that follows adds just the
    rest (keeping the text itself would hold every long message twice; appending to a string would be quadratic)."""

    kind: str
    streamed: int = 0
    consumed: bool = False


def approval_request(request_id: str, request: dict[str, Any], cwd: str | None,
                     current: dict[str, str | None] | None = None) -> ApprovalRequested:
    """A `can_use_tool` control request as an `approval_requested` event (`current`: see `input_changes`)."""
    name = string(request.get("tool_name"), "tool")
    tool_input = obj(request.get("input"))
    reason = request.get("decision_reason") or request.get("description")
    tool_id = request.get("tool_use_id")
    return ApprovalRequested(
        request_id=request_id,
        tool_id=tool_id if isinstance(tool_id, str) else None,
        display=file_display(name, tool_input, cwd, current=current),
        reason=reason if isinstance(reason, str) else None,
    )


class ClaudeMapper:
    """Feed it stdout lines (parsed) in order; it returns the events each one stands for.

    Set `interrupt_sent` once the provider has asked the CLI to stop the turn: an aborted `result` is then
    an `interrupted` outcome rather than a failure. Control-protocol lines (`control_request`, ...) map to no
    event: the provider answers them. Each model message's final usage (its `message_delta`) is a non-cumulative
    `context_usage` of the turn so far, so the runner can enforce `max_output_tokens` while the turn runs.
    `limits` and `cost_before` go to `turn_end` (native budget stops; the process's cost before this turn).
    """

    def __init__(
        self, cwd: str | None = None, *, resumed: bool = False, limits: Limits | None = None, cost_before: float = 0.0,
        servers: Iterable[McpServer] = (),
    ) -> None:
        self.cwd = cwd
        self.servers = {server.name: server for server in servers}  # the run's own: what a failed one's advice says
        self.resumed = resumed
        self.limits = limits
        self.cost_before = cost_before
        self.total_cost: float | None = None
        """`total_cost_usd` of the last `result` line: what the process has cost so far."""
        self._messages: dict[str, tuple[int, int, int]] = {}
        self.interrupt_sent = False
        self.session_id: str | None = None
        self.model: str | None = None
        self._session_announced = False
        self._blocks: dict[tuple[str, int], _Block] = {}
        self._tools: dict[str, OpenTool] = {}
        self._resulted: set[str] = set()
        self._servers_failed: set[str] = set()
        self._block_count: dict[str, int] = {}
        self._stalled = False
        self._text: list[str] = []
        self._end: TurnEnd | None = None
        self._hot: tuple[Any, Any, _Block, str | None] | None = None
        """The last text block streamed into: (raw `api_message_id`, raw index, its `_Block`, its item id)."""

    @property
    def streamed_text(self) -> str:
        """All assistant text seen so far (the final text when no `result` arrives)."""
        return "".join(self._text)

    @property
    def finished(self) -> bool:
        """A `result` line has been fed: the turn is over."""
        return self._end is not None

    @property
    def result(self) -> HarnessResult | None:
        """The last `result` line's `HarnessResult` (a failed one carries its error's info), or None."""
        return self._end.result if self._end is not None else None

    @property
    def outcome(self) -> HarnessResult | HarnessError | None:
        """What the turn ends with, once `finished`: the `HarnessError` of a failed turn (the provider raises
        it), else the `HarnessResult`. None before the `result` line."""
        if self._end is None:
            return None
        return self._end.error or self._end.result

    def interrupted_result(self) -> HarnessResult:
        """The result of a turn we stopped that ended without a `result` line (the CLI exited, or the
        interrupt grace expired): interrupted, with the text streamed so far."""
        return HarnessResult(status=RunStatus.INTERRUPTED, final_text=self.streamed_text, session_id=self.session_id)

    def text_delta(self, msg: dict[str, Any]) -> TextDelta | None:
        """The hot path, tried before `feed`: the `text_delta` event of the main agent's streamed text, mapped
        exactly as `feed` maps it (no list, no generic walk); None for any other line (then `feed` it)."""
        event = msg.get("event")
        if msg.get("type") != "stream_event" or event.__class__ is not dict:
            return None
        delta = event.get("delta")
        if event.get("type") != "content_block_delta" or delta.__class__ is not dict:
            return None
        text = delta.get("text")
        parent = msg.get("parent_tool_use_id")
        if (delta.get("type") != "text_delta" or text.__class__ is not str or not text
                or (parent.__class__ is str and parent)):
            return None
        sid = msg.get("session_id")
        if sid.__class__ is str and sid:
            self.session_id = sid
        mid, index, hot = msg.get("api_message_id"), event.get("index"), self._hot
        if hot is None or hot[1] != index or hot[0] != mid or index.__class__ is not int:
            hot = self._hot = self._text_block(mid, index)
        hot[2].streamed += len(text)
        self._text.append(text)
        return fast_text_delta(text, hot[3])  # a str, and an item id (str) or None

    def _text_block(self, mid: Any, index: Any) -> tuple[Any, Any, _Block, str | None]:
        key = (mid if isinstance(mid, str) else "", index if isinstance(index, int) else -1)
        item = f"{key[0]}:{key[1]}" if key[0] else None
        return mid, index, self._blocks.setdefault(key, _Block("text")), item

    def feed(self, msg: dict[str, Any]) -> list[HarnessEvent]:
        """The events one stdout line stands for (often none). A line `text_delta` maps may be fed instead."""
        kind = msg.get("type")
        sid = msg.get("session_id")
        if sid.__class__ is str and sid:
            self.session_id = sid
        if kind == "stream_event":
            parent = msg.get("parent_tool_use_id")
            if parent.__class__ is str and parent:
                return self._subagent(parent, kind, msg)
            return self._stream_event(msg)
        if kind == "assistant":
            parent = msg.get("parent_tool_use_id")
            if parent.__class__ is str and parent:
                return self._subagent(parent, kind, msg)
            return self._assistant(msg)
        if kind == "user":
            return self._user(msg)
        if kind == "system":
            return self._system(msg)
        if kind == "result":
            return self._result(msg)
        if kind in _SILENT:
            return []
        return [ProviderRaw(method=str(kind), payload=msg)]

    def _subagent(self, parent: str, kind: str, msg: dict[str, Any]) -> list[HarnessEvent]:
        """A sub-agent's (Task tool's) own messages: its text is progress of the parent tool, shown as a
        `tool_summary` under it, never part of the main answer; its tool calls stay tool events."""
        kept = len(self._text)
        events = self._stream_event(msg) if kind == "stream_event" else self._assistant(msg)
        del self._text[kept:]
        return [
            ToolSummary(tool_id=parent, kind="note", text=event.text)
            if isinstance(event, (TextDelta, ReasoningDelta))
            else event
            for event in events
        ]

    # --- system -----------------------------------------------------------------------------------

    def _system(self, msg: dict[str, Any]) -> list[HarnessEvent]:
        sub = msg.get("subtype")
        if sub == "init":
            model = msg.get("model")
            self.model = model if isinstance(model, str) else None
            failed = self._failed_servers(msg.get("mcp_servers"))
            if self._session_announced or self.session_id is None:
                return failed
            self._session_announced = True
            return [SessionStarted(session_id=self.session_id, resumed=self.resumed, model=self.model), *failed]
        if sub == "api_retry":  # Claude Code tries again: a warning, not (yet) an error
            status = msg.get("error_status") if isinstance(msg.get("error_status"), int) else None
            err = classify_api_error(status, str(msg.get("error") or ""), retrying=True)
            attempt, most = msg.get("attempt"), msg.get("max_retries")
            return [Notice(code="retrying", message=f"{err.message} (attempt {attempt} of {most})",
                           details={**err.details, "error_code": err.code, "attempt": attempt, "max_retries": most,
                                    "retry_delay_ms": msg.get("retry_delay_ms")})]
        if sub == "permission_denied":
            tool_id = msg.get("tool_use_id")
            if not isinstance(tool_id, str) or tool_id in self._resulted:
                return []
            return [self._declined(tool_id, msg.get("tool_name"), str(msg.get("message") or ""))]
        if sub in _IGNORED_SYSTEM:
            return []
        return [ProviderRaw(method=f"system/{sub}", payload=msg)]

    def _failed_servers(self, servers: Any) -> list[HarnessEvent]:
        """A warning for each MCP server the init line says did not start (`status` `failed`, `needs-auth`):
        Claude Code carries on without its tools, so the run would otherwise succeed without a word. Once each."""
        notices: list[HarnessEvent] = []
        for server in servers if isinstance(servers, list) else ():
            entry = obj(server)
            name, status = entry.get("name"), entry.get("status")
            if not isinstance(name, str) or status not in _FAILED_SERVER or name in self._servers_failed:
                continue
            self._servers_failed.add(name)
            step = _SERVER_NEXT_STEP.get(status) or failed_server_next_step(self.servers.get(name))
            said = f"MCP server {name!r} {_FAILED_SERVER[status]}, so the agent runs without its tools; {step}"
            notices.append(Notice(code="mcp_server_failed", message=said, details={"server": name, "status": status}))
        return notices

    def _declined(self, tool_id: str, name: Any, message: str) -> ToolResult:
        self._resulted.add(tool_id)
        tool = self._tools.get(tool_id)
        tool_name = tool.name if tool else (name if isinstance(name, str) else "tool")
        display = tool_display(tool_name, tool.input if tool else None, self.cwd, status=ToolStatus.DECLINED)
        display = display.model_copy(update={"summary": summarize(message)})
        return ToolResult(
            tool_id=tool_id, name=tool_name, display=display, output=message or None, is_error=True
        )

    # --- streaming --------------------------------------------------------------------------------

    def _stream_event(self, msg: dict[str, Any]) -> list[HarnessEvent]:
        event = obj(msg.get("event"))
        etype = event.get("type")
        mid = msg.get("api_message_id")
        index = event.get("index")
        key = (mid if isinstance(mid, str) else "", index if isinstance(index, int) else -1)
        if etype == "content_block_start":
            block = obj(event.get("content_block"))
            self._blocks[key] = _Block(kind=str(block.get("type")))
            self._hot = None  # its key's block is a new one
            return []
        if etype == "content_block_delta":
            delta = obj(event.get("delta"))
            dtype = delta.get("type")
            item = f"{key[0]}:{key[1]}" if key[0] else None
            if dtype == "text_delta" and isinstance(delta.get("text"), str) and delta["text"]:
                self._blocks.setdefault(key, _Block("text")).streamed += len(delta["text"])
                self._text.append(delta["text"])
                return [TextDelta(text=delta["text"], item_id=item)]
            if dtype == "thinking_delta" and isinstance(delta.get("thinking"), str) and delta["thinking"]:
                self._blocks.setdefault(key, _Block("thinking")).streamed += len(delta["thinking"])
                return [ReasoningDelta(text=delta["thinking"], item_id=item)]
            return []
        if etype in ("message_start", "message_delta"):
            return self._message_usage(key[0], etype, event)
        if etype == "message_stop" and msg.get("abandoned_blocks") and self.interrupt_sent:
            return []  # we stopped the stream: an interrupt, not a stall (2.1.328 abandons the open blocks)
        if etype == "message_stop" and msg.get("abandoned_blocks"):
            self._stalled = True  # a warning now; the result says idle_timeout if the turn fails after all
            return [Notice(code="stream_stalled", message=(
                "the model API stream stalled past CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS; Claude Code abandoned it and "
                "retries without streaming (tune with -o stream_idle_timeout_ms)"))]
        if etype in _IGNORED_STREAM:
            return []
        return [ProviderRaw(method=f"stream_event/{etype}", payload=msg)]

    def _message_usage(self, mid: str, etype: str, event: dict[str, Any]) -> list[HarnessEvent]:
        """Input tokens from `message_start`, output tokens from `message_delta`: the turn's usage so far."""
        raw = obj(obj(event.get("message")).get("usage") if etype == "message_start" else event.get("usage"))
        fresh, cached, output = self._messages.get(mid, (0, 0, 0))
        if etype == "message_start":
            cached = count(raw.get("cache_read_input_tokens"))
            fresh = count(raw.get("input_tokens")) + count(raw.get("cache_creation_input_tokens")) + cached
            self._messages[mid] = (fresh, cached, output)
            return []
        self._messages[mid] = (fresh, cached, count(raw.get("output_tokens")))
        so_far = [sum(m[i] for m in self._messages.values()) for i in range(3)]
        usage = Usage(input_tokens=so_far[0], cached_input_tokens=so_far[1], output_tokens=so_far[2])
        return [ContextUsage(usage=usage)]

    def _unstreamed(self, mid: str, index: int, kind: str, full: str) -> str:
        """The part of a complete block not already sent as deltas (consumes the matching stream)."""
        exact = self._blocks.get((mid, index))
        candidates = [exact] if exact is not None and exact.kind == kind else []
        candidates += [self._blocks[k] for k in sorted(k for k in self._blocks if k[0] == mid)]
        for block in candidates:
            if block.kind == kind and not block.consumed:
                block.consumed = True
                return full[block.streamed :]
        return full

    # --- complete messages ------------------------------------------------------------------------

    def _assistant(self, msg: dict[str, Any]) -> list[HarnessEvent]:
        message = obj(msg.get("message"))
        if msg.get("is_api_error_message") or message.get("model") == "<synthetic>":
            return []  # the CLI's own error text; the `result` line carries the classified failure
        mid = string(message.get("id"), "")
        events: list[HarnessEvent] = []
        for block in message.get("content") or []:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            index = self._block_count.get(mid, 0)
            self._block_count[mid] = index + 1
            item = f"{mid}:{index}" if mid else None
            if btype == "text" and isinstance(block.get("text"), str):
                rest = self._unstreamed(mid, index, "text", block["text"])
                if rest:
                    self._text.append(rest)
                    events.append(TextDelta(text=rest, item_id=item))
            elif btype == "thinking" and isinstance(block.get("thinking"), str):
                rest = self._unstreamed(mid, index, "thinking", block["thinking"])
                if rest:
                    events.append(ReasoningDelta(text=rest, item_id=item))
            elif btype == "tool_use" and isinstance(block.get("id"), str):
                name = string(block.get("name"), "tool")
                tool_input = obj(block.get("input"))
                self._tools[block["id"]] = OpenTool(name, tool_input, timestamp(msg.get("timestamp")))
                events.append(
                    ToolUse(
                        tool_id=block["id"],
                        name=name,
                        display=file_display(name, tool_input, self.cwd),
                        input=tool_input,
                    )
                )
            elif btype not in ("redacted_thinking",):
                events.append(ProviderRaw(method=f"assistant/{btype}", payload=block))
        return events

    def _user(self, msg: dict[str, Any]) -> list[HarnessEvent]:
        message = obj(msg.get("message"))
        content = message.get("content")
        if not isinstance(content, list):
            return []  # an echoed prompt
        meta = {m.get("id"): m for m in msg.get("tool_result_meta") or [] if isinstance(m, dict)}
        events: list[HarnessEvent] = []
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            tool_id = block.get("tool_use_id")
            if not isinstance(tool_id, str) or tool_id in self._resulted:
                continue
            self._resulted.add(tool_id)
            events.append(tool_result(tool_id, self._tools.get(tool_id), block, meta.get(tool_id) or {}, msg, self.cwd))
        return events

    # --- end of turn ------------------------------------------------------------------------------

    def _result(self, msg: dict[str, Any]) -> list[HarnessEvent]:
        self.total_cost = total_cost(msg)
        self._end = end = turn_end(
            msg,
            session_id=self.session_id,
            interrupted=self.interrupt_sent,
            stalled=self._stalled,
            streamed_text=self.streamed_text,
            limits=self.limits,
            cost_before=self.cost_before,
        )
        # Also for a native budget stop (the provider raises its `budget_exceeded`): the runner's result keeps this
        # usage; its own budget check may then interrupt, which `Turn` no longer sends once the turn has ended.
        return [ContextUsage(usage=end.result.usage, context_window=end.context_window)]
