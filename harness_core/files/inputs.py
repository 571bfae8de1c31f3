"""Reading a file the user names (an output schema, a tasks file, a config, a wire log): at most a cap of bytes
(`/dev/zero` is an error, not a memory leak), JSON no deeper than a cap, each failure an `InputFileError` that
names the file, what is wrong and what to do.

Layer: core (pure I/O of one file; used by the CLI and the batch loader). Knows nothing of runs or providers.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from harness_core.errors import InvalidSpecError

__all__ = ["MAX_JSON_DEPTH", "InputFileError", "json_depth_problem", "open_regular", "parse_json", "read_input",
           "read_lines"]

MAX_JSON_DEPTH = 64
"""Arrays and objects nested deeper than this are refused (a schema or a task needs a handful of levels; a
reader that recursed into 50,000 would overflow the stack)."""
_CHUNK = 1 << 16


class InputFileError(InvalidSpecError):
    """A file the user named cannot be used: unreadable, too large, not the JSON it should be, nested too deep."""


def _size(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit >> 10} KiB"


def read_input(path: str | Path, *, what: str, limit: int) -> bytes:
    """The bytes of `path` (`what` it is, for messages: "the output schema"), at most `limit` of them.

    Raises:
        InputFileError: it cannot be read, or holds more than `limit` bytes (a device like /dev/zero never ends).
    """
    try:
        with open_regular(path, what=what) as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise InputFileError(f"cannot read {what} {path}: {exc.strerror or exc}", path=str(path)) from None
    if len(data) > limit:
        raise InputFileError(f"{what} {path} is larger than {_size(limit)} (is it the right file? a device such as "
                             f"/dev/zero never ends); give a file of at most {_size(limit)}", path=str(path))
    return data


def open_regular(path: str | Path, *, what: str) -> IO[bytes]:
    """`path` open for reading in binary, only when it is a regular file: a FIFO would block the open (or the read)
    with no deadline, a device may never end. Opened without blocking, then checked (`fstat`), then made blocking.

    Raises:
        InputFileError: it is a FIFO, a device, a socket or a directory (the message says which and what to give).
        OSError: it cannot be opened.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                    else "a directory" if stat.S_ISDIR(mode) else "a socket" if stat.S_ISSOCK(mode) else "no file")
            raise InputFileError(f"{what} {path} is {kind}, not a file (reading it could block or never end); give "
                                 "a regular file, or save its content to one first", path=str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_lines(source: IO[bytes] | IO[str], *, what: str, line_limit: int, total_limit: int) -> Iterator[str]:
    """The lines of an open file (text or binary: decoded as UTF-8), each at most `line_limit` bytes, all of them at
    most `total_limit`.

    Raises:
        InputFileError: a line or the whole is over its limit, or the bytes are not UTF-8.
    """
    total = 0
    number = 0
    while True:
        line = source.readline(line_limit + 1)
        if not line:
            return
        number += 1
        raw = line.encode() if isinstance(line, str) else line
        total += len(raw)
        if len(raw) > line_limit and not raw.endswith(b"\n"):
            raise InputFileError(f"{what}: line {number} is longer than {_size(line_limit)} (is it the right file? "
                                 f"a device such as /dev/zero never ends); a line holds one task")
        if total > total_limit:
            raise InputFileError(f"{what} is larger than {_size(total_limit)}; split it into several files")
        try:
            yield raw.decode("utf-8") if isinstance(line, bytes) else line
        except UnicodeDecodeError as exc:
            raise InputFileError(f"{what}: line {number} is not UTF-8 text ({exc.reason}); save it as UTF-8") from None


def json_depth_problem(value: Any, max_depth: int = MAX_JSON_DEPTH) -> str | None:
    """Why `value` (parsed JSON) is nested too deep, or None (checked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > max_depth:
                return f"it nests arrays and objects more than {max_depth} levels deep"
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return None


def parse_json(text: str | bytes, *, what: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """`text` as JSON, no deeper than `max_depth`.

    Raises:
        InputFileError: not JSON, or nested too deep (the message starts with `what`).
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise InputFileError(f"{what} nests arrays and objects too deep to read (more than {max_depth} levels "
                             "is refused); flatten it") from None
    except ValueError as exc:
        raise InputFileError(f"{what} is not JSON ({exc})") from None
    problem = json_depth_problem(value, max_depth)
    if problem is not None:
        raise InputFileError(f"{what}: {problem}; flatten it")
    return value

