"""ChildProcess against real child processes: framing, stderr, errors, and shutdown leaving nothing behind."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import anyio
import pytest

from harness_core.errors import MessageTooLargeError, ProcessExitedError, SpawnFailedError
from harness_core.transport import ChildProcess
from harness_core.transport.proctree import descendants

pytestmark = pytest.mark.anyio
PY = sys.executable


def alive(pid: int) -> bool:
    """True if `pid` is a live process; a zombie (already dead, awaiting its reaper) counts as dead."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(") ", 1)[1][0] not in "ZX"
    except FileNotFoundError:
        return False


async def wait_dead(pid: int, deadline: float = 5.0) -> None:
    # An orphan is reaped by init asynchronously after SIGKILL; nothing to wait on but its /proc entry.
    with anyio.fail_after(deadline):
        while alive(pid):  # noqa: ASYNC110 - no event exists for "another process died"
            await anyio.sleep(0.01)


def child(code: str, **kw: object) -> ChildProcess:
    return ChildProcess([PY, "-c", code], **kw)  # type: ignore[arg-type]


async def test_lines_split_across_writes() -> None:
    code = (
        "import sys, time\n"
        "out = sys.stdout.buffer\n"
        "for piece in [b'hel', b'lo\\nwor', b'ld\\n\\n', b'x' * 70000, b'\\nend']:\n"
        "    out.write(piece); out.flush()\n"
    )
    with anyio.fail_after(10):
        async with child(code) as proc:
            got = [line async for line in proc.lines()]
            assert await proc.wait() == 0
    assert got == [b"hello", b"world", b"", b"x" * 70000, b"end"]


async def test_ten_megabyte_line() -> None:
    code = "import sys; sys.stdout.buffer.write(b'a' * 10_000_000 + b'\\nafter\\n')"
    with anyio.fail_after(20):
        async with child(code) as proc:
            got = [line async for line in proc.lines()]
    assert [len(x) for x in got if isinstance(x, bytes)] == [10_000_000, 5]


async def test_oversized_line_skipped_then_reader_continues() -> None:
    code = "import sys; w = sys.stdout.buffer.write; w(b'one\\n'); w(b'b' * 300_000 + b'\\n'); w(b'two\\n')"
    with anyio.fail_after(10):
        async with child(code, max_line_bytes=1000) as proc:
            got = [line async for line in proc.lines()]
    assert got[0] == b"one" and got[2] == b"two" and len(got) == 3
    assert isinstance(got[1], MessageTooLargeError)
    assert got[1].details == {"size": 300_000, "limit": 1000}


async def test_stderr_tail_is_bounded_and_drained() -> None:
    # 2 MB of stderr would block a child whose stderr nobody reads (pipe buffer is 64 KiB).
    code = (
        "import sys\n"
        "for i in range(20000): sys.stderr.write(f'noise {i:05d} ' + 'z' * 88 + '\\n')\n"
        "sys.stderr.write('LAST\\n'); sys.stderr.flush(); print('done')"
    )
    with anyio.fail_after(10):
        async with child(code, stderr_tail_bytes=1000) as proc:
            assert [x async for x in proc.lines()] == [b"done"]
            await proc.wait()
            tail = proc.stderr_tail()
    assert len(tail) <= 1000 and tail.endswith("LAST\n")


async def test_send_line_to_dead_child() -> None:
    code = "import sys; sys.stderr.write('fatal: bad config\\n'); sys.exit(7)"
    with anyio.fail_after(10):
        async with child(code) as proc:
            await proc.wait()
            with pytest.raises(ProcessExitedError) as info:
                for _ in range(100):  # the first writes may land in the pipe buffer before EPIPE
                    await proc.send_line(b"x" * 4096)
    err = info.value
    assert err.exit_code == 7 and "fatal: bad config" in err.stderr_tail
    assert "exit code 7" in str(err) and "fatal: bad config" in str(err)


async def test_send_line_rejects_newline_and_records() -> None:
    seen: list[tuple[str, bytes]] = []
    code = "import sys\nfor line in sys.stdin: print(line.strip().upper(), flush=True)"
    with anyio.fail_after(10):
        async with child(code, on_line=lambda d, b: seen.append((d, b))) as proc:
            with pytest.raises(ValueError):
                await proc.send_line(b"a\nb")
            await proc.send_line("ping")
            assert await proc.lines().__anext__() == b"PING"
            await proc.close_stdin()
            assert await proc.wait() == 0
    assert seen == [("out", b"ping"), ("in", b"PING")]


