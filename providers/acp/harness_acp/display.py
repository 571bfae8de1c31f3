"""Human display of ACP tool calls: a tool call's merged state → `HarnessToolDetails`.

Layer: provider (pure mapping helper, no I/O). Knows the ACP `ToolCall` fields and the shapes the agents we test put
in `rawInput`/`rawOutput`; knows nothing of processes, JSON-RPC or the runner.
ACP kinds → Harness kinds, and titles: providers/acp/README.md.
"""

from __future__ import annotations

import difflib
import json
import posixpath
import re
import shlex
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from harness_core import FileChange, HarnessToolDetails, ToolKind, ToolStatus
from harness_core.provider import (
    DELETING_FILE,
    EDITING_FILE,
    READING_FILE,
    RUNNING_COMMAND,
    SEARCHING,
    WRITING_FILE,
    bounded_tail,
    classify_command,
    mcp_call_text,
    unwrap_shell,
)

__all__ = ["MCP_CALL", "STATUS", "for_people", "mcp_tool", "output_text", "relative_path", "tool_details"]

STATUS: dict[str, ToolStatus] = {
    "pending": ToolStatus.STARTED,
    "in_progress": ToolStatus.STARTED,
    "completed": ToolStatus.COMPLETED,
    "failed": ToolStatus.FAILED,
}
"""ACP `ToolCallStatus` → Harness's (`pending` is a call waiting for its input or for a permission)."""

_KINDS: dict[str, tuple[ToolKind, str]] = {
    "read": (ToolKind.READ, READING_FILE),
    "edit": (ToolKind.EDIT, EDITING_FILE),
    "delete": (ToolKind.EDIT, DELETING_FILE),
    "move": (ToolKind.EDIT, "Moving file"),
    "search": (ToolKind.SEARCH, SEARCHING),
    "execute": (ToolKind.SHELL, RUNNING_COMMAND),
    "think": (ToolKind.AGENT, "Thinking"),
    "fetch": (ToolKind.WEB, "Fetching"),
    "switch_mode": (ToolKind.UNKNOWN, "Switching mode"),
}
_LOOKUPS = frozenset({"tool_search"})
"""The `_meta.toolName` of an agent's own lookup of its deferred tools, sent with ACP kind `other` (Qwen Code 0.24.4's
`tool_search`): shown as a search, as an agent that defers MCP tools searches for them before the call."""
_DIFF_CHARS = 64_000  # a diff longer than this is kept as a note only

MCP_CALL = "_harness_mcp"
"""Where the mapper keeps, in a call's merged state, the MCP tool it is: `(server, tool, arguments)` (`mcp_tool`)."""
_GEMINI_MCP_TITLE = re.compile(r"\A(?P<tool>\S+) \((?P<server>.+) MCP Server\)\Z")
_CODEX_MCP_TITLE = re.compile(r"\ATool: (?P<server>[^/\s]+)/(?P<tool>\S+)\Z")


def _split_mcp_name(name: str, servers: tuple[str, ...]) -> tuple[str, str] | None:
    """`mcp__SERVER__TOOL` → (SERVER, TOOL): by the run's server names first (one may hold `__`)."""
    if not name.startswith("mcp__"):
        return None
    rest = name[len("mcp__"):]
    for server in sorted(servers, key=len, reverse=True):
        if rest.startswith(server + "__") and len(rest) > len(server) + 2:
            return server, rest[len(server) + 2:]
    server, sep, tool = rest.partition("__")
    return (server, tool) if sep and server and tool else None


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def mcp_tool(call: Mapping[str, Any], servers: tuple[str, ...] = ()) -> tuple[str, str, dict[str, Any] | None] | None:
    """The MCP tool a call is, `(server, tool, arguments)` (arguments None while not known yet), or None. Each agent
    says it its own way: claude-agent-acp names it `mcp__SERVER__TOOL` (title and `_meta.claudeCode.toolName`, the
    arguments in `rawInput`); Gemini CLI titles it `TOOL (SERVER MCP Server)` with the arguments as the JSON text
    of its pending content; codex-acp titles it `Tool: SERVER/TOOL` with `rawInput` `{server, tool, arguments}`."""
    raw = call.get("rawInput")
    if isinstance(raw, Mapping) and isinstance(raw.get("server"), str) and isinstance(raw.get("tool"), str):
        arguments = raw.get("arguments")
        return raw["server"], raw["tool"], dict(arguments) if isinstance(arguments, Mapping) else {}
    title = str(call.get("title") or "")
    found = _split_mcp_name(_tool_name(call), servers) or _split_mcp_name(title, servers)
    if found is None:
        match = _GEMINI_MCP_TITLE.match(title) or _CODEX_MCP_TITLE.match(title)
        if match is None:
            return None
        found = match["server"], match["tool"]
    if isinstance(raw, Mapping) and raw:
        return (*found, dict(raw))
    texts = [item["content"]["text"] for item in call.get("content") or ()
             if isinstance(item, Mapping) and item.get("type") == "content" and isinstance(item.get("content"), Mapping)
             and isinstance(item["content"].get("text"), str)]
    arguments = _json_object(texts[0]) if len(texts) == 1 and call.get("status") in (None, "pending") else None
    return (*found, arguments)


