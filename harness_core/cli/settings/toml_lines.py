"""Where each key of a TOML text is (the line of every table header and key, by its full key path), so a
configuration error can name the file and line (`tomllib` reports only syntax errors' lines).

Layer: CLI, pure: the standard library only. Knows TOML's key syntax, nothing of what the keys mean.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["key_lines", "line_of", "toml_value"]

_BARE = r"[A-Za-z0-9_-]+|\"(?:[^\"\\]|\\.)*\"|'[^']*'"
_DOTTED = rf"(?:{_BARE})(?:\s*\.\s*(?:{_BARE}))*"
_TABLE = re.compile(rf"\[\[?\s*({_DOTTED})\s*\]\]?")
_KEY = re.compile(rf"({_DOTTED})\s*=")


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """The first line of each table header and key (as its full key path) in a TOML text: where an error is."""
    lines: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if header := _TABLE.match(line):
            table = _split(header[1])
            lines.setdefault(table, number)
        elif key := _KEY.match(line):
            lines.setdefault((*table, *_split(key[1])), number)
    return lines


def _split(dotted: str) -> tuple[str, ...]:
    parts = re.findall(_BARE, dotted)
    return tuple(p[1:-1] if p[:1] in "\"'" else p for p in parts)


def line_of(lines: Mapping[tuple[str, ...], int], loc: tuple[str, ...]) -> int:
    """The line of the longest prefix of `loc` the file names (1 when none: an empty file)."""
    for end in range(len(loc), 0, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return 1


def toml_value(value: Any) -> str:
    """A scalar as TOML writes it (in an error message: what the file says, not a Python repr)."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)
