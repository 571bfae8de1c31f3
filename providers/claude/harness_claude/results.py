"""A `user` line's `tool_result` block → the `tool_result` event of the tool it answers.

Layer: provider (pure mapping), a part of `mapping.ClaudeMapper` (which keeps the open tools and calls
`tool_result` once per tool). Knows the shapes of Claude Code 2.1.328's tool results (`tool_result_meta`, Bash's
`Exit code N` prefix, the CLI's `tool_use_result`); knows nothing of the stream, of processes or of the runner.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from harness_core import ToolResult, ToolStatus

from harness_claude._json import obj, text_of, timestamp
from harness_claude.changes import result_display
from harness_claude.display import summarize, tool_display

__all__ = ["OUTPUT_LIMIT", "OpenTool", "tool_result"]

OUTPUT_LIMIT = 16_000
"""Characters of tool output kept in `tool_result.output`."""

_EXIT_CODE = re.compile(r"^Exit code (\d+)")
_POLICY_REFUSED = re.compile(r"No such tool available: (\S+)\. \1 is disabled for this session")
"""2.1.328's answer to a tool left out by `--tools` or refused by `--disallowedTools`: declined by policy, not
a failed run (a tool name the model made up gets "No such tool available: X" without the second sentence)."""


@dataclass
class OpenTool:
    """A tool the model called (its `tool_use` block), kept until its result."""

    name: str
    input: dict[str, Any]
    started: datetime | None


def tool_result(tool_id: str, tool: OpenTool | None, block: dict[str, Any], meta: dict[str, Any],
                msg: dict[str, Any], cwd: str | None) -> ToolResult:
    """The `tool_result` event of `block` (`meta`: its `tool_result_meta` entry; `msg`: the whole line)."""
    name = tool.name if tool else "tool"
    text = text_of(block.get("content"))
    is_error = block.get("is_error") is True
    decision = obj(meta.get("permission_decision"))
    if (
        decision.get("decision") == "reject"
        or meta.get("non_execution_kind") == "permission-rule"
        or (is_error and _POLICY_REFUSED.search(text))
    ):
        status = ToolStatus.DECLINED
    else:
        status = ToolStatus.FAILED if is_error else ToolStatus.COMPLETED
    display = tool_display(name, tool.input if tool else None, cwd, status=status)
    display = result_display(display, name, tool.input if tool else None, msg, cwd)
    update: dict[str, Any] = {"summary": summarize(text)}
    ended = timestamp(msg.get("timestamp"))
    if tool is not None and tool.started is not None and ended is not None:
        update["duration_ms"] = max(int((ended - tool.started).total_seconds() * 1000), 0)
    if name == "Bash" and status is not ToolStatus.DECLINED:
        rich = msg.get("tool_use_result")
        interrupted = isinstance(rich, dict) and rich.get("interrupted") is True
        code = _EXIT_CODE.match(text)
        if code:
            update["exit_code"] = int(code.group(1))
        elif not is_error and not interrupted:
            update["exit_code"] = 0
    output = text if len(text) <= OUTPUT_LIMIT else f"{text[:OUTPUT_LIMIT]}… [truncated]"
    return ToolResult(
        tool_id=tool_id,
        name=name,
        display=display.model_copy(update=update),
        output=output,
        is_error=is_error,
    )
