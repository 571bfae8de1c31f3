"""Which core tests exercise what differs between Python versions: each gets the `version_sensitive` marker from
what its own code touches (its body, the test-suite helpers it calls, its fixtures). Knows no Harness module.

tox runs the whole core suite on one Python and only these tests on the others (tox.ini's header says why)."""

from __future__ import annotations

import inspect
import io
import re
import tokenize
import types
import zlib
from collections.abc import Iterable
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent

EXERCISES: dict[str, re.Pattern[str]] = {
    # signals and process lifecycles: delivery, process groups, reaping, pidfds change between versions
    "signals": re.compile(r"\bsignal\.|\bSIG[A-Z]{2,}\b|\bkillpg\b|\bos\.kill\b|send_signal|\.terminate\(|\.kill\("),
    "processes": re.compile(r"\bPopen\b|\bChildProcess\b|open_process|run_process|create_subprocess|"
                            r"start_new_session|process_group|pidfd|waitpid|\bpexpect\b|--background|\bjobs\.\w"),
    # the terminal: ptys, readline, terminal modes
    "terminal": re.compile(r"\bpty\b|\breadline\b|\btermios\b|\bisatty\b|openpty|\bfcntl\b"),
    # the event loops themselves, not through anyio
    "event loops": re.compile(r"\basyncio\.|\btrio\.|^\s*import (?:asyncio|trio)\b", re.MULTILINE),
    # cancellation: asyncio's changed in 3.11 (uncancel, TaskGroup, timeout) and anyio takes other paths before it
    "cancellation": re.compile(r"[Ii]nterrupt|\.cancel\(|CancelScope|cancel_scope|idle_timeout|[Cc]ancelled"),
    # typing and model introspection
    "typing": re.compile(r"get_type_hints|__annotations__|model_json_schema|TypeAdapter|\btyping\."),
    # the code that branches on sys.version_info at 3.11: tomllib (config), logging's stacklevel
    "branches at 3.11": re.compile(r"tomllib|config\.toml|\bcaplog\b|stacklevel"),
    # the code that branches on sys.version_info later: rmtree's onexc (worktrees, 3.12); argparse, whose --help
    # layout changes between versions
    "version branches": re.compile(r"version_info|[Ww]orktree|--help"),
}
"""What makes a test version-sensitive, found in its code: name → pattern."""

UP_TO_311 = frozenset({"cancellation", "branches at 3.11"})
"""The rules whose code paths part at 3.11 (asyncio's cancellation, tomllib, stacklevel): from 3.12 on they take
3.11's path, which the whole suite runs. A test touching only these is `version_sensitive` (3.10 runs it) but not
`version_sensitive_312` (3.12 and 3.13 skip it)."""


def _names(code: types.CodeType) -> set[str]:
    found = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= _names(const)
    return found


def _ours(obj: object, root: Path) -> bool:
    try:
        source = inspect.getsourcefile(obj)  # type: ignore[arg-type]
    except TypeError:
        return False
    return source is not None and Path(source).resolve().is_relative_to(root)


def _without_comments(source: str) -> str:
    """`source` with its comments cut (a comment runs to its line's end; `untokenize` is not used: 3.12.1's
    fails on some f-strings)."""
    lines = source.splitlines(keepends=True)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                row, col = tok.start
                lines[row - 1] = lines[row - 1][:col].rstrip() + "\n"
    except (tokenize.TokenError, SyntaxError):
        return source
    return "".join(lines)


def code_of(function: object, fixtures: Iterable[object] = (), owner: type | None = None,
            root: Path = TESTS_DIR) -> str:
    """The source (comments left out) a test runs from the test suite under `root`: `function`, the suite's
    functions and classes it names (transitively), its `fixtures`, and its class's methods it calls on `self`."""
    seen: set[int] = set()
    texts: list[str] = []

    def visit(obj: object) -> None:
        obj = inspect.unwrap(obj) if callable(obj) else obj
        if id(obj) in seen or not _ours(obj, root):
            return
        seen.add(id(obj))
        try:
            texts.append(_without_comments(inspect.getsource(obj)))  # type: ignore[arg-type]
        except (OSError, TypeError):
            return
        code = getattr(obj, "__code__", None)
        if isinstance(code, types.CodeType):
            scope = getattr(obj, "__globals__", {})
            for name in _names(code):
                for target in (scope.get(name), getattr(owner, name, None) if owner is not None else None):
                    if inspect.isfunction(target) or inspect.isclass(target):
                        visit(target)

    visit(function)
    for fixture in fixtures:
        visit(fixture)
    return "\n".join(texts)


def exercises(source: str) -> list[str]:
    """What of `EXERCISES` this test code touches."""
    return [name for name, pattern in EXERCISES.items() if pattern.search(source)]


def item_exercises(item: pytest.Item, root: Path = TESTS_DIR) -> list[str]:
    """What of `EXERCISES` a collected test of the suite under `root` touches (nothing for a test that is not a
    Python function there)."""
    function = getattr(item, "function", None)
    if function is None or not _ours(function, root):
        return []
    info = getattr(item, "_fixtureinfo", None)
    fixtures = [defs[-1].func for defs in (info.name2fixturedefs.values() if info is not None else []) if defs]
    return exercises(code_of(function, fixtures, getattr(item, "cls", None), root))


def mark_version_sensitive(items: Iterable[pytest.Item], root: Path = TESTS_DIR) -> None:
    """Give `version_sensitive` to each test under `root` that exercises what differs between versions, and
    `version_sensitive_312` to those of them that touch what still differs from 3.12 on (not `UP_TO_311` alone). A
    test may carry either marker by hand, for what its code does not show; one marked by hand `version_sensitive`
    counts as both."""
    for item in items:
        by_hand = item.get_closest_marker("version_sensitive") is not None
        touched = set(item_exercises(item, root))
        if touched and not by_hand:
            item.add_marker(pytest.mark.version_sensitive)
        if (by_hand or touched - UP_TO_311) and item.get_closest_marker("version_sensitive_312") is None:
            item.add_marker(pytest.mark.version_sensitive_312)
        if item.get_closest_marker("version_sensitive_312") is not None:
            item.add_marker(SHARES[zlib.crc32(item.nodeid.encode()) % len(SHARES)])


SHARES = (pytest.mark.share_312, pytest.mark.share_313)
"""`version_sensitive_312` split in two by each test's id (stable, about half each): 3.12 runs one half, 3.13 the
other. What parts at 3.12 (rmtree's onexc, ...) 3.13 takes too, so each such test runs on 3.10, 3.11 and one of
3.12/3.13; the whole selection on one of them is `-m version_sensitive_312`."""
