"""A scripted command's sleep as a real process (what the fake CLIs run while they "run" a command)."""

from __future__ import annotations

import os
import subprocess

from harness_core.scripted.command import command_process


def _sleeps_of_mine() -> list[tuple[int, int]]:
    """(pid, session id) of each `sleep` this test process started (another process's name may hold spaces: `tmux:
    server`)."""
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid=,sid=,comm="], capture_output=True, text=True, check=True).stdout
    return [(int(pid), int(sid)) for pid, ppid, sid, comm in (line.split(None, 3) for line in out.splitlines())
            if comm == "sleep" and int(ppid) == os.getpid()]


def test_a_sleeping_command_runs_a_sleep_in_its_own_session_until_the_block_ends() -> None:
    with command_process("echo waiting; sleep 30") as seconds:
        assert seconds == 30
        children = _sleeps_of_mine()
        assert len(children) == 1 and children[0][0] == children[0][1], children  # the leader of a new session
    assert _sleeps_of_mine() == []


def test_a_command_that_does_not_sleep_starts_nothing() -> None:
    with command_process("echo hi") as seconds:
        assert seconds == 0 and _sleeps_of_mine() == []
