"""What a shell command does, read from its text: "Reading file notes.txt", "Searching", "Running command".

Layer: provider (codex-exec), pure. `codex exec --json` reports only the command line (`/bin/bash -lc '...'`),
not the structured `commandActions` the app-server sends, so the labels the app-server path shows are
inferred here from the command text. Knows nothing of events, processes or the wire format.

Only simple commands are classified; anything compound (pipes, `&&`, redirections, substitutions) is a plain
"Running command", which is also what the app-server reports for them (`commandActions: [{type: unknown}]`).
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass

from harness_core.events import ToolKind

__all__ = ["CommandAction", "classify_command", "unwrap_shell"]

_SHELLS = {"bash", "sh", "zsh", "dash"}
_SHELL_FLAGS = {"-c", "-lc", "-cl"}
_COMPOUND = re.compile(r"&&|\|\||[;|<>`]|\$\(")
_READERS = {"cat", "bat", "nl", "less", "more"}
_HEAD_TAIL = {"head", "tail"}
_LISTERS = {"ls", "tree", "exa", "eza"}
_SEARCHERS = {"rg", "grep", "egrep", "fgrep", "ag", "ack", "find", "fd", "git-grep"}


@dataclass(frozen=True)
class CommandAction:
    """The display-relevant reading of one command."""

    kind: ToolKind
    title: str
    command: str
    """The command without its `bash -lc` wrapper."""
    path: str | None = None


def unwrap_shell(command: str) -> str:
    """`/bin/bash -lc 'cat x'` → `cat x`; anything else is returned unchanged."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return command
    if len(argv) == 3 and os.path.basename(argv[0]) in _SHELLS and argv[1] in _SHELL_FLAGS:
        return argv[2]
    return command


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
    if prog in _READERS:
        files = _operands(args)
        return files[0] if len(files) == 1 else None
    if prog in _HEAD_TAIL:
        rest = list(args)
        # `head -n 5 FILE`, `tail -n +3 FILE`, `head -5 FILE`
        cleaned: list[str] = []
        skip = False
        for arg in rest:
            if skip:
                skip = False
                continue
            if arg in {"-n", "-c", "--lines", "--bytes"}:
                skip = True
                continue
            cleaned.append(arg)
        files = _operands(cleaned)
        return files[0] if len(files) == 1 else None
    # `sed -n '1,200p' FILE` only: any other sed may edit.
    if prog == "sed" and len(args) == 3 and args[0] == "-n" and re.fullmatch(r"\d+(,\d+)?p", args[1]):
        return args[2]
    return None


def classify_command(command: str) -> CommandAction:
    """Read `command` (as codex reports it) into a kind, a title and maybe a path."""
    inner = unwrap_shell(command).strip()
    shell = CommandAction(ToolKind.SHELL, "Running command", inner)
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
        return CommandAction(ToolKind.READ, "Reading file", inner, path)
    if prog in _LISTERS:
        operands = _operands(args)
        where = operands[0] if len(operands) == 1 else None
        return CommandAction(ToolKind.SEARCH, "Listing files", inner, where)
    if prog in _SEARCHERS:
        return CommandAction(ToolKind.SEARCH, "Searching", inner)
    return shell
