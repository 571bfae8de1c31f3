"""Human display of Claude Code tool calls: tool name + input → `HarnessToolDetails`.

Layer: provider (pure mapping helper). Knows Claude Code's tool names and input keys; knows nothing of
processes, the stream-json framing or the runner. No I/O.
"""

from __future__ import annotations

import posixpath
from pathlib import PurePath
from typing import Any

from harness_core import HarnessToolDetails, ToolKind, ToolStatus
from harness_core.provider import (
    EDITING_FILE,
    LISTING_FILES,
    READING_FILE,
    RUNNING_COMMAND,
    SEARCHING,
    WRITING_FILE,
    mcp_call_text,
)

__all__ = ["SUMMARY_LIMIT", "relative_path", "summarize", "tool_display"]

SUMMARY_LIMIT = 400
"""Characters of tool output kept in `display.summary`."""

_FILE_TOOLS: dict[str, tuple[ToolKind, str]] = {
    "Read": (ToolKind.READ, READING_FILE),
    "NotebookRead": (ToolKind.READ, "Reading notebook"),
    "Write": (ToolKind.WRITE, WRITING_FILE),
    "Edit": (ToolKind.EDIT, EDITING_FILE),
    "MultiEdit": (ToolKind.EDIT, EDITING_FILE),
    "NotebookEdit": (ToolKind.EDIT, "Editing notebook"),
}
_SIMPLE: dict[str, tuple[ToolKind, str]] = {
    "Grep": (ToolKind.SEARCH, SEARCHING),
    "Glob": (ToolKind.SEARCH, SEARCHING),
    "ToolSearch": (ToolKind.SEARCH, "Searching tools"),
    "LS": (ToolKind.READ, LISTING_FILES),
    "WebFetch": (ToolKind.WEB, "Fetching web page"),
    "WebSearch": (ToolKind.WEB, "Searching the web"),
    "Task": (ToolKind.AGENT, "Running agent"),
    "Agent": (ToolKind.AGENT, "Running agent"),
    "SendMessage": (ToolKind.AGENT, "Messaging agent"),
    "Workflow": (ToolKind.AGENT, "Running workflow"),
    "BashOutput": (ToolKind.SHELL, "Reading command output"),
    "KillShell": (ToolKind.SHELL, "Stopping command"),
    "TodoWrite": (ToolKind.UNKNOWN, "Updating todo list"),
}


def relative_path(path: str | None, cwd: str | None) -> str | None:
    """One spelling per file, whatever the model wrote: relative to `cwd` when it lies inside it, else absolute
    and normalised (`../x` and `/ws/../x` both become `/x`)."""
    if not path or not cwd:
        return path
    full = PurePath(posixpath.normpath(posixpath.join(cwd, path)))
    try:
        rel = full.relative_to(PurePath(posixpath.normpath(cwd)))
    except ValueError:
        return str(full)
    text = str(rel)
    return text if text != "." else str(full)


_REMINDER_OPEN, _REMINDER_CLOSE = "<system-reminder>", "</system-reminder>"


def _for_people(text: str) -> str:
    """`text` without the `<system-reminder>` blocks Claude Code adds to tool results for the model (the malware
    note after a Read): they are not the tool's output. Linear in the text; an unclosed block is kept."""
    if _REMINDER_OPEN not in text:
        return text
    kept: list[str] = []
    at = 0
    while True:
        start = text.find(_REMINDER_OPEN, at)
        end = text.find(_REMINDER_CLOSE, start) if start >= 0 else -1
        if end < 0:
            kept.append(text[at:])
            return "".join(kept)
        kept.append(text[at:start])
        at = end + len(_REMINDER_CLOSE)


def summarize(text: str | None, limit: int = SUMMARY_LIMIT) -> str | None:
    """A bounded one-glance summary of tool output, without Claude Code's notes to the model (None when there
    is nothing to show)."""
    if text is None:
        return None
    text = _for_people(text).strip()
    if not text:
        return None
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def tool_display(
    name: str,
    tool_input: dict[str, Any] | None,
    cwd: str | None,
    *,
    status: ToolStatus = ToolStatus.STARTED,
) -> HarnessToolDetails:
    """Describe a tool call for display ("Reading file notes.txt", "Running command ls")."""
    inp = tool_input or {}
    if name in _FILE_TOOLS:
        kind, title = _FILE_TOOLS[name]
        raw_path = _str(inp.get("file_path")) or _str(inp.get("notebook_path")) or _str(inp.get("path"))
        return HarnessToolDetails(
            kind=kind, title=title, path=relative_path(raw_path, cwd), cwd=cwd, status=status
        )
    if name == "Bash":
        return HarnessToolDetails(
            kind=ToolKind.SHELL,
            title=RUNNING_COMMAND,
            command=_str(inp.get("command")),
            cwd=cwd,
            status=status,
            summary=_str(inp.get("description")),
        )
    if name in _SIMPLE:
        kind, title = _SIMPLE[name]
        path = relative_path(_str(inp.get("path")), cwd)
        if kind is ToolKind.SEARCH:
            pattern = _str(inp.get("pattern")) or _str(inp.get("query"))
            return HarnessToolDetails(
                kind=kind, title=title, path=path, cwd=cwd, status=status, summary=pattern
            )
        if kind is ToolKind.WEB:
            target = _str(inp.get("url")) or _str(inp.get("query"))
            return HarnessToolDetails(kind=kind, title=title, cwd=cwd, status=status, summary=target)
        if kind is ToolKind.AGENT:
            what = _str(inp.get("description")) or _str(inp.get("subagent_type"))
            return HarnessToolDetails(kind=kind, title=title, cwd=cwd, status=status, summary=what)
        return HarnessToolDetails(kind=kind, title=title, path=path, cwd=cwd, status=status)
    if name.startswith("mcp__"):
        parts = name.split("__", 2)
        server = parts[1] if len(parts) > 1 else "?"
        tool = parts[2] if len(parts) > 2 else name
        return HarnessToolDetails(kind=ToolKind.MCP, title=tool, command=mcp_call_text(tool, inp), cwd=cwd,
                                  status=status, raw={"server": server, "tool": tool, "input": inp})
    return HarnessToolDetails(kind=ToolKind.UNKNOWN, title=name, cwd=cwd, status=status, raw={"input": inp})
