"""Claude Code's file tools (Edit, MultiEdit, Write) → provider-neutral file changes (`HarnessToolDetails.changes`).

Layer: provider mapping, pure but for `read_current` (called for an approval: the tool has not run yet, so the
file's content then is the content before). Knows the file tools' inputs and the `tool_use_result` the CLI adds to
their results; knows nothing of processes or the runner. What each event can say: providers/claude/README.md.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_core import HarnessToolDetails, ToolStatus

from harness_claude.display import relative_path, tool_display

if TYPE_CHECKING:
    from harness_core.provider import RunContext

__all__ = ["FILE_TOOLS", "file_display", "input_changes", "read_current", "result_changes", "result_display",
           "with_changes"]

FILE_TOOLS = frozenset({"Edit", "MultiEdit", "Write"})

Change = dict[str, Any]
"""A `FileChange` as its fields (validated into one by `HarnessToolDetails`)."""


_READ_LIMIT = 1 << 20


def file_display(name: str, tool_input: dict[str, Any] | None, cwd: str | None, *,
                 current: dict[str, str | None] | None = None) -> HarnessToolDetails:
    """`tool_display` with the change a file tool asks for (see `input_changes`)."""
    return with_changes(tool_display(name, tool_input, cwd), input_changes(name, tool_input, cwd, current=current))


def result_display(display: HarnessToolDetails, name: str, tool_input: dict[str, Any] | None, msg: dict[str, Any],
                   cwd: str | None) -> HarnessToolDetails:
    """A completed file tool's result display with the change it made (`result_changes`, from the `user` line)."""
    if display.status is not ToolStatus.COMPLETED:
        return display
    return with_changes(display, result_changes(name, tool_input, msg.get("tool_use_result"), cwd))


async def read_current(ctx: RunContext, request: dict[str, Any], cwd: str | None) -> dict[str, str | None] | None:
    """The current content of the file a `can_use_tool` request for a file tool names (None: it does not exist),
    for an exact diff in the approval; None when it is not a file tool or the file is not text. Read through
    `ctx.read_side_input`, so a wire log records it and a replay gets the same answer."""
    tool_input = request.get("input")
    raw = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if request.get("tool_name") not in FILE_TOOLS or not isinstance(raw, str) or not raw:
        return None
    target = Path(cwd or ".") / raw
    data = await ctx.read_side_input(f"file:{raw}", lambda: _read_bytes(target))
    if data is None:
        return {raw: None}
    try:
        return None if b"\0" in data else {raw: data.decode("utf-8")}
    except UnicodeDecodeError:
        return None


def _read_bytes(target: Path) -> bytes | None:
    """The file's bytes; None when it does not exist; a NUL byte alone (unknown) when it is too large or unreadable."""
    try:
        if not target.exists():
            return None
        if target.stat().st_size > _READ_LIMIT:
            return b"\0"
        return target.read_bytes()
    except OSError:
        return b"\0"


def with_changes(display: HarnessToolDetails, changes: tuple[Change, ...]) -> HarnessToolDetails:
    """`display` with its `changes` (plain dicts, validated into `FileChange`s by the model)."""
    if not changes:
        return display
    return HarnessToolDetails.model_validate({**dict(display), "changes": changes})


def input_changes(name: str, tool_input: dict[str, Any] | None, cwd: str | None, *,
                  current: dict[str, str | None] | None = None) -> tuple[Change, ...]:
    """The change a file tool call asks for. `current` maps the raw `file_path` to the file's content now
    (None: it does not exist), when the caller read it; then the diff is exact."""
    inp = tool_input or {}
    raw = inp.get("file_path")
    if name not in FILE_TOOLS or not isinstance(raw, str) or not raw:
        return ()
    path = relative_path(raw, cwd) or raw
    known = current is not None and raw in current
    before = current.get(raw) if current is not None else None
    edits = _edits(name, inp)
    if name == "Write":
        content = inp.get("content")
        if not known or not isinstance(content, str):
            return ({"path": path, "kind": "modify"},)
        return ({"path": path, "kind": "add" if before is None else "modify",
                 "diff": _file_diff(path, before, content)},)
    if edits is None:
        return ({"path": path, "kind": "modify"},)
    if known and before is not None:
        after = before
        for old, new, every in edits:
            if old not in after:
                break
            after = after.replace(old, new) if every else after.replace(old, new, 1)
        else:
            return ({"path": path, "kind": "modify", "diff": _file_diff(path, before, after)},)
    hunks = "".join(_snippet_hunk(old, new) for old, new, _ in edits)
    return ({"path": path, "kind": "modify", "diff": f"--- a/{path}\n+++ b/{path}\n{hunks}" if hunks else None},)


def result_changes(name: str, tool_input: dict[str, Any] | None, rich: Any, cwd: str | None) -> tuple[Change, ...]:
    """The change a file tool made, from the CLI's `tool_use_result` (exact); what the input says without one."""
    if name not in FILE_TOOLS:
        return ()
    if not isinstance(rich, dict):
        return input_changes(name, tool_input, cwd)
    raw = rich.get("filePath") or (tool_input or {}).get("file_path")
    if not isinstance(raw, str) or not raw:
        return ()
    path = relative_path(raw, cwd) or raw
    if rich.get("type") == "create" and isinstance(rich.get("content"), str):
        return ({"path": path, "kind": "add", "diff": _file_diff(path, None, rich["content"])},)
    patch = rich.get("structuredPatch")
    if isinstance(patch, list) and patch:
        return ({"path": path, "kind": "modify", "diff": f"--- a/{path}\n+++ b/{path}\n{_hunks(patch)}"},)
    return input_changes(name, tool_input, cwd)


def _edits(name: str, inp: dict[str, Any]) -> list[tuple[str, str, bool]] | None:
    if name == "Edit":
        pairs: list[Any] = [inp]
    elif name == "MultiEdit" and isinstance(inp.get("edits"), list):
        pairs = inp["edits"]
    else:
        return None
    out = []
    for edit in pairs:
        if not isinstance(edit, dict):
            return None
        old, new = edit.get("old_string"), edit.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        out.append((old, new, edit.get("replace_all") is True))
    return out


def _file_diff(path: str, before: str | None, after: str) -> str:
    lines = difflib.unified_diff((before or "").splitlines(keepends=True), after.splitlines(keepends=True),
                                 "/dev/null" if before is None else f"a/{path}", f"b/{path}")
    return "".join(_terminated(line) for line in lines)


def _snippet_hunk(old: str, new: str) -> str:
    """The lines of `old` removed and of `new` added, under a header without line numbers."""
    lines = list(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), n=1_000_000))
    body = [line if line.endswith("\n") else line + "\n" for line in lines[2:] if not line.startswith("@@")]
    return "@@ @@\n" + "".join(body) if body else ""


def _hunks(patch: list[Any]) -> str:
    """Claude Code's `structuredPatch` (hunks with `oldStart`, `oldLines`, `newStart`, `newLines`, `lines`)."""
    out = []
    for hunk in patch:
        if not isinstance(hunk, dict):
            continue
        out.append(f"@@ -{hunk.get('oldStart', 0)},{hunk.get('oldLines', 0)} "
                   f"+{hunk.get('newStart', 0)},{hunk.get('newLines', 0)} @@\n")
        out += [f"{line}\n" for line in hunk.get("lines") or [] if isinstance(line, str)]
    return "".join(out)


def _terminated(line: str) -> str:
    return line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
