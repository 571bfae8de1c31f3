"""The stream-json lines of Claude Code 2.1.328, as the fake `claude` prints them: one builder per kind of line.

Layer: testing (fake CLI), pure, stdlib only (plus the scenario step types). Knows the keys of each line (copied
from recorded real transcripts; `tests/test_fake_shapes.py` checks every line the fake prints against them) and how
a tool step looks as a Claude Code tool call; knows nothing of processes, stdin, timing or Harness events.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone
from typing import Any

from harness_core.scripted.scenarios import CallMcpTool, EditFile, ReadFile, RunCommand, Step, WriteFile

__all__ = [
    "DEFAULT_TOOLS",
    "KNOWN_TOOLS",
    "MODEL",
    "VERSION",
    "api_error_assistant",
    "assistant",
    "can_use_tool",
    "control_success",
    "denied_automatically",
    "init",
    "interrupt_response",
    "message_start",
    "now",
    "partial_json",
    "permission_denied",
    "policy_refusal",
    "result",
    "status_requesting",
    "stream",
    "tool_call",
    "tool_result",
    "user",
]

VERSION = "2.1.328"
MODEL = "claude-opus-5-5"
USAGE = {
    "input_tokens": 100,
    "output_tokens": 1,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
}
DEFAULT_TOOLS = (
    "Task", "Bash", "CronCreate", "CronDelete", "CronList", "Edit", "EnterWorktree", "ExitWorktree",
    "ListAgents", "Monitor", "NotebookEdit", "Read", "ReportFindings", "ScheduleWakeup", "SendMessage", "Skill",
    "TaskCreate", "TaskGet", "TaskList", "TaskStop", "TaskUpdate", "ToolSearch", "WebFetch", "WebSearch",
    "Workflow", "Write",
)  # fmt: skip
"""`system/init.tools` of 2.1.328 without `--tools` (recorded, permission mode default)."""
KNOWN_TOOLS = frozenset((*DEFAULT_TOOLS, "Glob", "Grep"))
"""Built-in tools `--tools` can name (Glob and Grep exist only when named); other names are ignored."""

_INIT_EXTRA: dict[str, Any] = {
    "additional_directories": [],
    "analytics_disabled": True,
    "capabilities": [],
    "fast_mode_state": "off",
    "fast_mode_disabled_reason": "sdk_opt_in_required",
    "per_turn_effort_active": True,
    "product_feedback_disabled": True,
    "terminal_slash_commands": [],
    "ultrathink_available": False,
    "ultrathink_typed_raises": False,
    "view_mode": "default",
}
_RESULT_EXTRA: dict[str, Any] = {
    "fast_mode_state": "off",
    "fast_mode_disabled_reason": "sdk_opt_in_required",
    "queued_turn_count": 0,
    "result_index": 0,
    "safety_stops": 0,
    "subagent_stats": {},
    "model_usage_since_last_result": {},
}


def now() -> str:
    """The lines' timestamp format: UTC, milliseconds, `Z`."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _base(session: str) -> dict[str, Any]:
    return {"session_id": session, "uuid": str(uuid.uuid4())}


# --- system lines ---------------------------------------------------------------------------------------


def init(session: str, cwd: str, tools: list[str], mode: str, model: str = MODEL) -> dict[str, Any]:
    """`system/init`: the first line of a turn (of every turn, on a process that plays several)."""
    return {
        "type": "system",
        "subtype": "init",
        "cwd": cwd,
        **_base(session),
        "tools": tools,
        "mcp_servers": [],
        "model": model,
        "permissionMode": mode,
        "slash_commands": [],
        "apiKeySource": "ANTHROPIC_API_KEY",
        "claude_code_version": VERSION,
        "output_style": "default",
        "agents": [],
        "skills": [],
        "plugins": [],
        "original_cwd": cwd,
        "memory_paths": {},
        "messaging_socket_path": "",
        **_INIT_EXTRA,
    }


def status_requesting(session: str) -> dict[str, Any]:
    """`system/status`: a model request is about to go out."""
    return {"type": "system", "subtype": "status", "status": "requesting", **_base(session)}


