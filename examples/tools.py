"""Python functions an agent may call: `harness run --tools examples/tools.py "..."` (every `@tool` here).

Each runs in the Harness process, not the agent's; its type hints are the schema the agent sees, its docstring
the description. Try it offline: `harness run --offline -p codex-appserver --tools examples/tools.py --scenario
tools_mcp`.
"""

from __future__ import annotations

from pathlib import Path

from harness_core import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers and return their sum."""
    return a + b


@tool(requires_approval=True, timeout=10)
def count_lines(path: str) -> int:
    """Count the lines of a text file (asks before it reads: a file outside the workspace may be private)."""
    with Path(path).expanduser().open(encoding="utf-8", errors="replace") as text:
        return sum(1 for _ in text)