async def test_exit_on_stdin_close_is_graceful() -> None:
    code = "import sys; sys.stdin.read(); print('bye')"
    start = time.monotonic()
    with anyio.fail_after(10):
        async with child(code, stdin_close_timeout=5) as proc:
            pass
    assert proc.returncode == 0 and time.monotonic() - start < 3


async def test_sigterm_ignored_child_is_killed_in_bounded_time() -> None:
    code = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "sys.stdin.close(); print('ready', flush=True)\n"
        "while True: time.sleep(1)"
    )
    start = time.monotonic()
    with anyio.fail_after(10):
        async with child(code, stdin_close_timeout=0.2, term_timeout=0.3) as proc:
            assert await proc.lines().__anext__() == b"ready"
            pid = proc.pid
    assert proc.returncode == -signal.SIGKILL
    assert time.monotonic() - start < 5
    assert not alive(pid)


GRANDCHILD = (
    "import os, subprocess, sys, time\n"
    "same = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
    "own = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True)\n"
    "print(same.pid, own.pid, flush=True)\n"
    "sys.stdin.read()\n"  # exits as soon as stdin closes, leaving both children behind
)


async def test_grandchildren_killed_even_in_their_own_session() -> None:
    with anyio.fail_after(10):
        async with child(GRANDCHILD) as proc:
            line = await proc.lines().__anext__()
            assert isinstance(line, bytes)
            same, own = (int(x) for x in line.split())
            assert os.getsid(own) == own != os.getsid(proc.pid)
            leader = proc.pid
        assert proc.returncode == 0
        for pid in (leader, same, own):
            await wait_dead(pid)


async def test_cancelled_scope_still_reaps() -> None:
    with anyio.fail_after(10):
        with anyio.CancelScope() as scope:
            async with child(GRANDCHILD, stdin_close_timeout=0.2, term_timeout=0.5) as proc:
                line = await proc.lines().__anext__()
                assert isinstance(line, bytes)
                pids = [proc.pid, *(int(x) for x in line.split())]
                scope.cancel()
                await anyio.sleep_forever()
        assert scope.cancelled_caught
        assert proc.returncode is not None
        for pid in pids:
            await wait_dead(pid)


async def test_aclose_is_idempotent() -> None:
    with anyio.fail_after(10):
        proc = child("import sys; sys.stdin.read()")
        async with proc:
            await proc.aclose()
            await proc.aclose()
        assert proc.returncode == 0


async def test_spawn_failures_say_what_to_do(tmp_path: Path) -> None:
    not_executable = tmp_path / "agent"
    not_executable.write_text("#!/bin/sh\n")
    not_executable.chmod(0o644)
    with pytest.raises(SpawnFailedError, match=r"/nonexistent/agent not found; check the path"):
        async with ChildProcess(["/nonexistent/agent"]):
            pass
    with pytest.raises(SpawnFailedError, match="working directory /nonexistent/dir does not exist"):
        async with ChildProcess([PY, "-c", "pass"], cwd="/nonexistent/dir"):
            pass
    with pytest.raises(SpawnFailedError, match="permission denied; make it executable"):
        async with ChildProcess([str(not_executable)]):
            pass


async def test_descendants_that_escaped_before_shutdown_are_killed_too() -> None:
    """A grandchild whose parent already exited is reparented away from our tree, so a snapshot taken at
    shutdown cannot see it; the environment mark every descendant inherits still finds it."""
    code = (
        "import subprocess, sys\n"
        "out = subprocess.run(['sh', '-c', 'setsid sleep 60 >/dev/null 2>&1 & echo $!'], capture_output=True)\n"
        "print(out.stdout.decode().strip(), flush=True)\n"
        "sys.stdin.readline()\n"
    )
    async with child(code, supervise=False) as proc:  # under the supervisor (a subreaper) it would not escape
        with anyio.fail_after(10):
            line = await proc.lines().__anext__()
        assert isinstance(line, bytes)
        orphan = int(line)
        assert alive(orphan)
        assert orphan not in {pid for pid, _ in descendants(proc.pid)}  # escaped: no snapshot can find it
    await wait_dead(orphan)
