"""Text for humans shared by the live view, `harness show`, `harness runs` and the demo summary: durations, token
counts, one-line tool labels and excerpts (tables and lines fitted to a width: `render.layout`).

Layer: CLI rendering. Pure functions of the event models; nothing of providers, the runner or the run store.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from harness_core import ErrorInfo, HarnessResult, HarnessToolDetails, RunStatus, ToolKind, ToolStatus, Usage
from harness_core.cli.render.terminal import UNICODE_MARKS

__all__ = [
    "error_label",
    "excerpt",
    "final_line",
    "format_cost",
    "format_duration",
    "format_tokens",
    "one_line",
    "schema_answer",
    "status_text",
    "structured_text",
    "tool_label",
    "tool_line",
    "tool_target",
    "turns_summary",
]

_CMD_WIDTH = 200
_RESULT_WIDTH = 80
"""Longest MCP tool result shown after its call (`add(a=2, b=3) → 5`); -v shows the whole summary."""
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


def format_cost(usd: float) -> str:
    """``$0.0123``: what `harness runs` and `harness show` print too."""
    return f"${usd:.4f}"


def error_label(error: ErrorInfo) -> str:
    """A failure's code for a one-line summary, with the limit passed for ``budget_exceeded``:
    ``budget_exceeded (max_cost_usd 0.01)``."""
    budget, limit = error.details.get("budget"), error.details.get("limit")
    if error.code == "budget_exceeded" and isinstance(budget, str) and isinstance(limit, (int, float)):
        return f"{error.code} ({budget} {limit:g})"
    return error.code


def turns_summary(turns: int, usage: Usage, sep: str = UNICODE_MARKS["sep"]) -> str:
    """A session's turns for a summary line: ``3 turns · 300 tokens in / 60 out · $0.0300``."""
    parts = [f"{turns} turn{'' if turns == 1 else 's'}"]
    if turns:
        parts.append(format_tokens(usage))
    if usage.cost_usd is not None:
        parts.append(format_cost(usage.cost_usd))
    return f" {sep} ".join(parts)


def structured_text(value: Any) -> str:
    """A structured answer (`HarnessResult.structured_output`) as indented JSON."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def schema_answer(result: HarnessResult) -> str:
    """The answer of a run with an output schema: its parsed value as indented JSON, else (not valid, or the run
    did not succeed) the final text as the agent wrote it, if any."""
    if result.structured_output is not None:
        return structured_text(result.structured_output)
    return result.final_text.strip()


def final_line(result: HarnessResult, marks: Mapping[str, str] = UNICODE_MARKS, seen: Usage | None = None) -> str:
    """The live view's last line: ``✓ success in 3.4 s · 1,234 tokens in / 56 out · $0.0123 · session abc``.
    `seen` is the last usage the stream reported, for a result without figures of its own; the cost is shown
    when known, a failure's error code (`error_label`) when it did not succeed. A run that used no tokens at all
    (it failed before reaching the model) has no token part, and no cost part for a cost of 0."""
    sep = f" {marks['sep']} "
    mark = {RunStatus.SUCCESS: marks["ok"], RunStatus.FAILED: marks["fail"], RunStatus.INTERRUPTED: marks["stop"]}
    parts = [f"{mark[result.status]} {result.status.value} in {format_duration(result.duration_ms)}"]
    usage = result.usage if result.usage.total_tokens else seen
    if usage is not None and usage.total_tokens:
        parts.append(format_tokens(usage))
    cost = result.usage.cost_usd if result.usage.cost_usd is not None else usage.cost_usd if usage else None
    if cost is not None and (cost > 0 or (usage is not None and usage.total_tokens)):
        parts.append(format_cost(cost))
    if result.error is not None and result.status is not RunStatus.SUCCESS and result.error.code != result.status.value:
        parts.append(error_label(result.error))  # (not `interrupted · … · interrupted`)
    if result.session_id:
        parts.append(f"session {result.session_id}")
    return sep.join(parts)


def status_text(spinner: str, seconds: float, phase: str, usage: Usage | None, marks: Mapping[str, str],
                width: int) -> str:
    """The live status line: ``⠋ 3.4 s · running command pytest -q · 1,290 tokens``, cut to `width`."""
    elapsed = f"{seconds:.1f} s" if seconds < 60 else format_duration(seconds * 1000)
    sep = marks["sep"]
    status = f"{spinner} {elapsed} {sep} {phase}"
    if usage is not None:
        status += f" {sep} {usage.total_tokens:,} tokens"  # the sum `final_line` shows as in / out
    return one_line(status, width, marks["more"])


def one_line(text: str, limit: int, more: str = "…") -> str:
    """`text` with its whitespace collapsed, cut to `limit` characters (the last one `more`)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + more


def excerpt(text: str | None) -> str:
    """The start of a prompt, on one line, for a table cell."""
    return one_line(text or "", _EXCERPT)


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
    if display.kind is ToolKind.MCP and display.command:  # `add(a=2, b=3)`: the call names the tool
        return one_line(display.command, _CMD_WIDTH, more)
    target = tool_target(display, cwd)
    if not target:
        return display.title
    return f"{display.title} {one_line(target, _CMD_WIDTH, more)}"


def tool_line(display: HarnessToolDetails, marks: Mapping[str, str] = UNICODE_MARKS,
              cwd: str | None = None, *, not_run: str | None = None) -> str:
    """The completion text of one tool action, without the ``[tool]`` tag: ``✓ Running command x (exit 0,
    1.2 s)``. Used by the renderer and by `harness show`. `not_run` says why an action that never ran (its
    approval was not given) did not: ``⊘ Running command x (not run: interrupted)``, whatever status it ended in
    (``""``: ``(not run)``). A tool the run's interrupt (or budget, or idle timeout) stopped before its result
    came is ``⊘ Running command x (cut short)``."""
    if not_run is not None:
        why = f": {not_run}" if not_run else ""
        return f"{marks['declined']} {tool_label(display, marks['more'], cwd)} (not run{why})"
    status = display.status
    if status is ToolStatus.INTERRUPTED:
        return f"{marks['declined']} {tool_label(display, marks['more'], cwd)} (cut short)"
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
    if display.kind is ToolKind.MCP and display.command and display.summary and status is ToolStatus.COMPLETED:
        label = f"{label} → {one_line(display.summary, _RESULT_WIDTH, marks['more'])}"  # add(a=2, b=3) → 5
    text = f"{mark} {label}" if mark else label
    return f"{text} ({', '.join(facts)})" if facts else text