def permission_denied(session: str, name: str, tool_id: str, message: str) -> dict[str, Any]:
    """`system/permission_denied`: a permission nobody can answer was denied automatically."""
    return {
        "type": "system",
        "subtype": "permission_denied",
        "tool_name": name,
        "tool_use_id": tool_id,
        "decision_reason_type": "asyncAgent",
        "decision_reason": "no approval surface in this session; permission request denied automatically",
        "message": message,
        **_base(session),
    }


# --- model output ---------------------------------------------------------------------------------------


def stream(session: str, mid: str, event: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """`stream_event`: one raw Messages API stream event (`message_start`, `content_block_delta`, ...)."""
    return {
        "type": "stream_event",
        "event": event,
        **_base(session),
        "parent_tool_use_id": None,
        "api_message_id": mid,
        **extra,
    }


def message_start(mid: str) -> dict[str, Any]:
    """The `message_start` stream event of model message `mid`."""
    return {
        "type": "message_start",
        "message": {
            "id": mid,
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": USAGE,
        },
    }


def assistant(session: str, mid: str, block: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """`assistant`: one complete content block of model message `mid`."""
    message = {
        "id": mid,
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [block],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": USAGE,
        "context_management": None,
    }
    return {
        "type": "assistant",
        "message": message,
        "parent_tool_use_id": None,
        **_base(session),
        "timestamp": now(),
        **extra,
    }


def api_error_assistant(session: str, status: int, text: str) -> dict[str, Any]:
    """The synthetic `assistant` line Claude Code prints for a failed model API call."""
    message = {
        "id": str(uuid.uuid4()),
        "model": "<synthetic>",
        "stop_sequence": "",
        "context_management": None,
        "role": "assistant",
        "type": "message",
        "stop_reason": "stop_sequence",
        "usage": USAGE,
        "content": [{"type": "text", "text": text}],
    }
    return {
        "type": "assistant",
        "message": message,
        "parent_tool_use_id": None,
        **_base(session),
        "timestamp": now(),
        "error": "unknown",
        "is_api_error_message": True,
        "api_error_status": status,
    }


# --- tool results ---------------------------------------------------------------------------------------


def user(session: str, content: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """`user`: tool results (or the interrupt marker text) going back to the model."""
    return {
        "type": "user",
        "message": {"role": "user", "content": content},
        "parent_tool_use_id": None,
        **_base(session),
        "timestamp": now(),
        **extra,
    }


def tool_result(tool_id: str, content: str, *, is_error: bool) -> dict[str, Any]:
    """A `tool_result` content block."""
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content, "is_error": is_error}


def policy_refusal(name: str) -> str:
    """2.1.328's words for a tool left out by `--tools` or refused by `--disallowedTools`."""
    return f"No such tool available: {name}. {name} is disabled for this session, in subagents as well as here."


def denied_automatically(name: str) -> str:
    """2.1.328's words for a permission nobody can answer (no prompt tool, or `--permission-prompts none`)."""
    return (
        "Permission for this tool use was denied. It requires approval, and this session has no approval "
        "surface — nobody can answer a permission prompt here — so it was denied automatically. The action "
        f"was NOT performed; do not claim it succeeded, and do not retry it. What required approval: {name}."
    )


def tool_call(step: Step, cwd: str) -> tuple[str, dict[str, Any], str]:
    """A scenario tool step as Claude Code's tool call: (tool name, input, the output a fake reports)."""

    def absolute(path: str) -> str:
        return path if path.startswith("/") else f"{cwd}/{path}"

    if isinstance(step, CallMcpTool):  # the fake reports the step's output (it starts no server)
        return f"mcp__{step.server}__{step.tool}", dict(step.args), step.output
    if isinstance(step, RunCommand):
        return "Bash", {"command": step.command, "description": "Run a scripted command"}, step.output
    if isinstance(step, ReadFile):
        lines = step.content.splitlines() or [""]
        return "Read", {"file_path": absolute(step.path)}, "\n".join(f"{i}\t{x}" for i, x in enumerate(lines, 1))
    if isinstance(step, WriteFile):
        path = absolute(step.path)
        return "Write", {"file_path": path, "content": step.content}, f"File created successfully at: {path}"
    if not isinstance(step, EditFile):
        raise TypeError(f"not a tool step: {step!r}")
    path = absolute(step.path)
    tool_input = {"replace_all": False, "file_path": path, "old_string": step.old, "new_string": step.new}
    return "Edit", tool_input, f"The file {path} has been updated successfully."


def partial_json(tool_input: dict[str, Any]) -> str:
    """A tool call's input as its one `input_json_delta`."""
    return json.dumps(tool_input)


# --- the control protocol -------------------------------------------------------------------------------


def can_use_tool(request_id: str, name: str, tool_input: dict[str, Any], tool_id: str, cwd: str) -> dict[str, Any]:
    """A `can_use_tool` control request (`--permission-prompt-tool stdio`): may this tool call run?"""
    return {
        "type": "control_request",
        "request_id": request_id,
        "request": {
            "subtype": "can_use_tool",
            "tool_name": name,
            "display_name": name,
            "input": tool_input,
            "description": tool_input.get("description", name),
            "permission_suggestions": [],
            "tool_use_id": tool_id,
            "blocked_path": cwd,
        },
    }


def interrupt_response(request_id: object) -> dict[str, Any]:
    """The answer to our `interrupt` control request."""
    return {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": {"still_queued": []}},
    }


# --- the end of the turn --------------------------------------------------------------------------------


def result(
    session: str,
    subtype: str,
    *,
    turns: int,
    out_tokens: int,
    duration_ms: int,
    model: str = MODEL,
    cost_before: float = 0.0,
    **fields: Any,
) -> dict[str, Any]:
    """The `result` line that ends a turn; `fields` are the subtype's own (`is_error`, `result`, ...). As on one
    real process: `usage` and `model_usage_since_last_result` are this turn's (`turns` model calls, none: `{}`),
    `total_cost_usd` adds `cost_before`, what the process's earlier turns cost."""
    usage = {
        "input_tokens": 100 * max(turns, 1),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": out_tokens,
        "output_tokens_details": {"thinking_tokens": 0},
    }
    cost = round(0.0004 * max(turns, 1), 6) if turns else 0.0
    since = {model: {"inputTokens": usage["input_tokens"], "outputTokens": out_tokens, "cacheReadInputTokens": 0,
                     "cacheCreationInputTokens": 0, "costUSD": cost, "contextWindow": 1000000}} if turns else {}
    return {
        "type": "result",
        "subtype": subtype,
        "duration_ms": duration_ms,
        "duration_api_ms": 10,
        "num_turns": turns + 1,
        "stop_reason": "end_turn",
        "session_id": session,
        "total_cost_usd": round(cost_before + cost, 6),
        "usage": usage,
        "modelUsage": {
            model: {
                "inputTokens": usage["input_tokens"],
                "outputTokens": out_tokens,
                "costUSD": round(cost_before + cost, 6),
                "contextWindow": 1000000,
            }
        },
        "permission_denials": [],
        "uuid": str(uuid.uuid4()),
        **_RESULT_EXTRA,
        "model_usage_since_last_result": since,
        **fields,
    }


def control_success(request_id: object, response: dict[str, Any]) -> dict[str, Any]:
    """The answer to a driver's control request (`set_model` → `{"model": M}`, `set_permission_mode` →
    `{"mode": M}`), as 2.1.328 sends it."""
    return {"type": "control_response", "response": {"subtype": "success", "request_id": request_id,
                                                     "response": response}}


def resume_refused(value: str) -> tuple[dict[str, Any], str]:
    """The only stdout line (and the stderr line) of 2.1.328 given `--resume VALUE` that is neither a session id
    (a UUID) nor a session title: an `error_during_execution` result under a fresh session id; it exits 1."""
    said = (
        "Error: --resume requires a valid session ID or session title when used with --print. Usage: claude -p "
        f'--resume <session-id|title>. Provided value "{value}" is not a UUID and does not match any session title.'
    )
    line = result(str(uuid.uuid4()), "error_during_execution", turns=0, out_tokens=0, duration_ms=0,
                  is_error=True, errors=[said])
    line.update(num_turns=0, stop_reason=None, total_cost_usd=0, modelUsage={})
    return line, said
