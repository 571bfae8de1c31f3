"""Typed views of untrusted parsed JSON: a value that must be an object or a string, or else a default.

Layer: provider (pure helpers). Claude Code's stream-json lines are parsed JSON of unchecked shape; these
keep every lookup typed (mypy --strict) without trusting the shape.
"""

from __future__ import annotations

from typing import Any

__all__ = ["count", "obj", "opt_str", "string"]


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
