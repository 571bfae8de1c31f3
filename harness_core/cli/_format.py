"""Text for humans shared by the live view, `harness show`, `harness runs` and the demo summary: durations,
token counts, one-line tool labels, excerpts and aligned tables.

Layer: CLI presentation. Pure functions of the event models (`HarnessToolDetails`, `Usage`); nothing of
providers, the runner or the run store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from harness_core import HarnessToolDetails, ToolKind, ToolStatus, Usage
from harness_core.cli._terminal import UNICODE_MARKS

__all__ = [
    "excerpt",
    "format_duration",
    "format_tokens",
    "one_line",
    "table",
    "tool_label",
    "tool_line",
    "tool_target",
]

_CMD_WIDTH = 200
_EXCERPT = 48


def format_duration(ms: int | float | None) -> str:
    """``350 ms``, ``1.2 s``, ``42 s``, ``3 m 05 s``."""
    if ms is None:
        return "?"
    if ms < 1000:
        return f"{int(ms)} ms"
    seconds = ms / 1000
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{int(seconds)} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} m {rest:02d} s"


def format_tokens(usage: Usage) -> str:
    """``1,234 tokens in / 56 out`` (cached input noted when there is any)."""
    cached = f" ({usage.cached_input_tokens:,} cached)" if usage.cached_input_tokens else ""
    return f"{usage.input_tokens:,} tokens in{cached} / {usage.output_tokens:,} out"


def one_line(text: str, limit: int, more: str = "…") -> str:
    """`text` with its whitespace collapsed, cut to `limit` characters (the last one `more`)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + more


def excerpt(text: str | None) -> str:
    """The start of a prompt, on one line, for a table cell."""
    return one_line(text or "", _EXCERPT)


def table(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows as left-aligned columns two spaces apart, without trailing blanks (the first row is the header)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def tool_target(display: HarnessToolDetails, cwd: str | None = None) -> str | None:
    """What a tool acted on: the command for shell actions, else the path (relative to `cwd` when inside
    it), else the command."""
    path = display.path
    if path and cwd and path.startswith(cwd.rstrip("/") + "/"):
        path = path[len(cwd.rstrip("/")) + 1:]
    if display.kind is ToolKind.SHELL:
        return display.command or path
    return path or display.command


def tool_label(display: HarnessToolDetails, more: str = "…", cwd: str | None = None) -> str:
    """``Running command pytest -q``, ``Reading file src/app.py``: the title and its target."""
    target = tool_target(display, cwd)
    if not target:
        return display.title
    return f"{display.title} {one_line(target, _CMD_WIDTH, more)}"


def tool_line(display: HarnessToolDetails, marks: Mapping[str, str] = UNICODE_MARKS,
              cwd: str | None = None) -> str:
    """The completion text of one tool action, without the ``[tool]`` tag: ``✓ Running command x (exit 0,
    1.2 s)``. Used by the renderer and by `harness show`."""
    status = display.status
    mark = {
        ToolStatus.COMPLETED: marks["ok"],
        ToolStatus.FAILED: marks["fail"],
        ToolStatus.DECLINED: marks["declined"],
    }.get(status, "")
    facts: list[str] = []
    if status is ToolStatus.DECLINED:
        facts.append("declined")
    elif status is ToolStatus.FAILED and display.exit_code is None:
        facts.append("failed")
    if display.exit_code is not None:
        facts.append(f"exit {display.exit_code}")
    if display.duration_ms:  # some agents report 0 for a command they did not time: say nothing, not "0 ms"
        facts.append(format_duration(display.duration_ms))
    label = tool_label(display, marks["more"], cwd)
    text = f"{mark} {label}" if mark else label
    return f"{text} ({', '.join(facts)})" if facts else text
