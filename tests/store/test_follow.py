"""`store.follow_events`, directly: a real `LogWriter` (or a writer in another process) appends while the reader
follows. The reader's `on_wait` (called each time it is caught up and the log is quiet) makes the writer's next
move, so every step happens exactly when the reader is waiting — no sleeps, and every wait has a deadline."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from harness_core.errors import InvalidSpecError
from harness_core.events import Done, HarnessEvent, HarnessResult, RunStarted, RunStatus, TextDelta
from harness_core.store import BadLine, LogWriter, follow_events, writer_pid

_DEADLINE = 30.0


def _started() -> bytes:
    return RunStarted(run_id="r", seq=0, ts=1.0, provider="scripted", provider_version="1",
                      spec={"prompt": "p"}).model_dump_json().encode()


def _text(seq: int, text: str) -> bytes:
    return TextDelta(run_id="r", seq=seq, ts=1.0, text=text).model_dump_json().encode()


def _done(seq: int) -> bytes:
    return Done(run_id="r", seq=seq, ts=2.0, result=HarnessResult(status=RunStatus.SUCCESS)).model_dump_json().encode()


class Steps:
    """The writer's moves, one per wait of the reader; past the deadline (or out of moves for too long) the
    reader's wait raises, so a reader that never ends fails the test instead of hanging it."""

    def __init__(self, *moves: Callable[[], None]) -> None:
        self.moves = list(moves)
        self.waits = 0
        self.deadline = time.monotonic() + _DEADLINE

    def __call__(self) -> None:
        self.waits += 1
        if time.monotonic() > self.deadline:
            raise AssertionError(f"follow_events still waiting after {_DEADLINE} s ({len(self.moves)} moves left)")
        if self.moves:
            self.moves.pop(0)()


def _texts(events: list[HarnessEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, TextDelta)]


def _append(path: Path, data: bytes) -> None:
    """Raw bytes at the end of the log (a second descriptor: the writer's lock stays where it is)."""
    with path.open("ab") as fh:
        fh.write(data)


def test_follows_appended_lines_a_torn_line_once_whole_and_ends_at_done(tmp_path: Path) -> None:
    writer = LogWriter(tmp_path / "r.jsonl")
    writer.write_line(_started())
    writer.flush()
    torn = _text(2, "torn " * 1000)

    def write(data: bytes) -> Callable[[], None]:
        def move() -> None:
            writer.write_line(data)
            writer.flush()
        return move

    steps = Steps(write(_text(1, "one")), lambda: _append(writer.path, torn[:100]),
                  lambda: _append(writer.path, torn[100:] + b"\n"), write(_done(3)))
    bad: list[BadLine] = []
    try:
        events = list(follow_events(writer.path, poll=0.005, on_bad_line=bad.append, on_wait=steps))
        assert writer_pid(writer.path) == os.getpid()  # it ended at `done`, not because the writer let go
    finally:
        writer.close()
    assert [e.type for e in events] == ["run_started", "text_delta", "text_delta", "done"]
    assert _texts(events) == ["one", "torn " * 1000] and bad == []
    assert steps.waits == 4 and not steps.moves  # it waited while the log was quiet, once per move


def test_ends_when_the_writer_dies_without_done_after_reading_what_was_left(tmp_path: Path) -> None:
    writer = LogWriter(tmp_path / "r.jsonl")
    writer.write_line(_started())
    writer.flush()

    def last_words_then_die() -> None:
        writer.write_line(_text(1, "last words"))
        writer.flush()
        _append(writer.path, b'{"type": "text_de')  # cut mid-line: never a whole event
        writer.close()

    steps = Steps(last_words_then_die)
    bad: list[BadLine] = []
    events = list(follow_events(writer.path, poll=0.005, on_bad_line=bad.append, on_wait=steps))
    assert [e.type for e in events] == ["run_started", "text_delta"] and _texts(events) == ["last words"]
    assert bad == [] and steps.waits == 1


_HOLDER = """
import sys
from harness_core.store import LogWriter
writer = LogWriter(__import__("pathlib").Path(sys.argv[1]))
for line in sys.stdin:
    writer.write_line(line.rstrip("\\n").encode())
    writer.flush()
    print("written", flush=True)
"""


def test_a_writer_in_another_process_killed_mid_run(tmp_path: Path) -> None:
    log = tmp_path / "r.jsonl"
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(log)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdin is not None and holder.stdout is not None

    def send(line: bytes) -> None:
        holder.stdin.write(line.decode() + "\n")
        holder.stdin.flush()
        ready, _, _ = select.select([holder.stdout], [], [], _DEADLINE)
        assert ready and holder.stdout.readline() == "written\n"

    def kill() -> None:
        send(_text(2, "two"))
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=_DEADLINE)

    try:
        send(_started())
        steps = Steps(lambda: send(_text(1, "one")), kill)
        events = list(follow_events(log, poll=0.005, on_wait=steps))
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(timeout=_DEADLINE)
    assert holder.returncode == -signal.SIGKILL
    assert [e.type for e in events] == ["run_started", "text_delta", "text_delta"] and _texts(events) == ["one", "two"]


def test_a_bad_line_goes_to_on_bad_line_or_raises(tmp_path: Path) -> None:
    writer = LogWriter(tmp_path / "r.jsonl")
    for line in (_started(), b"not json at all", b'{"type": "from_the_future"}', _done(1)):
        writer.write_line(line)
    writer.close()
    bad: list[BadLine] = []
    events = list(follow_events(writer.path, on_bad_line=bad.append))
    assert [e.type for e in events] == ["run_started", "done"]
    assert [(b.number, b.problem) for b in bad] == [
        (2, "is not JSON (a corrupt or cut line)"),
        (3, "is not an event type this Harness knows (written by a newer Harness?)")]
    with pytest.raises(InvalidSpecError, match=r"r\.jsonl:2 is not JSON"):
        list(follow_events(writer.path))


def test_a_huge_line_read_in_many_pieces_arrives_whole_once(tmp_path: Path) -> None:
    """An 8 MB tool result read 64 KiB at a time (128 reads) is one event, whole. (Its cost is linear: one growing
    buffer, newlines searched only in new bytes; no timing here — speed belongs in benchmarks.)"""
    writer = LogWriter(tmp_path / "r.jsonl")
    writer.write_line(_started())
    writer.write_line(_text(1, "x" * 8_000_000))
    writer.write_line(_done(2))
    writer.close()
    assert os.path.getsize(writer.path) > 8_000_000
    events = list(follow_events(writer.path))
    assert [e.type for e in events] == ["run_started", "text_delta", "done"] and len(_texts(events)[0]) == 8_000_000


def test_a_fifo_named_like_a_log_does_not_block_the_listing(tmp_path: Path) -> None:
    """`harness runs` summarises every `*.jsonl`: a FIFO (or device) with that name is unreadable, not a hang."""
    from harness_core.store import list_runs

    os.mkfifo(tmp_path / "pipe.jsonl")
    [summary] = list_runs(tmp_path)
    assert summary.status == "unreadable" and summary.problem == "not a regular file"
