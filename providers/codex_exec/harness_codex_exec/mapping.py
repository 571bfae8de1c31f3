"""Pure mapping from `codex exec --json` lines to `HarnessEvent`s: `ExecMapping.feed(line)` → events, `outcome`.

Layer: provider (codex-exec), pure: no I/O, no clock, no processes. Knows the exec JSONL shapes (`thread.started`,
`turn.*`, `item.*`, `error`), Codex's error texts and the event model; knows nothing of transport. Errors,
retries and usage: providers/codex_exec/README.md.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from harness_codex_common import (
    CodexHints,
    Reconnects,
    classify_message,
    mcp_result_text,
    message_status,
    parse_reconnect,
)

from harness_core import (
    ContextUsage,
    ErrorEvent,
    HarnessError,
    HarnessEvent,
    HarnessResult,
    HarnessToolDetails,
    Notice,
    ProviderRaw,
    ReasoningDelta,
    RunStatus,
    SessionNotFoundError,
    SessionStarted,
    TextDelta,
    ToolKind,
    ToolResult,
    ToolStatus,
    ToolSummary,
    ToolUse,
    Usage,
)
from harness_core.provider import (
    bounded_head,
    bounded_tail,
    classify_command,
    file_change_display,
    mcp_call_text,
)

__all__ = ["ExecMapping", "classify_error", "parse_usage", "usage_since"]

_TOOL_ITEMS = {"command_execution", "file_change", "mcp_tool_call", "web_search"}
_CHANGE_KINDS = {"add": "add", "delete": "delete", "update": "modify"}
_STATUS = {
    "in_progress": ToolStatus.STARTED,
    "completed": ToolStatus.COMPLETED,
    "failed": ToolStatus.FAILED,
    "declined": ToolStatus.DECLINED,
}
_HINTS = CodexHints(
    auth="check the API key codex uses (`codex login`, or the env_key of your model provider) and try again",
    retry="wait a moment and retry",
    failure="run again, or check the model provider's status and `-o config.model=...`",
)
"""The wording the recorded goldens (`tests/transcripts/fail_*.events.json`) hold; Codex's own hints
(`harness_codex_common.HINTS`, as codex-appserver says them) replace it once those goldens are regenerated."""


def classify_error(message: str) -> HarnessError:
    """A codex error message as the Harness error it is (auth, rate limit, or other model failures), its
    message ending with what to do next."""
    return classify_message(message, hints=_HINTS)


def parse_usage(raw: Mapping[str, Any] | None) -> Usage:
    raw = raw or {}

    def num(key: str) -> int:
        value = raw.get(key)
        return value if isinstance(value, int) and value >= 0 else 0

    return Usage(
        input_tokens=num("input_tokens"),
        cached_input_tokens=num("cached_input_tokens"),
        output_tokens=num("output_tokens"),
        reasoning_tokens=num("reasoning_output_tokens"),
    )


def usage_since(total: Usage, previous: Usage) -> Usage | None:
    """`total - previous`, or None if any figure went down (the previous total was not this thread's)."""
    figures = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens")
    if any(getattr(total, f) < getattr(previous, f) for f in figures):
        return None
    return total - previous


_TRANSPORT_FALLBACK = "Falling back from WebSockets to HTTPS transport"
"""What 0.169.0 says (as an `error` line) when its WebSocket connection to the model API fails and it retries
over HTTPS."""

class ExecMapping:
    """Maps one `codex exec --json` run, line by line. Holds only what the lines themselves said."""

    def __init__(
        self,
        *,
        cwd: str | None = None,
        model: str | None = None,
        resume_session: str | None = None,
        previous_total: Usage | None = None,
        reconnects: Reconnects | None = None,
    ) -> None:
        self.cwd = cwd
        self.reconnects = reconnects if reconnects is not None else Reconnects()
        self.gave_up: HarnessError | None = None
        self.model = model
        self.resume_session = resume_session
        self.previous_total = previous_total
        self.session_id: str | None = None
        self.final_text = ""
        self.usage = Usage()
        self.usage_cumulative = False
        self.completed = False
        self.failure: HarnessError | None = None
        self._errors_seen: set[str] = set()
        self._started: set[str] = set()
        self._todo_text: dict[str, str] = {}

    @property
    def finished(self) -> bool:
        """Whether a terminal line (`turn.completed` or `turn.failed`) arrived."""
        return self.completed or self.failure is not None

    @property
    def outcome(self) -> HarnessResult | None:
        """The run's result once `finished` (success, or failed with the turn's error), else None."""
        if not self.finished:
            return None
        return HarnessResult(
            status=RunStatus.FAILED if self.failure is not None else RunStatus.SUCCESS,
            final_text=self.final_text,
            session_id=self.session_id,
            usage=self.usage,
            error=self.failure.to_info() if self.failure is not None else None,
        )

    def feed_all(self, messages: Iterable[dict[str, Any]]) -> list[HarnessEvent]:
        return [event for msg in messages for event in self.feed(msg)]

    def feed(self, msg: dict[str, Any]) -> list[HarnessEvent]:
        """The events for one `codex exec --json` line (a decoded JSON object)."""
        kind = msg.get("type")
        if kind == "thread.started" and isinstance(msg.get("thread_id"), str):
            return self._thread(msg["thread_id"])
        if kind == "turn.started":
            return []
        if kind == "turn.completed":
            self.completed = True
            return [self._usage(msg.get("usage"))]
        if kind == "error":
            # A stream error: fatal when `turn.failed` follows (with the same message), else a retry notice.
            message = str(msg.get("message") or "codex reported an error")
            if message.startswith(_TRANSPORT_FALLBACK):  # Codex says how it goes on: not an error of the run
                return [Notice(code="transport_fallback", level="info", message=message)]
            return self._error(message)
        if kind == "turn.failed":
            error = msg.get("error")
            message = str(error.get("message") if isinstance(error, Mapping) else error or "the turn failed")
            events = self._error(message)
            self.failure = self.gave_up or self._classify(message)
            return events
        item = msg.get("item")
        if kind in ("item.started", "item.updated", "item.completed") and isinstance(item, Mapping):
            return self._item(str(kind), item, msg)
        return [ProviderRaw(method=str(kind) if kind is not None else None, payload=dict(msg))]

    # --- pieces ----------------------------------------------------------------------------------------

    def _thread(self, thread_id: str) -> list[HarnessEvent]:
        self.session_id = thread_id
        resumed = self.resume_session is not None and thread_id == self.resume_session
        events: list[HarnessEvent] = [SessionStarted(session_id=thread_id, resumed=resumed, model=self.model)]
        if self.resume_session is not None and not resumed:
            # codex takes an id it cannot parse as a UUID for a thread *name*, and starts a new thread: the run
            # must not pretend to continue a session (the provider stops codex at once).
            self.previous_total = Usage()
            self.gave_up = self.failure = SessionNotFoundError(
                self.resume_session,
                f"codex took it for a thread name and started a new session {thread_id}; pass the session id "
                "exactly as a previous run reported it",
            )
            events.append(ErrorEvent(error=self.failure.to_info()))
        return events

    def _usage(self, raw: Any) -> ContextUsage:
        total = parse_usage(raw if isinstance(raw, Mapping) else None)
        per_run = usage_since(total, self.previous_total) if self.previous_total is not None else None
        self.usage_cumulative = per_run is None
        self.usage = total if per_run is None else per_run
        return ContextUsage(usage=self.usage, cumulative=self.usage_cumulative)

    def _classify(self, message: str) -> HarnessError:
        return self.reconnects.final(message_status(message), message) or classify_error(message)

    def _error(self, message: str, *, warning: bool = False) -> list[HarnessEvent]:
        retry = None if warning else parse_reconnect(message)
        if retry is not None:
            events: list[HarnessEvent] = [self.reconnects.notice(message, retry, message_status(message))]
            if self.reconnects.exhausted and self.gave_up is None:
                self.gave_up = self.failure = self.reconnects.give_up()
                events.append(ErrorEvent(error=self.gave_up.to_info()))
            return events
        if message in self._errors_seen:
            return []
        self._errors_seen.add(message)
        info = self._classify(message).to_info()
        if warning:
            info = info.model_copy(update={"details": {**info.details, "fatal": False}})
        return [ErrorEvent(error=info)]

    def _absolute(self, path: str | None) -> str | None:
        """A path from a command line, resolved against the cwd (as the app-server reports read paths)."""
        if path is None or os.path.isabs(path) or not self.cwd:
            return path
        return os.path.normpath(os.path.join(self.cwd, path))

    def _item(self, phase: str, item: Mapping[str, Any], msg: Mapping[str, Any]) -> list[HarnessEvent]:
        item_type = item.get("type")
        item_id = str(item.get("id", ""))
        if item_type == "agent_message":
            if phase != "item.completed":
                return []
            text = str(item.get("text") or "")
            self.final_text = text
            return [TextDelta(text=text, item_id=item_id)] if text else []
        if item_type == "reasoning":
            text = str(item.get("text") or "")
            return [ReasoningDelta(text=text, item_id=item_id)] if phase == "item.completed" and text else []
        if item_type == "todo_list":
            return self._todo(item_id, item.get("items"))
        if item_type == "error":
            if phase != "item.completed":
                return []
            return self._error(str(item.get("message") or "codex reported an error"), warning=True)
        if item_type in _TOOL_ITEMS and phase != "item.updated":
            return self._tool(phase, str(item_type), item_id, item)
        return [ProviderRaw(method=f"{phase}/{item_type}", payload=dict(msg))]

    def _todo(self, item_id: str, entries: Any) -> list[HarnessEvent]:
        lines = []
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, Mapping):
                mark = "x" if entry.get("completed") else " "
                lines.append(f"[{mark}] {entry.get('text', '')}")
        text = "\n".join(lines)
        if not text or self._todo_text.get(item_id) == text:
            return []
        self._todo_text[item_id] = text
        return [ToolSummary(tool_id=item_id, kind="todo", text=text)]

    def _tool(self, phase: str, item_type: str, item_id: str, item: Mapping[str, Any]) -> list[HarnessEvent]:
        status = _STATUS.get(str(item.get("status")), ToolStatus.COMPLETED)
        if phase == "item.started":
            status = ToolStatus.STARTED
        events: list[HarnessEvent] = []
        for tool_id, name, display, tool_input, output in self._describe(item_type, item_id, item, status):
            if phase == "item.started" or tool_id not in self._started:
                self._started.add(tool_id)
                started = display.model_copy(
                    update={"status": ToolStatus.STARTED, "exit_code": None, "summary": None}
                )
                events.append(ToolUse(tool_id=tool_id, name=name, display=started, input=tool_input))
            if phase == "item.completed":
                failed = status in (ToolStatus.FAILED, ToolStatus.DECLINED)
                is_error = failed or display.exit_code not in (None, 0)
                events.append(
                    ToolResult(tool_id=tool_id, name=name, display=display, output=output, is_error=is_error)
                )
        return events

    def _describe(
        self, item_type: str, item_id: str, item: Mapping[str, Any], status: ToolStatus
    ) -> Iterable[tuple[str, str, HarnessToolDetails, dict[str, Any] | None, str | None]]:
        if item_type == "command_execution":
            command = str(item.get("command") or "")
            action = classify_command(command)
            output = item.get("aggregated_output")
            output = output if isinstance(output, str) and output else None
            exit_code = item.get("exit_code")
            display = HarnessToolDetails(
                kind=action.kind,
                title=action.title,
                path=self._absolute(action.path),
                command=action.command,
                cwd=self.cwd,
                status=status,
                exit_code=exit_code if isinstance(exit_code, int) else None,
                summary=bounded_tail(output),
                raw={"command": command},
            )
            tool_input = {"command": action.command, "cwd": self.cwd}
            yield item_id, "shell", display, tool_input, bounded_head(output)
        elif item_type == "file_change":
            changes = [c for c in item.get("changes") or [] if isinstance(c, Mapping)]
            for index, change in enumerate(changes):
                change_kind = str(change.get("kind"))
                kind, title = file_change_display(change_kind)
                path = str(change.get("path", ""))
                tool_id = item_id if len(changes) == 1 else f"{item_id}#{index}"
                changed = {"path": path, "kind": _CHANGE_KINDS.get(change_kind, "modify")}  # no diff in exec's items
                display = HarnessToolDetails.model_validate(
                    {"kind": kind, "title": title, "path": path, "status": status, "raw": {"kind": change_kind},
                     "changes": [changed]})
                yield tool_id, "apply_patch", display, {"path": path, "kind": change_kind}, None
            if not changes:
                display = HarnessToolDetails(kind=ToolKind.EDIT, title="Editing files", status=status)
                yield item_id, "apply_patch", display, None, None
        elif item_type == "mcp_tool_call":
            server, tool = str(item.get("server") or ""), str(item.get("tool") or "")
            args = item.get("arguments")
            output = _mcp_output(item)
            display = HarnessToolDetails(
                kind=ToolKind.MCP,
                title=tool,
                command=mcp_call_text(tool, args if isinstance(args, dict) else None),
                status=status,
                summary=bounded_tail(output),
                raw={"server": server, "tool": tool},
            )
            name = f"{server}.{tool}" if server else tool
            tool_args = args if isinstance(args, dict) else (None if args is None else {"arguments": args})
            yield item_id, name, display, tool_args, bounded_head(output)
        else:  # web_search
            query = str(item.get("query") or "")
            web_action = item.get("action")
            url = web_action.get("url") if isinstance(web_action, Mapping) else None
            display = HarnessToolDetails(
                kind=ToolKind.WEB,
                title="Opening page" if url else "Searching the web",
                path=url,
                command=query or None,
                status=status,
                summary=bounded_tail(query or url),
                raw={"action": dict(web_action)} if isinstance(web_action, Mapping) else None,
            )
            yield item_id, "web_search", display, {"query": query}, None


def _mcp_output(item: Mapping[str, Any]) -> str | None:
    error = item.get("error")
    if isinstance(error, Mapping) and error.get("message"):
        return str(error["message"])
    result = item.get("result")
    if not isinstance(result, Mapping) or result.get("content") is None:
        return None
    return mcp_result_text(result["content"])
