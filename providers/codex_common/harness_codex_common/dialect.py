"""How codex shows a tool's result to the model, for the scripted Responses backend offline (`CodexDialect`).

Layer: provider (pure). Knows codex 0.169.0's envelope around an MCP tool's result (`Wall time: 0.0081 seconds`,
`Output:`, then the result, its content blocks as JSON when they are not plain text); knows no process or event.
"""

from __future__ import annotations

import json
import re

from harness_core.scripted.backends import ResponsesDialect

__all__ = ["CodexDialect", "unwrapped"]

_ENVELOPE = re.compile(r"Wall time: [0-9.]+ seconds\nOutput:\n(.*)", re.S)


def unwrapped(text: str) -> str:
    """`text` without codex's envelope (unchanged when it has none); text content blocks become their text."""
    found = _ENVELOPE.fullmatch(text)
    if found is None:
        return text
    inner = found.group(1)
    try:
        blocks = json.loads(inner)
    except ValueError:
        return inner
    if isinstance(blocks, list) and blocks and all(isinstance(b, dict) and b.get("type") == "text" for b in blocks):
        return "".join(str(b.get("text", "")) for b in blocks)
    return inner


class CodexDialect(ResponsesDialect):
    """The default Responses tools (codex offers `exec_command` and `apply_patch`), reading a tool's result as
    codex wraps it."""

    def tool_result_text(self, output: str) -> str:
        return unwrapped(output)
