"""The stream-json lines Harness writes to Claude Code's stdin: user messages and the control protocol's.

Layer: provider (wire, pure). Compact JSON, one object per line, in the shapes Claude Code 2.1.328 reads with
`--input-format stream-json`; knows nothing of when they are sent or what is done with the answers.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["control_request", "control_response", "line", "user_message"]


def line(msg: dict[str, Any]) -> str:
    """One stream-json line for Claude Code's stdin."""
    return json.dumps(msg, ensure_ascii=False, separators=(",", ":"))


def user_message(text: str | list[dict[str, Any]], message_uuid: str | None = None) -> str:
    """A user message (the prompt, or a steer: that one has a `uuid`, which `command_lifecycle` lines name); its
    content is the text, or content blocks (attachments, then the text: `toolconfig.content_blocks`)."""
    msg: dict[str, Any] = {"type": "user", "message": {"role": "user", "content": text},
                           "parent_tool_use_id": None, "session_id": ""}
    if message_uuid is not None:
        msg["uuid"] = message_uuid
    return line(msg)


def control_request(request_id: str, request: dict[str, Any]) -> str:
    return line({"type": "control_request", "request_id": request_id, "request": request})


def control_response(request_id: str, response: dict[str, Any] | None = None, *, error: str | None = None) -> str:
    """The answer to Claude Code's control request: `success` with `response`, or `error` with `error`."""
    payload: dict[str, Any] = ({"subtype": "error", "request_id": request_id, "error": error} if error is not None
                               else {"subtype": "success", "request_id": request_id, "response": response})
    return line({"type": "control_response", "response": payload})
