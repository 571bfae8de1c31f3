"""The `apply_patch` format: parse a patch, compute the new file contents, write them inside the workspace.

Layer: pure logic plus one small writer (`write_changes`). Knows the patch grammar and file paths; must not
know HTTP, the Responses wire, Harness events or processes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Union

__all__ = [
    "AddFile",
    "Change",
    "DeleteFile",
    "Hunk",
    "PatchError",
    "UpdateFile",
    "apply_hunks",
    "parse_patch",
    "plan_patch",
    "resolve_inside",
    "write_changes",
]


class PatchError(ValueError):
    """The patch is malformed, does not apply, or touches a path it must not; the message says which."""


@dataclass(frozen=True)
class Hunk:
    """One `@@` section: an optional anchor line (text after `@@`) and its ` `/`-`/`+` lines."""

    anchor: str = ""
    lines: tuple[tuple[Literal[" ", "-", "+"], str], ...] = ()

    @property
    def old(self) -> list[str]:
        return [text for op, text in self.lines if op != "+"]

    @property
    def new(self) -> list[str]:
        return [text for op, text in self.lines if op != "-"]


@dataclass(frozen=True)
class AddFile:
    path: str
    content: str


@dataclass(frozen=True)
class DeleteFile:
    path: str


@dataclass(frozen=True)
class UpdateFile:
    path: str
    hunks: tuple[Hunk, ...] = ()
    move_to: str | None = None


FileOp = Union[AddFile, DeleteFile, UpdateFile]


@dataclass(frozen=True)
class Change:
    """What one file op does: `content` None deletes `path`; `removed` is a path deleted by a move."""

    action: Literal["add", "update", "delete"]
    path: str
    content: str | None
    removed: tuple[str, ...] = field(default=())


_BEGIN, _END = "*** Begin Patch", "*** End Patch"
_ADD, _UPDATE, _DELETE, _MOVE = "*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "


def parse_patch(text: str) -> list[FileOp]:
    """Parse a whole patch into file operations (raises `PatchError` naming the offending line)."""
    lines = text.strip().split("\n")
    if not lines or lines[0].strip() != _BEGIN:
        raise PatchError(f"a patch must start with {_BEGIN!r}")
    if lines[-1].strip() != _END:
        raise PatchError(f"a patch must end with {_END!r}")
    ops: list[FileOp] = []
    i, end = 1, len(lines) - 1
    while i < end:
        line = lines[i]
        if line.startswith(_ADD):
            body: list[str] = []
            i += 1
            while i < end and not lines[i].startswith("*** "):
                if not lines[i].startswith("+"):
                    raise PatchError(f"line {i + 1}: lines of an added file start with '+': {lines[i]!r}")
                body.append(lines[i][1:])
                i += 1
            ops.append(AddFile(line[len(_ADD) :].strip(), "".join(f"{b}\n" for b in body)))
        elif line.startswith(_DELETE):
            ops.append(DeleteFile(line[len(_DELETE) :].strip()))
            i += 1
        elif line.startswith(_UPDATE):
            path, move_to = line[len(_UPDATE) :].strip(), None
            i += 1
            if i < end and lines[i].startswith(_MOVE):
                move_to = lines[i][len(_MOVE) :].strip()
                i += 1
            hunks, i = _parse_hunks(lines, i, end)
            ops.append(UpdateFile(path, tuple(hunks), move_to))
        elif not line.strip():
            i += 1
        else:
            raise PatchError(
                f"line {i + 1}: expected a file header (*** Add/Update/Delete File:), got {line!r}"
            )
    if not ops:
        raise PatchError("the patch changes no file")
    return ops


def _parse_hunks(lines: list[str], i: int, end: int) -> tuple[list[Hunk], int]:
    hunks: list[Hunk] = []
    anchor: str | None = None
    body: list[tuple[Literal[" ", "-", "+"], str]] = []

    def flush() -> None:
        if anchor is not None or body:
            hunks.append(Hunk(anchor or "", tuple(body)))

    while i < end and not (lines[i].startswith("*** ") and lines[i] != "*** End of File"):
        line = lines[i]
        if line.startswith("@@"):
            flush()
            anchor, body = line[2:].strip(), []
        elif line == "*** End of File":
            pass
        elif line[:1] in (" ", "-", "+"):
            body.append((line[0], line[1:]))  # type: ignore[arg-type]
        elif line == "":
            body.append((" ", ""))  # an empty context line whose leading space was stripped
        else:
            raise PatchError(f"line {i + 1}: hunk lines start with ' ', '-' or '+': {line!r}")
        i += 1
    flush()
    if not hunks:
        raise PatchError(f"line {i}: an updated file needs at least one @@ hunk")
    return hunks, i


def _find(haystack: list[str], needle: list[str], start: int) -> int:
    """Index of `needle` in `haystack` from `start`: exact, then ignoring trailing, then all spacing."""
    for norm in (lambda s: s, str.rstrip, str.strip):
        want = [norm(s) for s in needle]
        for pos in range(start, len(haystack) - len(needle) + 1):
            if [norm(s) for s in haystack[pos : pos + len(needle)]] == want:
                return pos
    return -1


def apply_hunks(original: str, hunks: tuple[Hunk, ...] | list[Hunk], path: str = "file") -> str:
    """The text of `original` after `hunks`, in order; the result ends with a newline."""
    lines = original.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    cursor = 0
    for hunk in hunks:
        if hunk.anchor:
            at = _find(lines, [hunk.anchor], cursor)
            if at < 0:
                raise PatchError(f"{path}: cannot find the @@ anchor line {hunk.anchor!r}")
            cursor = at + 1
        old = hunk.old
        if not old:
            lines[len(lines) :] = hunk.new
            cursor = len(lines)
            continue
        at = _find(lines, old, cursor)
        if at < 0:
            raise PatchError(f"{path}: a hunk does not apply; expected lines not found: {old[:3]!r}")
        lines[at : at + len(old)] = hunk.new
        cursor = at + len(hunk.new)
    return "\n".join(lines) + "\n" if lines else ""


def plan_patch(ops: list[FileOp], read: Callable[[str], str | None]) -> list[Change]:
    """The changes `ops` make, given `read(path)` (current text, None if missing); nothing is written."""
    changes: list[Change] = []
    for op in ops:
        current = None if isinstance(op, AddFile) else read(op.path)
        if isinstance(op, AddFile):
            changes.append(Change("add", op.path, op.content))
        elif current is None:
            raise PatchError(
                f"{op.path}: no such file to {'delete' if isinstance(op, DeleteFile) else 'update'}"
            )
        elif isinstance(op, DeleteFile):
            changes.append(Change("delete", op.path, None))
        else:
            content = apply_hunks(current, op.hunks, op.path)
            if op.move_to and op.move_to != op.path:
                changes.append(Change("update", op.move_to, content, removed=(op.path,)))
            else:
                changes.append(Change("update", op.path, content))
    return changes


def resolve_inside(root: Path, rel: str) -> Path:
    """`rel` resolved under `root`; raises `PatchError` when it escapes `root` (absolute, `..`, symlinks)."""
    base = root.resolve()
    target = (base / rel).resolve()
    if target != base and base not in target.parents:
        raise PatchError(
            f"{rel}: outside the working directory {base}; patches may only touch files inside it"
        )
    return target


def write_changes(root: Path, changes: list[Change]) -> None:
    """Write `changes` under `root` (every path is checked before anything is written)."""
    targets = [(resolve_inside(root, c.path), c) for c in changes]
    removed = [resolve_inside(root, p) for c in changes for p in c.removed]
    for target, change in targets:
        if change.content is None:
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(change.content)
    for path in removed:
        path.unlink(missing_ok=True)
