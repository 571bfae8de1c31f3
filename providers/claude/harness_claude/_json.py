"""Typed views of untrusted parsed JSON: a value that must be an object, a string, a count, a timestamp or a
tool result's text, or else a default.

Layer: provider (pure helpers). Claude Code's stream-json lines are parsed JSON of unchecked shape; these
keep every lookup typed (mypy --strict) without trusting the shape.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

__all__ = ["count", "obj", "opt_str", "string", "text_of", "timestamp"]


def obj(value: object) -> dict[str, Any]:
    """`value` if it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def string(value: object, default: str = "") -> str:
    """`value` if it is a string, else `default`."""
    return value if isinstance(value, str) else default


def opt_str(value: object) -> str | None:
    """`value` if it is a string, else None."""
    return value if isinstance(value, str) else None


def count(value: object) -> int:
    """`value` if it is a non-negative integer (not a bool), else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def timestamp(value: object) -> datetime | None:
    """An ISO 8601 timestamp (`2025-01-01T10:00:00.123Z`) as an aware datetime, else None."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def text_of(content: object) -> str:
    """A tool_result `content` (a string, or a list of text and image blocks) flattened to text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, dict) and block.get("type") == "image":
                parts.append("[image]")
        return "\n".join(parts)
    return ""
