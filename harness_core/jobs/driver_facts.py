"""The process that drives a run: its command line, whether it is a `harness run` (SIGINT interrupts its turn),
and its scheduling state (a stopped process does not act on signals until continued).

Layer: core storage support (used by `harness cancel` and `harness_core.jobs`). Knows Linux's `/proc` and the
`harness run` command line (also the background worker's); knows nothing of events, providers or click.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["is_harness_run", "process_argv", "process_state"]


def process_state(pid: int) -> str | None:
    """The state letter of process `pid` (`R`, `S`, `T` stopped, `t` stopped by a debugger, ...), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()  # after the command name, which may hold spaces and parentheses
    return fields[0] if fields else None


def process_argv(pid: int) -> list[str]:
    """The command line of process `pid` (empty when it cannot be read)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


def is_harness_run(argv: list[str]) -> bool:
    """Whether `argv` is `harness run ...` (the console script, directly or through its interpreter, or
    `python -m harness_core[.cli] run ...`): a process that turns SIGINT into an interrupt of its turn. Anything
    else — a program using the library, `harness demo`, a test runner in a checkout named harness — is never
    signalled."""
    if not argv:
        return False
    rest = argv[1:]
    if os.path.basename(argv[0]).startswith("python") and rest:
        if rest[0] == "-m" and len(rest) > 1 and rest[1] in ("harness_core", "harness_core.cli"):
            rest = rest[2:]
        elif os.path.basename(rest[0]) == "harness":
            rest = rest[1:]
        else:
            return False
    elif os.path.basename(argv[0]) != "harness":
        return False
    return bool(rest) and rest[0] == "run"
