"""Showing file changes on a terminal: a unified diff coloured and bounded, the `changed: …` line, `--diff` output;
every line of a diff is stripped of control characters before it reaches a terminal.

Layer: CLI rendering. Knows `FileChange` (any object with `path`, `kind`, `diff`, `move_path`, `note`) and the
terminal's codes; nothing of runs, providers or the store.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from harness_core.cli.render import terminal as term

if TYPE_CHECKING:
    from harness_core.events import FileChange

__all__ = ["APPROVAL_DIFF_LINES", "approval_diff", "changed_line", "diff_lines", "format_changes", "render_diff"]

APPROVAL_DIFF_LINES = 40
"""Lines of a change shown before an approval question; the rest is counted (`… N more lines`)."""


def render_diff(diff: str, colour: bool, max_lines: int | None = None) -> str:
    """`diff` for a terminal: `+` lines green, `-` red, `@@` cyan, file headers bold (plain without `colour`);
    with `max_lines`, at most that many lines, then `… N more lines`. No trailing newline."""
    lines = diff.translate(term.UNSAFE).splitlines()
    shown = lines if max_lines is None else lines[:max_lines]
    out = [_coloured(line) if colour else line for line in shown]
    if len(lines) > len(shown):
        more = len(lines) - len(shown)
        out.append(f"… {more} more line{'s' if more != 1 else ''}")
    return "\n".join(out)


def relative_headers(diff: str, cwd: str | None) -> str:
    """`diff` with its `--- a/ABS` / `+++ b/ABS` headers relative to `cwd` when ABS is inside it (agents that
    name files by absolute path give headers like `--- a/tmp/ws/notes.txt`)."""
    if not cwd:
        return diff
    inside = cwd.strip("/") + "/"
    lines = diff.split("\n")
    for i, line in enumerate(lines):
        for head in ("--- a/", "+++ b/"):
            if line.startswith(head) and line[len(head):].startswith(inside):
                lines[i] = head + line[len(head) + len(inside):]
    return "\n".join(lines)


def diff_lines(diff: str) -> int:
    """How many lines `diff` has (for a caller choosing a bound)."""
    return len(diff.splitlines())


def approval_diff(changes: Sequence[FileChange], colour: bool, max_lines: int = APPROVAL_DIFF_LINES,
                  cwd: str | None = None) -> str:
    """What an approval shows of the changes it asks for: each file's diff (bounded, `max_lines` in all), or a
    line saying what is known when the provider gave no diff. Empty when there are no changes. File headers
    naming a path inside `cwd` (the run's) read relative to it."""
    parts: list[str] = []
    left = max_lines
    for change in changes:
        if change.diff and left > 0:
            parts.append(render_diff(relative_headers(change.diff, cwd), colour, left))
            left -= min(left, diff_lines(change.diff))
        else:
            parts.append(_what(change))
    return "\n".join(parts)


def changed_line(paths: Iterable[str]) -> str:
    """`changed: a.py, notes.txt` (empty when no file changed): the line the end of a run prints."""
    names = [p.translate(term.UNSAFE) for p in paths]
    return f"changed: {', '.join(names)}" if names else ""


def format_changes(changes: Sequence[FileChange], colour: bool) -> str:
    """`--diff`: every file's whole diff, one after the other; a file without one gets a `# PATH: why` line."""
    parts = [render_diff(c.diff, colour) if c.diff else f"# {_what(c)}" for c in changes]
    for change in changes:
        if change.diff and change.note:
            parts.append(f"# {change.path.translate(term.UNSAFE)}: {change.note.translate(term.UNSAFE)}")
    return "\n".join(parts)


def _what(change: FileChange) -> str:
    """One line for a change without a diff: `notes.txt (modify): why`."""
    name = change.path if not change.move_path else f"{change.path} -> {change.move_path}"
    why = change.note or "no diff known"
    return f"{name} ({change.kind}): {why}".translate(term.UNSAFE)


def _coloured(line: str) -> str:
    if line.startswith(("+++", "---")):
        return f"{term.BOLD}{line}{term.RESET}"
    if line.startswith("+"):
        return f"{term.GREEN}{line}{term.RESET}"
    if line.startswith("-"):
        return f"{term.RED}{line}{term.RESET}"
    if line.startswith("@@"):
        return f"{term.CYAN}{line}{term.RESET}"
    return line
