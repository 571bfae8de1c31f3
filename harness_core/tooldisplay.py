"""Provider-neutral pieces of a tool's display: the standard titles, reading a shell command, bounded output.

Layer: core helpers for providers, pure. Knows `ToolKind` and nothing else of Harness: no provider, no wire
format, no events, no I/O. Providers build `HarnessToolDetails` from their own wire shapes; what does not depend
on one lives here (docs/providers.md, tool display).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass

from harness_core.events import ToolKind

__all__ = [
    "DELETING_FILE",
    "EDITING_FILE",
    "LISTING_FILES",
    "OUTPUT_CHARS",
    "READING_FILE",
    "RUNNING_COMMAND",
    "SEARCHING",
    "SUMMARY_CHARS",
    "WRITING_FILE",
    "CommandAction",
    "bounded_head",
    "bounded_tail",
    "classify_command",
    "command_display",
    "file_change_display",
    "mcp_call_text",
    "unwrap_shell",
]

READING_FILE = "Reading file"
LISTING_FILES = "Listing files"
SEARCHING = "Searching"
RUNNING_COMMAND = "Running command"
WRITING_FILE = "Writing file"
EDITING_FILE = "Editing file"
DELETING_FILE = "Deleting file"

SUMMARY_CHARS = 2_000
"""Longest `display.summary` (the tail of a command's output, a diff, an error)."""
OUTPUT_CHARS = 64_000
"""Longest `tool_result.output`."""

_COMMAND_DISPLAY: dict[str, tuple[ToolKind, str]] = {
    "read": (ToolKind.READ, READING_FILE),
    "list": (ToolKind.SEARCH, LISTING_FILES),
    "search": (ToolKind.SEARCH, SEARCHING),
    "shell": (ToolKind.SHELL, RUNNING_COMMAND),
}
_FILE_CHANGE_DISPLAY: dict[str, tuple[ToolKind, str]] = {
    "add": (ToolKind.WRITE, WRITING_FILE),
    "update": (ToolKind.EDIT, EDITING_FILE),
    "delete": (ToolKind.WRITE, DELETING_FILE),
}


def command_display(kind: str) -> tuple[ToolKind, str]:
    """The kind and title of a command that reads, lists, searches or does anything else ("shell")."""
    return _COMMAND_DISPLAY.get(kind, _COMMAND_DISPLAY["shell"])


def file_change_display(change: str) -> tuple[ToolKind, str]:
    """The kind and title of a file change: "add" (write), "delete", or anything else (an edit)."""
    return _FILE_CHANGE_DISPLAY.get(change, (ToolKind.EDIT, EDITING_FILE))


# --- bounds ----------------------------------------------------------------------------------------------


def bounded_tail(text: str | None, limit: int = SUMMARY_CHARS) -> str | None:
    """The last `limit` characters of `text`, marked when cut (a summary: the end of output matters most).
    None for no text or empty text."""
    if not text:
        return None
    if len(text) <= limit:
        return text
    return f"[… {len(text) - limit} earlier characters cut]\n{text[-limit:]}"


def bounded_head(text: str | None, limit: int = OUTPUT_CHARS) -> str | None:
    """The first `limit` characters of `text`, marked when cut (a tool's output as the model saw it)."""
    if text is None or len(text) <= limit:
        return text
    return f"{text[:limit]}\n[… {len(text) - limit} more characters cut]"


# --- shell commands --------------------------------------------------------------------------------------

_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
_SHELL_FLAGS = frozenset({"-c", "-lc", "-cl"})
_COMPOUND = re.compile(r"&&|\|\||[;|<>`]|\$\(")
_READERS = frozenset({"cat", "bat", "nl", "less", "more"})
_HEAD_TAIL = frozenset({"head", "tail"})
_COUNT_FLAGS = frozenset({"-n", "-c", "--lines", "--bytes"})
_LISTERS = frozenset({"ls", "tree", "exa", "eza"})
_SEARCHERS = frozenset({"rg", "grep", "egrep", "fgrep", "ag", "ack", "find", "fd", "git-grep"})


def unwrap_shell(command: str) -> str:
    """`/bin/bash -lc 'cat x'` → `cat x`; anything else (or text that does not parse) is returned unchanged."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return command
    if len(argv) == 3 and os.path.basename(argv[0]) in _SHELLS and argv[1] in _SHELL_FLAGS:
        return argv[2]
    return command


@dataclass(frozen=True)
class CommandAction:
    """What a shell command does, for its display."""

    kind: ToolKind
    title: str
    command: str
    """The command without its `bash -lc` wrapper."""
    path: str | None = None
    """The file read or the directory listed, as written in the command (relative paths stay relative)."""


def classify_command(command: str) -> CommandAction:
    """Read a command's text into a kind, a title and maybe a path: "Reading file" for `cat F`, `head -n 5 F`,
    `sed -n '1,9p' F`; "Listing files" for `ls`/`tree`; "Searching" for `rg`/`grep`/`find`/`git grep`.

    Only simple commands are classified; anything compound (pipes, `&&`, redirections, substitutions) or
    unparseable is a plain "Running command", as is every other program.
    """
    inner = unwrap_shell(command).strip()
    shell = CommandAction(ToolKind.SHELL, RUNNING_COMMAND, inner)
    if not inner or _COMPOUND.search(inner):
        return shell
    try:
        argv = shlex.split(inner)
    except ValueError:
        return shell
    if not argv:
        return shell
    prog, args = os.path.basename(argv[0]), argv[1:]
    if prog == "git" and args[:1] == ["grep"]:
        prog, args = "git-grep", args[1:]
    path = _read_path(prog, args)
    if path is not None:
        return CommandAction(ToolKind.READ, READING_FILE, inner, path)
    if prog in _LISTERS:
        operands = _operands(args)
        return CommandAction(ToolKind.SEARCH, LISTING_FILES, inner, operands[0] if len(operands) == 1 else None)
    if prog in _SEARCHERS:
        return CommandAction(ToolKind.SEARCH, SEARCHING, inner)
    return shell


def _operands(args: list[str]) -> list[str]:
    """Arguments that are not flags (`--` ends flags)."""
    out: list[str] = []
    flags_done = False
    for arg in args:
        if not flags_done and arg == "--":
            flags_done = True
        elif flags_done or not arg.startswith("-") or arg == "-":
            out.append(arg)
    return out


def _read_path(prog: str, args: list[str]) -> str | None:
    """The one file a reading command reads, or None."""
    if prog in _READERS:
        files = _operands(args)
        return files[0] if len(files) == 1 else None
    if prog in _HEAD_TAIL:  # `head -n 5 FILE`, `tail -n +3 FILE`, `head -5 FILE`
        cleaned: list[str] = []
        skip = False
        for arg in args:
            if skip:
                skip = False
            elif arg in _COUNT_FLAGS:
                skip = True
            else:
                cleaned.append(arg)
        files = _operands(cleaned)
        return files[0] if len(files) == 1 else None
    # `sed -n '1,200p' FILE` only: any other sed may edit.
    if prog == "sed" and len(args) == 3 and args[0] == "-n" and re.fullmatch(r"\d+(,\d+)?p", args[1]):
        return args[2]
    return None


MCP_ARGUMENT_CHARS = 60
"""Longest value of one argument in `mcp_call_text` (the whole call is cut to a line by the renderer)."""


def mcp_call_text(tool: str, arguments: Mapping[str, object] | None,
                  argument_chars: int | None = MCP_ARGUMENT_CHARS) -> str:
    """An MCP tool call as the line every provider shows: `add(a=2, b=3)`, `echo(message='hi')` — the tool's
    name and its arguments in order, each value as JSON (strings quoted), one longer than `argument_chars` cut
    with `…` (None: none cut, as an approval question shows what it asks about).

    An MCP tool's display is `kind=mcp`, `title` the tool's name, `command` this text, `summary` its result."""
    parts: list[str] = []
    for name, value in (arguments or {}).items():
        text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        if argument_chars is not None and len(text) > argument_chars:
            text = text[: argument_chars - 1] + "…"
        parts.append(f"{name}={text}")
    return f"{tool}({', '.join(parts)})"
