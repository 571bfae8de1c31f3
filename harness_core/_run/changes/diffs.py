"""Unified diffs of one file, pure: build one from two texts, read its hunks, apply them forwards or backwards.

Layer: core runtime helper, pure (no I/O). Knows the unified diff format and nothing of events, providers or
the workspace. `tracker` builds the run's diffs here and applies one backwards to get a file's content before a
change; how a hunk is located: docs/runs.md (events).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

__all__ = ["Hunk", "apply_hunks", "parse_hunks", "unified_diff"]

_HEADER = re.compile(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def unified_diff(path: str, before: str | None, after: str | None, *, move_path: str | None = None) -> str:
    """The unified diff of `path` from `before` to `after` (None: the file does not exist), headed `--- a/PATH`
    and `+++ b/PATH` (`/dev/null` for a side that does not exist). Empty when nothing changed."""
    old, new = (before or "").splitlines(keepends=True), (after or "").splitlines(keepends=True)
    lines = list(difflib.unified_diff(old, new, "/dev/null" if before is None else f"a/{path}",
                                      "/dev/null" if after is None else f"b/{move_path or path}", n=3))
    if not lines and before is None and after is not None:  # an empty file created
        return f"--- /dev/null\n+++ b/{move_path or path}\n"
    out = []
    for line in lines:
        if line.endswith("\n"):
            out.append(line)
        else:  # the last line of a side without a newline
            out.append(line + "\n\\ No newline at end of file\n")
    if lines and lines[0].startswith("---"):  # difflib adds trailing spaces to headers without dates
        out[0], out[1] = out[0].rstrip() + "\n", out[1].rstrip() + "\n"
    return "".join(out)


@dataclass
class Hunk:
    """One hunk: its old side (context and removed lines) and new side (context and added lines), with newlines."""

    old_start: int | None
    new_start: int | None
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)


def parse_hunks(diff: str) -> list[Hunk]:
    """The hunks of a one-file unified diff (file headers and `diff --git`/`index` lines skipped). A line of
    neither side (a blank line some tools write for an empty context line) counts as empty context."""
    hunks: list[Hunk] = []
    current: Hunk | None = None
    last = ""
    for raw in diff.splitlines(keepends=True):
        if raw.startswith("@@"):
            match = _HEADER.match(raw)
            current = Hunk(int(match.group(1)) if match else None, int(match.group(2)) if match else None)
            hunks.append(current)
            continue
        if current is None:
            continue
        if raw.startswith("\\"):  # "\ No newline at end of file": the line before has none
            if last in (" ", "-") and current.old:
                current.old[-1] = current.old[-1].removesuffix("\n")
            if last in (" ", "+") and current.new:
                current.new[-1] = current.new[-1].removesuffix("\n")
            continue
        tag, body = (raw[:1], raw[1:]) if raw[:1] in (" ", "-", "+") else (" ", raw.lstrip(" \t") or "\n")
        if not body.endswith("\n"):
            body += "\n"
        if tag in (" ", "-"):
            current.old.append(body)
        if tag in (" ", "+"):
            current.new.append(body)
        last = tag
    return hunks


def apply_hunks(content: str, hunks: list[Hunk], *, reverse: bool = False) -> str | None:
    """`content` with `hunks` applied (old side → new side; `reverse`: new → old), or None when a hunk's lines
    are not found in order."""
    lines = content.splitlines(keepends=True)
    out: list[str] = []
    pos = 0
    shift = 0  # lines added minus removed so far: where the next hunk's hint lands
    for hunk in hunks:
        find, put = (hunk.new, hunk.old) if reverse else (hunk.old, hunk.new)
        start = hunk.new_start if reverse else hunk.old_start
        hint = max(0, (start or 1) - 1 + shift) if start is not None else pos
        if not find:  # a pure insertion: after line `start`
            index = min(max(pos, start + shift if start is not None else pos), len(lines))
        else:
            found = _find(lines, find, pos, hint)
            if found is None:
                return None
            index = found
        out += lines[pos:index]
        out += put
        pos = index + len(find)
        shift += len(put) - len(find)
    out += lines[pos:]
    return "".join(out)


def _find(lines: list[str], block: list[str], pos: int, hint: int) -> int | None:
    """The index of `block` in `lines` at or after `pos`, the one nearest `hint`."""
    size = len(block)
    first = block[0]
    best: int | None = None
    for index in range(pos, len(lines) - size + 1):
        if lines[index] == first and lines[index:index + size] == block:
            if best is None or abs(index - hint) < abs(best - hint):
                best = index
            elif index > hint:
                break
    return best
