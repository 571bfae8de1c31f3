"""The OpenAI Responses wire, as plain data: request bodies, SSE frames, tool calls, usage, HTTP errors.

Layer: pure wire format. Knows the Responses API's JSON shapes and Harness's error classes and `Usage`; must
not know HTTP clients, processes, files, Harness events (that is `mapping.py`) or how a run is driven (that is
`agent.py`). Every function is pure.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from harness_core import HarnessError, ModelError, SessionNotFoundError, Usage, truncate
from harness_core.provider import error_for_status

__all__ = [
    "INSTRUCTIONS",
    "TOOLS",
    "SseDecoder",
    "ToolCall",
    "http_error",
    "parse_usage",
    "request_body",
    "sse_events",
    "stream_error",
    "tool_call",
    "tool_output_item",
    "user_message",
]

JSON = dict[str, Any]

INSTRUCTIONS = (
    "You are mini-agent, a careful coding agent working in the user's repository (the current directory). "
    'Run shell commands with the `exec_command` tool (JSON arguments {"cmd": "..."}); read files with '
    "`cat PATH`. Change files only with the `apply_patch` tool, whose input is a patch: `*** Begin Patch`, "
    "then `*** Add File: PATH` with `+` lines, `*** Update File: PATH` with `@@` hunks of ` `/`-`/`+` lines, "
    "or `*** Delete File: PATH`, and `*** End Patch`. Paths are relative to the current directory. When the "
    "task is done, answer briefly without calling a tool."
)

TOOLS: list[JSON] = [
    {
        "type": "function",
        "name": "exec_command",
        "description": "Run a shell command (bash -lc) in the working directory; gives output and exit code.",
        "parameters": {
            "type": "object",
            "properties": {"cmd": {"type": "string", "description": "The command line to run."}},
            "required": ["cmd"],
            "additionalProperties": False,
        },
        "strict": True,
    },
    {
        "type": "custom",
        "name": "apply_patch",
        "description": "Create, edit or delete files with a patch (*** Begin Patch ... *** End Patch).",
    },
]


@dataclass(frozen=True)
class ToolCall:
    """A tool call the model made: `kind` is "exec" (with `cmd`), "patch" (with `patch`) or "unknown"."""

    call_id: str
    name: str
    item_type: str
    kind: str
    cmd: str = ""
    patch: str = ""
    problem: str = ""
    """Why the call cannot run (bad arguments, unknown tool); sent back to the model as its output."""


def request_body(
    model: str,
    items: list[JSON],
    previous_response_id: str | None,
    instructions: str,
    reasoning_summary: str = "none",
) -> JSON:
    body: JSON = {
        "model": model,
        "instructions": instructions,
        "input": items,
        "tools": TOOLS,
        "stream": True,
        "store": True,
        "parallel_tool_calls": False,
    }
    if previous_response_id:
        body["previous_response_id"] = previous_response_id
    if reasoning_summary and reasoning_summary != "none":
        body["reasoning"] = {"summary": reasoning_summary}
    return body


def user_message(text: str) -> JSON:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def sse_events(lines: Iterable[str]) -> Iterator[JSON]:
    """Decode a whole SSE body (for tests and non-streaming callers); see `SseDecoder` for streams."""
    decoder = SseDecoder()
    for line in lines:
        event = decoder.feed(line)
        if event is not None:
            yield event
    event = decoder.feed("")
    if event is not None:
        yield event


class SseDecoder:
    """Server-sent events, one line at a time: `feed` returns the JSON `data` of a finished frame, or None."""

    def __init__(self) -> None:
        self._data: list[str] = []

    def feed(self, line: str) -> JSON | None:
        line = line.rstrip("\r")
        if line:
            if line.startswith("data:"):
                self._data.append(line[5:].lstrip(" "))
            return None  # `event:`, `id:`, comments: the type is inside the data too
        if not self._data:
            return None
        data, self._data = "\n".join(self._data), []
        if data == "[DONE]":
            return None
        try:
            parsed = json.loads(data)
        except ValueError as exc:
            raise ModelError(
                f"the model API sent an SSE frame that is not JSON: {truncate(data, 200)}"
            ) from exc
        return parsed if isinstance(parsed, dict) else None


def tool_call(item: JSON) -> ToolCall | None:
    """The tool call in a finished output item (`response.output_item.done`), or None if it is not one."""
    item_type = item.get("type")
    if item_type not in ("function_call", "custom_tool_call"):
        return None
    call_id, name = str(item.get("call_id") or item.get("id") or ""), str(item.get("name") or "")
    if item_type == "custom_tool_call" and name == "apply_patch":
        return ToolCall(call_id, name, item_type, "patch", patch=str(item.get("input") or ""))
    if item_type == "function_call" and name == "exec_command":
        try:
            args = json.loads(item.get("arguments") or "{}")
        except ValueError:
            args = None
        cmd = args.get("cmd") if isinstance(args, dict) else None
        if isinstance(cmd, list):
            cmd = " ".join(str(part) for part in cmd)
        if isinstance(cmd, str) and cmd.strip():
            return ToolCall(call_id, name, item_type, "exec", cmd=cmd)
        return ToolCall(call_id, name, item_type, "unknown", problem='exec_command needs {"cmd": "..."}')
    return ToolCall(
        call_id,
        name,
        item_type,
        "unknown",
        problem=f"no tool named {name!r}; use exec_command or apply_patch",
    )


def tool_output_item(call: ToolCall, output: str) -> JSON:
    kind = "custom_tool_call_output" if call.item_type == "custom_tool_call" else "function_call_output"
    return {"type": kind, "call_id": call.call_id, "output": output}


def parse_usage(raw: Any) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    inp, out = raw.get("input_tokens_details") or {}, raw.get("output_tokens_details") or {}
    return Usage(
        input_tokens=int(raw.get("input_tokens") or 0),
        cached_input_tokens=int(inp.get("cached_tokens") or 0),
        output_tokens=int(raw.get("output_tokens") or 0),
        reasoning_tokens=int(out.get("reasoning_tokens") or 0),
    )


def http_error(status: int, body: bytes, key_env: str, key_set: bool,
               previous_response_id: str | None = None) -> HarnessError:
    """The Harness error for a failed HTTP response, classified by the core's `error_for_status` (401/403
    auth_failed, 429 rate_limited, anything else model_error, retryable for 5xx) with mini-agent's next steps;
    a 404 for the `previous_response_id` a resumed run names is `SessionNotFoundError`. The detail is the
    API's own `error.message` when the body carries one, else the body itself."""
    message = body.decode("utf-8", "replace")
    try:
        parsed = json.loads(body)
        message = str(parsed["error"]["message"])
    except (ValueError, KeyError, TypeError):
        pass
    if status == 404 and previous_response_id and previous_response_id in message:
        return SessionNotFoundError(previous_response_id, message)
    auth_hint = (
        f"check the key in ${key_env}"
        if key_set
        else f"${key_env} is not set; export it (or name another variable with -o api_key_env=NAME)"
    )
    return error_for_status(
        status,
        message,
        auth_hint=auth_hint,
        retry_hint="wait and retry",
        failure_hint="retry, or check base_url and model",
    )


def stream_error(event: JSON) -> HarnessError:
    """The error for a `response.failed` or `error` event inside a stream."""
    err = event.get("error") or (event.get("response") or {}).get("error") or {}
    message = err.get("message") if isinstance(err, dict) else None
    return ModelError(
        f"the model API failed mid-response: {message or truncate(json.dumps(event), 300)}; retry"
    )
