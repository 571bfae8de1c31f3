"""ACP `session/update` notifications and stop reasons → `HarnessEvent`s and a result (pure).

Layer: provider (pure mapping, no I/O; golden-tested on recorded real transcripts). Knows the ACP v1 session updates
and `StopReason`; knows nothing of processes, JSON-RPC, approvals or the runner. One `AcpMapper` per prompt turn.
How tool calls are merged and held, and the final text: providers/acp/README.md.
"""

from __future__ import annotations

import re
from typing import Any

from harness_core import (
    CLI_WARNING,
    ContextUsage,
    HarnessEvent,
    HarnessToolDetails,
    Notice,
    ProviderRaw,
    ReasoningDelta,
    TextDelta,
    ToolKind,
    ToolResult,
    ToolSummary,
    ToolUse,
    Usage,
)
from harness_core.provider import bounded_head, fast_text_delta

from harness_acp.display import MCP_CALL, mcp_tool, output_text, tool_details

__all__ = ["QUIET_UPDATES", "STOP_REASONS", "AcpMapper"]

STOP_REASONS: dict[str, tuple[str, str | None]] = {
    "end_turn": ("success", None),
    "cancelled": ("interrupted", None),
    "max_tokens": ("failed", "the model's token limit was reached, by the prompt or by the answer (stop reason "
                             "max_tokens): shorten the prompt (a long text can go in a file in the workspace, for "
                             "the agent to read), or ask for a shorter answer"),
    "max_turn_requests": ("failed", "the agent reached its limit of model requests for one prompt "
                                    "(stop reason max_turn_requests)"),
    "refusal": ("failed", "the agent refused to continue (stop reason refusal); the prompt is not kept in the "
                          "session's history"),
}
"""ACP `StopReason` → (Harness status, failure message)."""

QUIET_UPDATES = frozenset({"available_commands_update", "current_mode_update", "config_option_update",
                           "session_info_update", "user_message_chunk"})
"""Updates that are the session's bookkeeping (commands offered, mode, config, title, the history `session/load`
replays): not the turn's work, so no event (an agent sends them whenever it likes, before or during a prompt)."""