def _mcp_details(call: Mapping[str, Any], found: tuple[str, str, dict[str, Any] | None],
                 status: ToolStatus) -> HarnessToolDetails:
    server, tool, arguments = found
    return HarnessToolDetails(
        kind=ToolKind.MCP,
        title=tool,
        command=mcp_call_text(tool, arguments),
        status=status,
        summary=bounded_tail(for_people(output_text(call))) if status is not ToolStatus.STARTED else None,
        raw={"acp_kind": str(call.get("kind") or "other"), "title": str(call.get("title") or ""), "server": server,
             "tool": tool, "arguments": arguments or {}},
    )


def relative_path(path: str | None, cwd: str | None) -> str | None:
    """Relative to `cwd` when inside it, else absolute and normalised (ACP paths are absolute)."""
    if not path or not cwd:
        return path
    full = PurePath(posixpath.normpath(posixpath.join(cwd, path)))
    try:
        rel = full.relative_to(PurePath(posixpath.normpath(cwd)))
    except ValueError:
        return str(full)
    text = str(rel)
    return text if text != "." else str(full)


def _command(raw: Any) -> str | None:
    """`rawInput.command` as one shell string: a string as it is, an argv list joined (a `bash -lc X` unwrapped)."""
    if not isinstance(raw, Mapping):
        return None
    value = raw.get("command", raw.get("cmd"))
    if isinstance(value, str) and value:
        return unwrap_shell(value)
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return unwrap_shell(shlex.join(value))
    return None


def _exit_code(raw: Any) -> int | None:
    if not isinstance(raw, Mapping):
        return None
    for key in ("exit_code", "exitCode", "returncode"):
        value = raw.get(key)
        if type(value) is int:
            return value
    return None


def _lines(text: str) -> list[str]:
    """`text` as diff lines, each ending in a newline (an agent's `oldText: "alpha"` has none: the diff's lines
    would run together)."""
    return [line if line.endswith("\n") else line + "\n" for line in text.splitlines(keepends=True)]


_FENCE = re.compile(r"\A```[\w-]*\n(.*?)\n?```\s*\Z", re.DOTALL)


def _unfenced(text: str) -> str:
    """A tool output an agent wrapped in a markdown code fence (```console ... ```), without the fence."""
    found = _FENCE.match(text)
    return found.group(1) if found else text


def output_text(call: Mapping[str, Any]) -> str | None:
    """The text a tool call produced: its `content` text blocks (not diffs), else `rawOutput`'s output fields."""
    texts: list[str] = []
    for item in call.get("content") or ():
        if isinstance(item, Mapping) and item.get("type") == "content":
            block = item.get("content")
            if isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
    if texts:
        return "\n".join(_unfenced(t) for t in texts)
    raw = call.get("rawOutput")
    if isinstance(raw, Mapping):
        for key in ("formatted_output", "aggregated_output", "output", "stdout"):
            value = raw.get(key)
            if isinstance(value, str) and value:
                return value
    elif isinstance(raw, str) and raw:
        return raw
    return None


def _tool_name(call: Mapping[str, Any]) -> str:
    """The agent's own name of the tool, from `_meta` (Qwen Code: `toolName`; claude-agent-acp:
    `claudeCode.toolName`), or ""."""
    meta = call.get("_meta")
    if not isinstance(meta, Mapping):
        return ""
    claude = meta.get("claudeCode")
    name = meta.get("toolName") or (claude.get("toolName") if isinstance(claude, Mapping) else None)
    return name if isinstance(name, str) else ""


def _writes(call: Mapping[str, Any]) -> bool:
    """Whether the call is a whole-file write (by the tool name in `_meta`, or its title)."""
    title = str(call.get("title") or "").lower()
    return "write" in _tool_name(call).lower() or title.startswith(("write", "writing"))


_REMINDER_OPEN, _REMINDER_CLOSE = "<system-reminder>", "</system-reminder>"


