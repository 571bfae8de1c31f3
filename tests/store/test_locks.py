"""`store.writer_pid`: the holder of a log's writer lock, from `/proc/locks` lines (recorded on Linux 6.x, ext4)
and, where the kernel names the file system's device differently from `stat()` (btrfs subvolumes), confirmed
through the holder's open files. Real processes and real locks, on this machine's file system."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_core.store import writer_pid
from harness_core.store.locks import LockLine, holder_in, parse_lock_line

_DEADLINE = 30.0

# /proc/locks while process 7996 held an exclusive flock on inode 2146416 (and a shared one on 2146421, plus an
# OFD read lock), process 8042 was blocked waiting for a shared flock on 2146416, and 2933 held a POSIX lock.
RECORDED = """\
1: OFDLCK ADVISORY  READ -1 fe:00:2146421 0 EOF
2: FLOCK  ADVISORY  READ 7996 fe:00:2146421 0 EOF
3: FLOCK  ADVISORY  WRITE 7996 fe:00:2146416 0 EOF
3: -> FLOCK  ADVISORY  READ 8042 fe:00:2146416 0 EOF
4: POSIX  ADVISORY  WRITE 2933 fe:00:2146357 0 EOF
"""


def test_recorded_lines_parse() -> None:
    assert [parse_lock_line(line) for line in RECORDED.splitlines()] == [
        LockLine("OFDLCK", "READ", -1, 0xFE, 0, 2146421),
        LockLine("FLOCK", "READ", 7996, 0xFE, 0, 2146421),
        LockLine("FLOCK", "WRITE", 7996, 0xFE, 0, 2146416),
        LockLine("FLOCK", "READ", 8042, 0xFE, 0, 2146416, waiting=True),
        LockLine("POSIX", "WRITE", 2933, 0xFE, 0, 2146357),
    ]


@pytest.mark.parametrize("line", ["", "garbage", "1: LEASE  ACTIVE    READ 12 <none>:0 0 EOF",
                                  "1: FLOCK  ADVISORY  WRITE 12 fe:00 0 EOF", "1: FLOCK  ADVISORY  WRITE x fe:00:1"])
def test_lines_that_are_no_lock_on_a_file(line: str) -> None:
    assert parse_lock_line(line) is None


def _stat(dev: int, ino: int) -> os.stat_result:
    """A `stat()` result naming a file this machine does not have."""
    return os.stat_result((0o100600, ino, dev, 1, 0, 0, 0, 0, 0, 0))


def test_the_writer_in_recorded_lines_never_a_reader_a_waiter_or_a_posix_lock() -> None:
    ext4 = os.makedev(0xFE, 0)
    assert holder_in(RECORDED, _stat(ext4, 2146416)) == 7996
    assert holder_in(RECORDED, _stat(ext4, 2146421)) is None  # shared locks only (and an OFD lock)
    assert holder_in(RECORDED, _stat(ext4, 2146357)) is None  # a POSIX lock is not the writer's flock
    assert holder_in(RECORDED, _stat(ext4, 1)) is None


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """Another process holding a run log's writer lock, as `harness run` does."""
    log = tmp_path / "r.jsonl"
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys, pathlib; from harness_core.store import LogWriter; "
         "w = LogWriter(pathlib.Path(sys.argv[1])); print('locked', flush=True); sys.stdin.read()", str(log)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline() == "locked\n"
    yield child, log
    child.kill()
    child.wait(timeout=_DEADLINE)


def test_writer_pid_on_this_file_system(holder: tuple[subprocess.Popen[str], Path]) -> None:
    child, log = holder
    assert writer_pid(log) == child.pid
    child.kill()
    child.wait(timeout=_DEADLINE)
    assert writer_pid(log) is None  # the lock ended with its holder: never a reused pid


def test_another_device_number_counts_only_when_the_pid_has_the_file_open(
        holder: tuple[subprocess.Popen[str], Path], tmp_path: Path) -> None:
    """btrfs: `/proc/locks` shows the superblock's device (`00:2f`), `stat()` the subvolume's (`00:31`)."""
    child, log = holder
    st = log.stat()
    other = 0x2F if os.major(st.st_dev) != 0x2F else 0x30
    as_btrfs = f"7: FLOCK  ADVISORY  WRITE {child.pid} 00:{other:02x}:{st.st_ino} 0 EOF\n"
    assert holder_in(as_btrfs, st) == child.pid  # confirmed: its /proc/PID/fd has the log open
    with (tmp_path / "unrelated").open("w") as fh:  # a process with a lock on the same inode of another disk
        fcntl.flock(fh, fcntl.LOCK_EX)
        stranger = f"7: FLOCK  ADVISORY  WRITE {os.getpid()} 00:{other:02x}:{st.st_ino} 0 EOF\n"
        assert holder_in(stranger, st) is None  # it does not have this log open: not its writer
    assert holder_in(stranger + as_btrfs, st) == child.pid