class AcpMapper:
    """The state of one prompt turn's updates: tool calls by id, the final text, the usage seen."""

    def __init__(self, cwd: str | None, *, cost_before: float | None = None,
                 warnings: re.Pattern[str] | None = None, servers: tuple[str, ...] = ()) -> None:
        self.cwd = cwd
        self.servers = servers  # the run's MCP server names, to read `mcp__SERVER__TOOL` names by
        self.warnings = warnings  # message chunks that are the agent's own warnings (a profile's `warning_chunks`)
        self.cost_before = cost_before  # the session's cumulative cost when the turn began (usage_update.cost)
        self.calls: dict[str, dict[str, Any]] = {}
        self.held: dict[str, None] = {}  # calls seen blank, whose `tool_use` waits for their input (in order)
        self.finished_calls: set[str] = set()
        self.declined: set[str] = set()  # tool calls whose permission the operation refused
        self.segments: list[list[str]] = [[]]
        self.used: int | None = None  # tokens in context, as last reported (`usage_update.used`)
        self.size: int | None = None
        self.cost_usd: float | None = None
        self.chunk_usage: dict[str, int] = {}  # tokens the agent reported on its message chunks (Qwen Code)

    # -- results --------------------------------------------------------------------------------------------

    @property
    def final_text(self) -> str:
        for segment in reversed(self.segments):
            text = "".join(segment)
            if text.strip():
                return text
        return ""

    @property
    def usage(self) -> Usage:
        return self.result_usage(None)

    def turn_cost(self) -> float | None:
        """What this turn cost: the session's cumulative cost now, less what it was when the turn began."""
        if self.cost_usd is None:
            return None
        return max(0.0, self.cost_usd - (self.cost_before or 0.0))

    def result_usage(self, answer: Any) -> Usage:
        """The turn's usage from the prompt's answer: `usage` (ACP's per-turn token counts, where the agent sends
        them) or `_meta.quota.token_count` (Gemini CLI's), and the turn's cost from `usage_update`s."""
        found: dict[str, Any] = {}
        if isinstance(answer, dict):
            usage = answer.get("usage")
            meta = answer.get("_meta")
            quota = meta.get("quota") if isinstance(meta, dict) else None
            counts = quota.get("token_count") if isinstance(quota, dict) else None
            if isinstance(usage, dict):
                found = _acp_usage(usage)
            elif isinstance(counts, dict):
                found = {"input_tokens": counts.get("input_tokens"), "output_tokens": counts.get("output_tokens")}
        clean = {k: v for k, v in found.items() if type(v) is int and v >= 0} or dict(self.chunk_usage)
        return Usage(**clean, cost_usd=self.turn_cost())

    def close_open(self, why: str) -> list[HarnessEvent]:
        """A `tool_result` for every call still open when the turn ended (agents leave a cancelled or refused call
        without a final update): `declined` when the operation refused it, else `failed`."""
        events: list[HarnessEvent] = self._release_held()
        for call_id in self.open_calls():
            self.finished_calls.add(call_id)
            call = self.calls[call_id]
            declined = call_id in self.declined
            display = tool_details({**call, "status": "failed"}, self.cwd, declined=declined)
            events.append(ToolResult(tool_id=call_id, name=_name(call), display=display, output=why, is_error=True))
        return events

    def open_calls(self) -> list[str]:
        """Tool calls announced and not finished (a cancelled turn leaves some)."""
        return [cid for cid in self.calls if cid not in self.finished_calls]

    def awaited_calls(self) -> list[str]:
        """Open calls whose last update may still come: not those whose permission the operation refused (an agent
        need not report a call it never ran; closing one says `declined` either way)."""
        return [cid for cid in self.open_calls() if cid not in self.declined]

    # -- feeding --------------------------------------------------------------------------------------------

    def text_delta(self, update: dict[str, Any]) -> TextDelta | None:
        """The hot path: an `agent_message_chunk` with text content → its event (None: use `feed`)."""
        content = update.get("content")
        if content.__class__ is dict and content.get("type") == "text" and not self.held:
            text = content.get("text")
            if text.__class__ is str and text:
                if self.warnings is not None and self.warnings.fullmatch(text):
                    return None  # `feed` makes it a notice
                self.segments[-1].append(text)
                return fast_text_delta(text, None)
        return None

    def feed(self, update: Any) -> list[HarnessEvent]:
        """The events of one `session/update`'s `update` object."""
        if not isinstance(update, dict):
            return [*self._release_held(), ProviderRaw(method="session/update", payload=update)]
        if self.held and not self._keeps_held(update):
            return [*self._release_held(), *self._feed(update)]
        return self._feed(update)

    def asked(self, call: dict[str, Any]) -> list[HarnessEvent]:
        """A permission request's `toolCall`: announce a call never seen (as a pending `tool_call`), or release a
        held one with what the request says of it (its input)."""
        call_id = str(call.get("toolCallId") or "")
        if not call_id:
            return []
        if call_id not in self.calls:
            return [*self.feed({**call, "sessionUpdate": "tool_call", "status": "pending"}), *self._release_held()]
        if call_id in self.held:
            self._find_mcp(_merge(self.calls[call_id], {k: v for k, v in call.items() if k != "status"}))
            return self._release_held()
        return []

    def _keeps_held(self, update: dict[str, Any]) -> bool:
        """Whether an update leaves held calls held: the session's bookkeeping, usage (Qwen Code's comes on an empty
        message chunk), or a held call's own."""
        kind = update.get("sessionUpdate")
        if kind in QUIET_UPDATES or kind == "usage_update":
            return True
        if kind == "agent_message_chunk":
            content = update.get("content")
            return isinstance(content, dict) and content.get("type") == "text" and not content.get("text")
        return kind in ("tool_call", "tool_call_update") and str(update.get("toolCallId") or "") in self.held

    def _release_held(self) -> list[HarnessEvent]:
        """The `tool_use` of every held call, in the order they were seen."""
        if not self.held:
            return []
        held, self.held = list(self.held), {}
        return [self._use(call_id, self.calls[call_id]) for call_id in held]

    def _feed(self, update: dict[str, Any]) -> list[HarnessEvent]:
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk":
            event = self.text_delta(update)
            return [event] if event is not None else self._other_content(update)
        if kind == "agent_thought_chunk":
            content = update.get("content")
            text = content.get("text") if isinstance(content, dict) else None
            if isinstance(text, str) and text.startswith("****\n"):  # a "**subject**" heading with no subject
                text = text[5:]
            return [ReasoningDelta(text=text)] if isinstance(text, str) and text else []
        if kind == "tool_call":
            return self._tool(update, new=True)
        if kind == "tool_call_update":
            return self._tool(update, new=False)
        if kind == "plan":
            return self._plan(update)
        if kind == "usage_update":
            return self._usage(update)
        if kind in QUIET_UPDATES:  # not the turn's work, and not in step with it (a replay could not order them)
            return []
        return [ProviderRaw(method=f"session/update:{kind}", payload=update)]

    def decline(self, tool_call_id: str) -> None:
        """The operation refused this call's permission: its result shows `declined`."""
        self.declined.add(tool_call_id)

    def _other_content(self, update: dict[str, Any]) -> list[HarnessEvent]:
        meta = update.get("_meta")
        usage = meta.get("usage") if isinstance(meta, dict) else None
        if isinstance(usage, dict):  # Qwen Code: each model response's tokens, on an empty chunk after it
            for key, value in _acp_usage(usage).items():
                self.chunk_usage[key] = self.chunk_usage.get(key, 0) + value
        content = update.get("content")
        if isinstance(content, dict) and content.get("type") == "text":
            text = content.get("text")
            if isinstance(text, str) and text and self.warnings is not None and self.warnings.fullmatch(text):
                return [Notice(level="warning", code=CLI_WARNING, message=text)]
            return []  # an empty chunk
        return [ProviderRaw(method="session/update:agent_message_chunk", payload=update)]

    def _tool(self, update: dict[str, Any], *, new: bool) -> list[HarnessEvent]:
        call_id = str(update.get("toolCallId") or "")
        if not call_id:
            return [ProviderRaw(method=f"session/update:{update.get('sessionUpdate')}", payload=update)]
        events: list[HarnessEvent] = []
        known = self.calls.get(call_id)
        if known is None:
            known = self.calls[call_id] = {}
            merged = _merge(known, update)
            self._find_mcp(merged)
            if _blank(merged):
                self.held[call_id] = None
            else:
                events.append(self._use(call_id, merged))
            if self.segments[-1]:
                self.segments.append([])
        else:  # (a second tool_call for the same id: an agent restating it, merged, not announced twice)
            merged = _merge(known, update)
            self._find_mcp(merged)
            if call_id in self.held and not _blank(merged):
                del self.held[call_id]
                events.append(self._use(call_id, merged))
        if merged.get("status") in ("completed", "failed") and call_id not in self.finished_calls:
            if call_id in self.held:
                del self.held[call_id]
                events.append(self._use(call_id, merged))
            self.finished_calls.add(call_id)
            events.append(self._result(call_id, merged))
        return events

    def _find_mcp(self, call: dict[str, Any]) -> None:
        """Keep the MCP tool the call is, with its arguments once seen (Gemini CLI's are in the content its
        result replaces), in the call's state (`display.MCP_CALL`)."""
        known = call.get(MCP_CALL)
        if known is not None and known[2] is not None:
            return
        found = mcp_tool(call, self.servers)
        if found is not None:
            call[MCP_CALL] = found

    def tool_display(self, call_id: str, call: dict[str, Any]) -> HarnessToolDetails:
        return tool_details(call, self.cwd, declined=call_id in self.declined)

    def _use(self, call_id: str, call: dict[str, Any]) -> ToolUse:
        display = tool_details({**call, "status": "in_progress"}, self.cwd)
        return ToolUse(tool_id=call_id, name=_name(call), display=display, input=_input(call))

    def _result(self, call_id: str, call: dict[str, Any]) -> ToolResult:
        display = self.tool_display(call_id, call)
        failed = call.get("status") == "failed" or call_id in self.declined
        return ToolResult(tool_id=call_id, name=_name(call), display=display, output=bounded_head(output_text(call)),
                          is_error=failed)

    def _plan(self, update: dict[str, Any]) -> list[HarnessEvent]:
        entries = update.get("entries")
        if not isinstance(entries, list):
            return [ProviderRaw(method="session/update:plan", payload=update)]
        marks = {"completed": "[x]", "in_progress": "[~]"}
        lines = [f"{marks.get(str(e.get('status')), '[ ]')} {e.get('content', '')}"
                 for e in entries if isinstance(e, dict)]
        return [ToolSummary(kind="plan", text="\n".join(lines))] if lines else []

    def _usage(self, update: dict[str, Any]) -> list[HarnessEvent]:
        used, size = update.get("used"), update.get("size")
        self.used = used if type(used) is int else self.used
        self.size = size if type(size) is int else self.size
        cost = update.get("cost")
        events: list[HarnessEvent] = []
        if isinstance(cost, dict) and isinstance(cost.get("amount"), (int, float)):
            if str(cost.get("currency") or "USD").upper() == "USD":
                self.cost_usd = float(cost["amount"])
            else:
                events.append(Notice(level="info", code="cost_not_usd",
                                     message=f"the agent reports its cost in {cost.get('currency')}, not USD",
                                     details={"cost": cost}))
        if self.used is None:
            return events
        usage = Usage(input_tokens=self.used, cost_usd=self.cost_usd)
        events.append(ContextUsage(usage=usage, cumulative=True, context_window=self.size))
        return events


