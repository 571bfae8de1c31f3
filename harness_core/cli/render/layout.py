"""Text laid out for a terminal's width: tables (aligned columns, fitted: cells cut or wrapped, a column moved
under its row, else `field: value` lines per row; the one table renderer of `demo`, `providers`, `runs`) and lines
broken between words or parts.

Layer: CLI rendering, loaded at start-up: the standard library only. Pure text; nothing of runs or events.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TextIO

__all__ = ["Column", "fit_parts", "fit_table", "fit_text", "output_width", "table"]

_GAP = 2  # spaces between columns


@dataclass(frozen=True)
class Column:
    """One column of a fitted table: its header and how its cells may give way to a narrow terminal."""

    name: str
    fit: Literal["keep", "cut", "wrap"] = "keep"
    """``keep``: never shortened (ids stay whole, to be copied); ``cut``: shortened to one line ending in the
    continuation mark; ``wrap``: continued on the lines below, within the column."""
    least: int = 8
    """The narrowest a ``cut`` or ``wrap`` column may become (its header always fits)."""
    under: bool = False
    """When the row is too wide: this cell goes on a line of its own under the row, indented."""
    title: bool = False
    """In the narrowest form (a block per row): on the block's first line, without its name."""


def table(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows as left-aligned columns two spaces apart, without trailing blanks (the first row is the header)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [(" " * _GAP).join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def fit_table(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int | None, *,
              more: str = "…") -> list[str]:
    """The header and `rows` as lines no longer than `width` (None: as wide as they are, for a pipe or a file).

    In order of preference: the plain table; `cut` and `wrap` columns narrowed (no narrower than their `least`),
    the widest first; the same with the `under` columns on lines of their own; a block per row (its `title`
    cells, then `  field: value` lines wrapped to `width`). A `keep` cell is never cut or broken, so a line is
    wider than `width` only when one such cell is.
    """
    header = [column.name for column in columns]
    if width is None or _width(table([header, *rows])) <= width:
        return table([header, *rows])
    for moved in (False, True):
        if moved and not any(column.under for column in columns):
            break
        inline = [i for i, column in enumerate(columns) if not (moved and column.under)]
        widths = _share([columns[i] for i in inline], [[row[i] for i in inline] for row in [header, *rows]], width)
        if widths is not None:
            return _narrowed(columns, rows, inline, widths, width, more)
    return _blocks(columns, rows, width)


def fit_text(text: str, width: int | None, indent: str = "  ") -> list[str]:
    """`text` as lines of at most `width` characters, broken between words, the lines after the first indented
    by `indent`; a word longer than the width (a path, an id) is kept whole on a line of its own. One line when
    `width` is None (off a terminal)."""
    if width is None or len(text) <= width:
        return [text]
    return textwrap.wrap(text, width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


def fit_parts(parts: Sequence[str], width: int | None, sep: str = " ", indent: str = "  ") -> list[str]:
    """`parts` joined by `sep` as lines of at most `width` characters, broken only between parts, the lines after
    the first indented by `indent` (a part longer than a line is kept whole on its own). One line when `width` is
    None (off a terminal) or it fits."""
    text = sep.join(parts)
    if width is None or len(text) <= width:
        return [text]
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + len(sep) + len(part) <= width:
            lines[-1] += sep + part
        else:
            lines.append(indent + part if lines else part)
    return lines


def output_width(stream: TextIO, environ: Mapping[str, str] | None = None) -> int | None:
    """The width text on `stream` must fit when it is a terminal: ``$COLUMNS`` when set, else the terminal's.
    None off a terminal: a pipe or a file gets whole lines, for `grep`, `cut` and scripts."""
    isatty = getattr(stream, "isatty", None)
    if isatty is None or not isatty():
        return None
    env = os.environ if environ is None else environ
    columns = env.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(stream.fileno()).columns or None
    except (AttributeError, OSError, ValueError):
        return None


def _width(lines: list[str]) -> int:
    return max((len(line) for line in lines), default=0)


def _share(columns: list[Column], cells: list[list[str]], width: int) -> list[int] | None:
    """Each column's width so that the row fits `width`, or None when the narrowest allowed does not fit. Kept
    columns are as wide as their widest cell; the others get what is left, the widest narrowed first."""
    natural = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    floor = [n if c.fit == "keep" else min(n, max(c.least, len(c.name), 1)) for c, n in zip(columns, natural,
                                                                                              strict=True)]
    budget = width - _GAP * (len(columns) - 1)
    if sum(floor) > budget:
        return None
    low, high = 0, max(natural)  # the largest cap under which every narrowed column fits the budget
    while low < high:
        cap = (low + high + 1) // 2
        if sum(max(f, min(n, cap)) for f, n in zip(floor, natural, strict=True)) <= budget:
            low = cap
        else:
            high = cap - 1
    widths = [max(f, min(n, low)) for f, n in zip(floor, natural, strict=True)]
    spare = budget - sum(widths)
    for i in sorted(range(len(widths)), key=lambda i: -natural[i]):  # what the cap left over, to the widest
        extra = min(spare, natural[i] - widths[i])
        widths[i] += extra
        spare -= extra
    return widths


def _fitted(text: str, column: Column, width: int, more: str) -> list[str]:
    """One cell as lines of at most `width` characters, as its column allows."""
    if column.fit == "keep" or len(text) <= width:
        return [text]
    if column.fit == "cut":
        return [text[: max(width - len(more), 1)] + more]
    return textwrap.wrap(text, width, break_on_hyphens=False) or [""]


def _narrowed(columns: Sequence[Column], rows: Sequence[Sequence[str]], inline: list[int], widths: list[int],
              width: int, more: str) -> list[str]:
    lines = [(" " * _GAP).join(columns[i].name.ljust(w) for i, w in zip(inline, widths, strict=True)).rstrip()]
    for row in rows:
        cells = [_fitted(row[i], columns[i], w, more) for i, w in zip(inline, widths, strict=True)]
        for depth in range(max(len(cell) for cell in cells)):
            lines.append((" " * _GAP).join((cell[depth] if depth < len(cell) else "").ljust(w)
                                           for cell, w in zip(cells, widths, strict=True)).rstrip())
        for i, column in enumerate(columns):
            if i not in inline and row[i]:
                lines += ["  " + line for line in _fitted(row[i], column, width - 2, more)]
    return lines


def _blocks(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int) -> list[str]:
    """A block per row: its title cells on the first line, then each other cell as an indented `field: value`
    line, wrapped (never cut) to `width`; a kept cell is never broken."""
    titles = [i for i, column in enumerate(columns) if column.title] or [0]
    lines: list[str] = []
    for row in rows:
        lines += fit_parts([row[i] for i in titles], width, "  ")
        for i, (column, cell) in enumerate(zip(columns, row, strict=True)):
            if i in titles:
                continue
            lines += textwrap.wrap(f"{column.name.lower()}: {cell}", width, initial_indent="  ",
                                   subsequent_indent="    ", break_on_hyphens=False,
                                   break_long_words=column.fit != "keep") or [f"  {column.name.lower()}:"]
    return lines
