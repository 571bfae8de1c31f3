"""Scratch directories: held by their maker while in use, removed at its end (or kept, then never swept), and
those a killed maker left (SIGKILL: no cleanup ran) removed by the sweep, never one in use, another user's, a
symbolic link, or a directory that has no lock file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness_core.files.scratch import LOCK_SUFFIX, Scratch, sweep_scratch

_DEADLINE = 60.0


def _harness_entries(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir())


def test_a_scratch_is_held_while_in_use_and_removed_at_its_end(tmp_path: Path) -> None:
    with Scratch("harness-offline-", tmp_path) as path:
        (path / "notes.txt").write_text("alpha\n")
        assert path.is_dir() and (tmp_path / (path.name + LOCK_SUFFIX)).is_file()
        assert sweep_scratch(tmp_path) == [] and (path / "notes.txt").exists()  # in use: never swept
    assert _harness_entries(tmp_path) == []


def test_a_kept_scratch_stays_and_no_sweep_takes_it(tmp_path: Path) -> None:
    scratch = Scratch("harness-offline-ws-", tmp_path)
    (scratch.path / "new.txt").write_text("x\n")
    scratch.release(keep=True)
    assert _harness_entries(tmp_path) == [scratch.path.name]  # the lock file went with the hold
    assert sweep_scratch(tmp_path) == [] and (scratch.path / "new.txt").exists()


def test_what_a_killed_maker_left_is_swept_and_only_that(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from harness_core.files.scratch import Scratch
        scratch = Scratch("harness-offline-", {str(tmp_path)!r})
        (scratch.path / "state.bin").write_bytes(b"x" * 100_000)
        print(scratch.path, flush=True)
        time.sleep(120)
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        left = Path(child.stdout.readline().strip())
        assert sweep_scratch(tmp_path) == []  # its maker is alive
    finally:
        child.send_signal(signal.SIGKILL)  # no cleanup runs
        child.wait(timeout=_DEADLINE)
    kept = Scratch("harness-demo-", tmp_path)
    kept.release(keep=True)
    mine = Scratch("harness-batch-", tmp_path)  # held by this process: in use
    (tmp_path / "harness-made-by-hand").mkdir()  # no lock file: not Harness's scratch
    (tmp_path / "harness-elsewhere.lock").write_text("")  # a lock file whose "directory" is a symbolic link
    (tmp_path / "harness-elsewhere").symlink_to(tmp_path / "harness-made-by-hand")

    assert [(s.path, s.size) for s in sweep_scratch(tmp_path, dry_run=True)] == [(left, 100_000)]
    assert left.is_dir()  # a dry run removes nothing
    swept = sweep_scratch(tmp_path)
    assert [s.path for s in swept] == [left] and not left.exists()
    assert not (tmp_path / (left.name + LOCK_SUFFIX)).exists()
    assert kept.path.is_dir() and mine.path.is_dir() and (tmp_path / "harness-made-by-hand").is_dir()
    assert (tmp_path / "harness-elsewhere").is_symlink()
    mine.release()
    assert sweep_scratch(tmp_path) == []


def test_another_users_lock_file_is_left_alone(tmp_path: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("only root can give a file to another user")
    scratch = Scratch("harness-offline-", tmp_path)
    lock = tmp_path / (scratch.path.name + LOCK_SUFFIX)
    os.chown(lock, 65534, 65534)
    scratch.release(keep=True)  # its own lock file is gone; make one of another user's again
    lock.write_text("")
    os.chown(lock, 65534, 65534)
    assert sweep_scratch(tmp_path) == [] and scratch.path.is_dir() and lock.exists()