def _acp_usage(usage: dict[str, Any]) -> dict[str, Any]:
    """ACP's (unstable) `Usage` object → `Usage` fields (ints only; what is missing stays out). Harness's
    `input_tokens` counts cached input too: where the agent's `inputTokens` leaves the cache out (its
    `totalTokens` is the sum of all the parts, as claude-agent-acp's is), the cache reads and writes are added."""
    def count(key: str) -> int:
        value = usage.get(key)
        return value if type(value) is int and value >= 0 else 0

    found = {"input_tokens": usage.get("inputTokens"), "output_tokens": usage.get("outputTokens"),
             "cached_input_tokens": usage.get("cachedReadTokens"), "reasoning_tokens": usage.get("thoughtTokens")}
    clean = {k: v for k, v in found.items() if type(v) is int and v >= 0}
    cache = count("cachedReadTokens") + count("cachedWriteTokens")
    parts = count("inputTokens") + count("outputTokens") + cache + count("thoughtTokens")
    if cache and "input_tokens" in clean and count("totalTokens") == parts:
        clean["input_tokens"] += cache
    return clean


def _is_diff(item: Any) -> bool:
    return isinstance(item, dict) and item.get("type") == "diff"


def _merge(known: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """An update's fields replace the call's (ACP: a field sent replaces it, content included); diffs already
    seen are kept when new content has none (an agent's final update often carries only its output text)."""
    for key, value in update.items():
        if key == "sessionUpdate" or value is None:
            continue
        if key == "content" and isinstance(value, list) and not any(_is_diff(v) for v in value):
            value = [*(c for c in known.get("content") or () if _is_diff(c)), *value]
        known[key] = value
    return known


def _blank(call: dict[str, Any]) -> bool:
    """A call announced before its input: `pending`, an empty `rawInput`, no content and no locations."""
    return (call.get("status") == "pending" and call.get("rawInput") == {} and not call.get("content")
            and not call.get("locations"))


def _name(call: dict[str, Any]) -> str:
    found = call.get(MCP_CALL)
    if found is not None:
        return f"mcp__{found[0]}__{found[1]}"
    return str(call.get("kind") or "other")


def _input(call: dict[str, Any]) -> dict[str, Any] | None:
    found = call.get(MCP_CALL)
    if found is not None and found[2] is not None:
        return dict(found[2])
    raw = call.get("rawInput")
    return dict(raw) if isinstance(raw, dict) else None


def unknown_display(title: str) -> HarnessToolDetails:
    """The display of a permission request for a tool call the mapper never saw."""
    return HarnessToolDetails(kind=ToolKind.UNKNOWN, title=title or "Running tool")