def for_people(text: str | None) -> str | None:
    """A tool's output without the `<system-reminder>` blocks Claude Code adds for the model (claude-agent-acp's
    Read results end with one), for its summary; the output the model saw keeps them. Linear in the text."""
    if not text or _REMINDER_OPEN not in text:
        return text
    kept: list[str] = []
    at = 0
    while True:
        start = text.find(_REMINDER_OPEN, at)
        end = text.find(_REMINDER_CLOSE, start) if start >= 0 else -1
        if end < 0:
            kept.append(text[at:])
            break
        kept.append(text[at:start])
        at = end + len(_REMINDER_CLOSE)
    return "".join(kept).rstrip() or None


def _changes(call: Mapping[str, Any], cwd: str | None, kind: str) -> tuple[FileChange, ...]:
    changes: list[FileChange] = []
    for item in call.get("content") or ():
        if not isinstance(item, Mapping) or item.get("type") != "diff" or not isinstance(item.get("path"), str):
            continue
        path = relative_path(item["path"], cwd) or item["path"]
        old, new = item.get("oldText"), item.get("newText")
        old_text = old if isinstance(old, str) else ""
        new_text = new if isinstance(new, str) else ""
        meta = item.get("_meta")
        # A new file: no oldText, or (Gemini CLI, Qwen Code) an empty one — marked `add`, or from a write tool
        added = old is None or (not old and ((isinstance(meta, Mapping) and meta.get("kind") == "add")
                                             or _writes(call)))
        change = "add" if added else "delete" if kind == "delete" else "modify"
        diff = "".join(difflib.unified_diff(
            _lines(old_text), _lines(new_text),
            fromfile="/dev/null" if added else f"a/{path}", tofile=f"b/{path}",
        ))
        note = None
        if len(diff) > _DIFF_CHARS:
            diff, note = "", f"diff of {len(diff)} characters not kept"
        changes.append(FileChange(path=path, kind=change, diff=diff or None, note=note))
    return tuple(changes)


def tool_details(call: Mapping[str, Any], cwd: str | None, *, declined: bool = False) -> HarnessToolDetails:
    """The display of a tool call from its merged ACP state (`tool_call` plus every `tool_call_update` so far); an
    MCP tool's (the mapper found it: `MCP_CALL`) is `kind=mcp`, titled by the tool, its call as the command."""
    status = ToolStatus.DECLINED if declined else STATUS.get(str(call.get("status") or "pending"), ToolStatus.STARTED)
    found = call.get(MCP_CALL)
    if found is not None:
        return _mcp_details(call, found, status)
    acp_kind = str(call.get("kind") or "other")
    raw_input = call.get("rawInput")
    command = _command(raw_input)
    title = str(call.get("title") or "")
    if command is None and acp_kind == "execute" and raw_input is None and title:
        command = title  # agents that send no rawInput (Gemini CLI) title a command with its text
    kind, label = _KINDS.get(acp_kind, (ToolKind.UNKNOWN, title or "Running tool"))
    if acp_kind in ("other", "") and command is not None:
        kind, label = ToolKind.SHELL, RUNNING_COMMAND
    meta = call.get("_meta")
    if acp_kind in ("other", "") and isinstance(meta, Mapping) and meta.get("toolName") in _LOOKUPS:
        kind, label = ToolKind.SEARCH, SEARCHING
    locations = [loc.get("path") for loc in call.get("locations") or () if isinstance(loc, Mapping)]
    paths = [p for p in locations if isinstance(p, str) and p]
    changes = _changes(call, cwd, acp_kind)
    writes = acp_kind == "edit" and _writes(call)  # a write tool is a write from its start, whatever it replaces
    if kind is ToolKind.EDIT and (writes or (changes and all(c.kind == "add" for c in changes))):
        kind, label = ToolKind.WRITE, WRITING_FILE
    if kind is ToolKind.SHELL and command is not None:
        action = classify_command(command)
        kind, label = action.kind, action.title
        if action.path is not None and not paths:
            paths = [action.path]
    path = relative_path(paths[0], cwd) if paths else (changes[0].path if changes else None)
    raw_cwd = raw_input.get("cwd") if isinstance(raw_input, Mapping) else None
    raw: dict[str, Any] = {"acp_kind": acp_kind, "title": title}
    if isinstance(raw_input, Mapping):
        raw["rawInput"] = dict(raw_input)
    return HarnessToolDetails(
        kind=kind,
        title=label,
        path=path,
        command=command,
        cwd=raw_cwd if isinstance(raw_cwd, str) else None,
        status=status,
        exit_code=_exit_code(call.get("rawOutput")),
        summary=bounded_tail(for_people(output_text(call))) if status is not ToolStatus.STARTED else None,
        raw=raw,
        changes=changes,
    )
