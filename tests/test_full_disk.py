"""A full disk under a run: the run stops with `log_write_failed` (the path, the system's error, what to do), the
agent is stopped, the exit status is not 0, nothing prints a traceback, and the log keeps whole lines: `runs`,
`show` and `attach` read it to its last complete line and say how the run ended (`truncated` when not even its
`done` fitted, never `lost`). Foreground, background (and its worker log), chat and batch.

The disk is a real small file system (a tmpfs mounted for the test, as root) filled to a chosen number of free
bytes; where mounting is not allowed, the `harness` processes run under a file size limit (`RLIMIT_FSIZE`,
`SIGXFSZ` ignored), which fails the same writes with `EFBIG`.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness_core.events import Done, RunStarted
from harness_core.plugins import get_host
from harness_core.store import CUT_SHORT_MODE, TRUNCATED, BadLine, list_runs, read_events, summarize

_DEADLINE = 60.0
_FS_BYTES = 4 << 20

pytestmark = pytest.mark.skipif("scripted" not in get_host().providers,
                                reason="the scripted provider is not installed as a plugin (tox installs it)")


class SmallDisk:
    """A directory whose writes fail once `free` more bytes were written: a tmpfs filled up to that, or (no
    mount allowed) a file size limit for the `harness` processes started with `preexec`."""

    def __init__(self, root: Path, mounted: bool) -> None:
        self.root = root
        self.mounted = mounted
        self._limit: int | None = None

    def leave(self, free: int) -> None:
        """Fill the file system so that about `free` bytes are left (0: full)."""
        if not self.mounted:
            self._limit = free
            return
        filler = self.root / f".filler-{len(list(self.root.glob('.filler-*')))}"
        with filler.open("wb") as fh:
            try:
                while True:
                    fh.write(b"\0" * 65536)
                    fh.flush()
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
        size = filler.stat().st_size
        os.truncate(filler, max(0, size - free))

    def preexec(self) -> None:
        if self._limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of death, as a full disk gives ENOSPC
            resource.setrlimit(resource.RLIMIT_FSIZE, (self._limit, self._limit))


@pytest.fixture
def disk() -> Iterator[SmallDisk]:
    root = Path(tempfile.mkdtemp(prefix="harness-small-disk-"))
    mounted = os.geteuid() == 0 and shutil.which("mount") is not None and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={_FS_BYTES},mode=0700", "tmpfs", str(root)],
        capture_output=True).returncode == 0
    try:
        yield SmallDisk(root, mounted)
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(root)], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def _env(runs_dir: Path) -> dict[str, str]:
    return {**os.environ, "HARNESS_PROVIDER": "scripted", "HARNESS_RUNS_DIR": str(runs_dir), "NO_COLOR": "1"}


def _harness(disk: SmallDisk, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness_core", *args], env=_env(disk.root / "runs"), text=True,
                          capture_output=True, timeout=_DEADLINE, input=stdin, preexec_fn=disk.preexec)


def _talk(words: int = 6000, chunks: int = 300) -> str:
    """A scenario whose answer streams `words` words in `chunks` deltas (a log of about three times its size)."""
    return json.dumps({"steps": [{"say": "word " * words, "chunks": chunks, "delay": 0.002}]})


def _whole_lines(log: Path) -> list[object]:
    """The events of `log`, checking it holds only whole, valid lines."""
    data = log.read_bytes()
    assert not data or data.endswith(b"\n"), "the log ends mid-line"
    bad: list[BadLine] = []
    events = list(read_events(log, on_bad_line=bad.append))
    assert bad == [], bad
    return events


def _said(out: subprocess.CompletedProcess[str]) -> str:
    """What a command printed, long lines shortened (for assertion messages)."""
    return "\n".join(line if len(line) < 400 else line[:400] + "…" for line in (out.stdout + out.stderr).splitlines())


def _failed_cleanly(out: subprocess.CompletedProcess[str], log: Path) -> None:
    said = _said(out)
    assert out.returncode == 1, said
    assert "Traceback" not in said and "✓" not in said, said
    assert "log_write_failed" in said and str(log) in said, said
    assert ("No space left on device" in said or "File too large" in said), said
    assert "free space there" in said or "ulimit -f" in said, said  # what to do next


def _only_log(disk: SmallDisk) -> Path:
    logs = [p for p in (disk.root / "runs").glob("*.jsonl") if not p.name.endswith(".wire.jsonl")]
    assert len(logs) == 1, logs
    return logs[0]


def test_a_disk_that_fills_mid_run_stops_it_with_log_write_failed(disk: SmallDisk) -> None:
    (disk.root / "runs").mkdir(mode=0o700)
    disk.leave(40_000)  # room for run_started (the scenario rides in it) and a few deltas, not the answer
    started = time.monotonic()
    out = _harness(disk, "run", "talk", "-o", f"scenario={_talk()}")
    log = _only_log(disk)
    _failed_cleanly(out, log)
    assert time.monotonic() - started < _DEADLINE / 2  # no hang
    events = _whole_lines(log)
    assert isinstance(events[0], RunStarted)
    assert any(e.type == "text_delta" for e in events)  # what was written before the failure stays readable
    summary = summarize(log)
    if summary.done is not None:  # the failed write's bytes were given back: room for the last lines
        assert summary.status == "failed" and summary.done.result.error is not None
        assert summary.done.result.error.code == "log_write_failed"
    else:
        assert summary.status == TRUNCATED
    assert (log.stat().st_mode & 0o777) == CUT_SHORT_MODE
    listed = _harness(disk, "runs", "--json")
    assert json.loads(listed.stdout)[0]["status"] in ("failed", TRUNCATED)


def test_a_first_line_too_large_for_the_disk_leaves_a_log_that_says_why(disk: SmallDisk) -> None:
    (disk.root / "runs").mkdir(mode=0o700)
    disk.leave(24_000)
    out = _harness(disk, "run", "x" * 60_000, "-o", "scenario=say")  # run_started alone does not fit
    log = _only_log(disk)
    _failed_cleanly(out, log)
    events = _whole_lines(log)  # run_started was cut back whole; the error and `done` fitted after it
    done = events[-1]
    assert isinstance(done, Done) and done.result.error is not None
    assert done.result.error.code == "log_write_failed"
    shown = _harness(disk, "show", "last")
    assert shown.returncode == 0 and "status    failed" in shown.stdout and "log_write_failed" in shown.stdout


def test_a_full_disk_reads_truncated_not_lost_everywhere(disk: SmallDisk) -> None:
    (disk.root / "runs").mkdir(mode=0o700)
    disk.leave(0)
    out = _harness(disk, "run", "hello", "-o", "scenario=say")
    log = _only_log(disk)
    _failed_cleanly(out, log)
    assert log.read_bytes() == b""  # not one line fitted
    assert summarize(log).status == TRUNCATED
    listed = _harness(disk, "runs")
    assert TRUNCATED in listed.stdout and "lost" not in listed.stdout
    shown = _harness(disk, "show", "last")
    assert "status    truncated" in shown.stdout and "writing its log failed" in shown.stdout
    attached = _harness(disk, "attach", "last")
    assert attached.returncode == 1 and "truncated" in attached.stderr and "lost" not in attached.stderr
    assert "Traceback" not in attached.stderr
    pruned = _harness(disk, "runs", "prune", "--older-than", "0s")  # an empty sealed log is a run's: prunable
    assert pruned.returncode == 0 and not log.exists(), pruned.stdout + pruned.stderr


@pytest.mark.parametrize("offline", [False, True])
def test_a_background_run_on_a_full_disk_is_not_started_and_says_why(disk: SmallDisk, tmp_path: Path,
                                                                       offline: bool) -> None:
    """Not one line of its log fits: the starter, still on the terminal, says why (nothing on that disk could
    keep it: no log line, no worker log) and exits 1; no run is listed and nothing is left behind (no log, no
    answers file, no temporary workspace for a later command to sweep)."""
    if offline and "scripted-offline" not in get_host().providers:
        pytest.skip("the offline scripted provider is not installed (tox installs tests/plugins/scripted)")
    if offline and not disk.mounted:
        pytest.skip("a file size limit would fail the workspace's files too: this needs a small file system")
    (disk.root / "runs").mkdir(mode=0o700)
    disk.leave(0)
    temp = tmp_path / "tmp"
    temp.mkdir()
    args = ["--offline", "-p", "scripted-offline"] if offline else ["-o", f"scenario={_talk(2000, 50)}"]
    started = subprocess.run([sys.executable, "-m", "harness_core", "run", "--background", "talk", *args],
                             env={**_env(disk.root / "runs"), "TMPDIR": str(temp)}, text=True, capture_output=True,
                             timeout=_DEADLINE, preexec_fn=disk.preexec)
    said = _said(started)
    assert started.returncode == 1 and started.stdout == "", said
    assert "Traceback" not in said and "the run was not started" in said, said
    assert "No space left on device" in said or "File too large" in said, said
    assert "free space there" in said or "ulimit -f" in said, said  # what to do next
    assert list((disk.root / "runs").iterdir()) == [], said
    assert list(temp.iterdir()) == []
    listed = _harness(disk, "runs", "--json")
    assert json.loads(listed.stdout) == []


def test_a_background_run_whose_disk_fills_ends_failed_and_attach_says_why(disk: SmallDisk) -> None:
    (disk.root / "runs").mkdir(mode=0o700)
    disk.leave(40_000)
    started = _harness(disk, "run", "--background", "talk", "-o", f"scenario={_talk()}")
    assert started.returncode == 0, started.stderr
    run_id = started.stdout.strip()
    log = disk.root / "runs" / f"{run_id}.jsonl"
    _wait(lambda: summarize(log).status not in ("running", "waiting for approval"))
    assert summarize(log).status in ("failed", TRUNCATED)
    _whole_lines(log)
    attached = _harness(disk, "attach", run_id)
    assert attached.returncode == 1 and "Traceback" not in attached.stdout + attached.stderr
    assert "log_write_failed" in attached.stdout + attached.stderr


def test_a_chat_turn_on_a_full_disk_fails_with_log_write_failed(disk: SmallDisk) -> None:
    (disk.root / "runs").mkdir(mode=0o700)
    disk.leave(40_000)
    out = _harness(disk, "chat", "-o", f"scenario={_talk()}", stdin="first\nsecond\n")
    said = _said(out)
    assert out.returncode != 0 and "Traceback" not in said, said
    assert "log_write_failed" in said, said
    for summary in list_runs(disk.root / "runs"):
        assert summary.status in ("failed", TRUNCATED)
        _whole_lines(summary.path)


def test_a_batch_on_a_full_disk_stops_with_log_write_failed(disk: SmallDisk, tmp_path: Path) -> None:
    (disk.root / "runs").mkdir(mode=0o700)
    tasks = tmp_path / "tasks.jsonl"
    talk = json.loads(_talk())
    tasks.write_text("".join(json.dumps({"id": f"t{i}", "prompt": "talk", "provider_options": {"scenario": talk}})
                             + "\n" for i in range(4)))
    results = disk.root / "results.jsonl"
    disk.leave(30_000)
    out = _harness(disk, "batch", str(tasks), "--results", str(results), "-j", "2")
    said = _said(out)
    assert out.returncode != 0 and "Traceback" not in said, said
    assert "log_write_failed" in said, said
    if results.exists():  # only whole result lines, each naming the failure
        for line in results.read_text().splitlines():
            assert json.loads(line)["error_code"] in ("log_write_failed", None)
    for summary in list_runs(disk.root / "runs"):
        assert summary.status in ("failed", TRUNCATED), summary.status
        _whole_lines(summary.path)


def _wait(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + _DEADLINE
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
