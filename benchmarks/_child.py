"""Benchmark support: run one measurement in a fresh child process, in its own process group, with a deadline.

Every contender runs this way so imports, `ru_maxrss` and leftovers cannot leak between them: the child's whole
group is killed at the deadline, and afterwards in any case (whatever it left behind). Benchmarks only.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Sequence

__all__ = ["ChildTimedOut", "run_child"]


class ChildTimedOut(Exception):
    """The child outlived its deadline (its group was killed)."""


def run_child(argv: Sequence[str], deadline: float, *, cwd: str | None = None,
              env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `argv`; stdin is closed. Raises ChildTimedOut after `deadline` s."""
    proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            text=True, start_new_session=True, cwd=cwd, env=env)
    try:
        out, err = proc.communicate(timeout=deadline)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise ChildTimedOut(f"timed out after {deadline:.0f} s") from None
    finally:
        with contextlib.suppress(ProcessLookupError):  # whatever the child left behind in its group
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode, out, err


def last_line_of_error(err: str, status: int) -> str:
    """The line of a failed child's stderr that says why (interpreter-shutdown noise after it dropped)."""
    err = err.split("\nException ignored in")[0]
    tail = [line for line in err.strip().splitlines() if line.strip()][-1:]
    return tail[0][:300] if tail else f"exit {status}"
