"""A scripted command's `sleep N` as a real process, for the fake CLIs: started as an agent starts a command (in a
session of its own), so the process tree Harness must own and reap on the fake is a real one.

Starts one `sleep` and nothing else; knows no agent and no Harness run."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

from harness_core.scripted.scenarios import command_sleep

__all__ = ["command_process"]


@contextmanager
def command_process(command: str) -> Iterator[float]:
    """For the block, a `sleep` child in its own session lasting `command`'s sleeps; yields those seconds (the
    fake waits them its own way: interrupts, cancels). 0 and no process for a command that does not sleep. The
    child is killed and reaped when the block ends, however it ends."""
    seconds = command_sleep(command)
    if seconds <= 0:
        yield 0.0
        return
    child = subprocess.Popen(["sleep", f"{seconds:g}"], start_new_session=True, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield seconds
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=10)
