"""`store.prune_runs`: which runs go (age from `done`, else the log's last write; statuses), exactly the files
the store knows of each (never an unknown sibling, a neighbour's, a directory or a link), never a file that is
not a run log (a foreign `.jsonl`, an empty or torn one, another run's), never a run its writer still holds, dry
runs; and run ids that would clash with the store's names (`last`, `<id>.wire`) refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness_core import AgentRunSpec, run_sync
from harness_core.errors import InvalidSpecError
from harness_core.events import Done, HarnessResult, RunStarted, RunStatus
from harness_core.plugins import PluginHost
from harness_core.store import (
    RUN_FILE_SUFFIXES,
    LogWriter,
    SkippedLog,
    find_run,
    list_runs,
    log_path,
    prune_runs,
    validate_run_id,
)

DAY = 86400.0
NOW = 1_800_000_000.0


def _log(runs_dir: Path, run_id: str, *, ended: float | None, status: RunStatus = RunStatus.SUCCESS,
         keep_open: bool = False) -> LogWriter:
    """A run log; `ended=None`: no `done` (lost, or still running with `keep_open`)."""
    writer = LogWriter(runs_dir / f"{run_id}.jsonl")
    started = RunStarted(run_id=run_id, seq=0, ts=(ended or NOW) - 10, provider="scripted", provider_version="1",
                         spec={"prompt": "p"})
    writer.write_line(started.model_dump_json().encode())
    if ended is not None:
        done = Done(run_id=run_id, seq=1, ts=ended, result=HarnessResult(status=status))
        writer.write_line(done.model_dump_json().encode())
    writer.flush()
    if not keep_open:
        writer.close()
    return writer


def _names(runs_dir: Path) -> set[str]:
    return {p.name for p in runs_dir.iterdir()}


def _old(path: Path, content: bytes | None = None) -> None:
    """Make `path` 40 days old (written with `content` first, when given)."""
    if content is not None:
        path.write_bytes(content)
    os.utime(path, (NOW - 40 * DAY, NOW - 40 * DAY))


def test_old_runs_lose_exactly_the_files_the_store_knows_and_nothing_of_their_neighbours(runs_dir: Path) -> None:
    _log(runs_dir, "abc", ended=NOW - 40 * DAY)
    (runs_dir / "abc.wire.jsonl").write_bytes(b"x" * 100)
    (runs_dir / "abc.answers").write_bytes(b"y" * 10)
    (runs_dir / "abc.worker.log").write_bytes(b"v" * 5)
    (runs_dir / "abc.verify.log").write_bytes(b"u" * 3)
    (runs_dir / "abc.notes").write_text("the user's, beside a run")  # an unknown sibling: not the store's
    (runs_dir / "abc.work").mkdir()
    (runs_dir / "abc.work" / "state").write_bytes(b"z" * 7)
    _log(runs_dir, "abcd", ended=NOW - 1 * DAY)  # a longer id sharing the prefix: young, kept
    (runs_dir / "abcd.wire.jsonl").write_bytes(b"w")
    _log(runs_dir, "abc.1", ended=NOW - 1 * DAY)  # a run id with a dot: its files are not `abc`'s
    (runs_dir / "abc.1.wire.jsonl").write_bytes(b"w")
    (runs_dir / "notes.txt").write_text("not a run's")
    known = [runs_dir / f"abc{suffix}" for suffix in (".wire.jsonl", ".answers", ".worker.log", ".verify.log",
                                                              ".jsonl")]
    assert {p.name for p in known} == {f"abc{suffix}" for suffix in RUN_FILE_SUFFIXES}
    sizes = tuple(p.stat().st_size for p in known)

    report = prune_runs(runs_dir, older_than=30 * DAY, now=NOW)

    assert [r.run_id for r in report.runs] == ["abc"] and not report.dry_run and report.skipped == ()
    assert report.runs[0].files == tuple(known) and report.runs[0].sizes == sizes  # the log goes last
    assert report.size == sum(sizes) == report.runs[0].size
    assert _names(runs_dir) == {"abcd.jsonl", "abcd.wire.jsonl", "abc.1.jsonl", "abc.1.wire.jsonl", "notes.txt",
                                "abc.notes", "abc.work"}
    assert (runs_dir / "abc.work" / "state").read_bytes() == b"z" * 7
    assert {r.run_id for r in list_runs(runs_dir)} == {"abcd", "abc.1"}


def test_a_foreign_jsonl_and_everything_beside_it_survive(runs_dir: Path) -> None:
    """The review's case: `--runs-dir` pointed at a data folder must not lose `data.*`, recursively."""
    runs_dir.mkdir()
    _old(runs_dir / "data.jsonl", b'{"a": 1}\n')
    (runs_dir / "data.csv").write_text("a,b\n")
    (runs_dir / "data.d").mkdir()
    (runs_dir / "data.d" / "keep.txt").write_text("keep")
    assert [s.status for s in list_runs(runs_dir)] == ["lost"]  # what made the old prune take it

    for dry_run in (True, False):
        report = prune_runs(runs_dir, older_than=30 * DAY, dry_run=dry_run, now=NOW)
        assert report.runs == () and report.size == 0 and report.errors == ()
        assert report.skipped == (SkippedLog(runs_dir / "data.jsonl", "its first line is not a Harness event"),)
        assert report.as_json()["skipped"] == [{"path": str(runs_dir / "data.jsonl"),
                                                "reason": "its first line is not a Harness event"}]
    assert _names(runs_dir) == {"data.jsonl", "data.csv", "data.d"}
    assert (runs_dir / "data.d" / "keep.txt").read_text() == "keep"


def test_a_log_that_starts_another_run_is_not_pruned(runs_dir: Path) -> None:
    _log(runs_dir, "other", ended=NOW - 40 * DAY)
    (runs_dir / "copy.jsonl").write_bytes((runs_dir / "other.jsonl").read_bytes())  # not `copy`'s run_started
    (runs_dir / "copy.wire.jsonl").write_bytes(b"w")
    _old(runs_dir / "copy.jsonl")

    report = prune_runs(runs_dir, older_than=30 * DAY, now=NOW)

    assert [r.run_id for r in report.runs] == ["other"]
    assert report.skipped == (SkippedLog(runs_dir / "copy.jsonl", "its first line starts run 'other', not 'copy'"),)
    assert _names(runs_dir) == {"copy.jsonl", "copy.wire.jsonl"}


@pytest.mark.parametrize(("content", "reason"), [
    (b"", "it is empty"),
    (b'{"type": "run_started", "run_id": "x"', "its first line is incomplete (being written, or cut)"),
    (b"\x00\xff garbage\n", "its first line is not JSON"),
    (b'{"type": "done"}\n', "its first line is not a Harness event"),
])
def test_an_empty_torn_or_corrupt_log_is_skipped_and_named(runs_dir: Path, content: bytes, reason: str) -> None:
    runs_dir.mkdir()
    _old(runs_dir / "x.jsonl", content)
    (runs_dir / "x.wire.jsonl").write_bytes(b"w")

    report = prune_runs(runs_dir, older_than=30 * DAY, now=NOW)

    assert report.runs == () and report.skipped == (SkippedLog(runs_dir / "x.jsonl", reason),)
    assert _names(runs_dir) == {"x.jsonl", "x.wire.jsonl"}


def test_a_first_line_of_another_event_is_no_run_log(runs_dir: Path) -> None:
    runs_dir.mkdir()
    done = Done(run_id="x", seq=1, ts=NOW - 40 * DAY, result=HarnessResult(status=RunStatus.SUCCESS))
    (runs_dir / "x.jsonl").write_bytes(done.model_dump_json().encode() + b"\n")  # a done, and no run_started

    report = prune_runs(runs_dir, older_than=30 * DAY, now=NOW)

    assert report.runs == () and report.skipped == (
        SkippedLog(runs_dir / "x.jsonl", "its first line is a `done` event, not `run_started`"),)
    assert _names(runs_dir) == {"x.jsonl"}


def test_links_and_directories_by_a_run_files_name_are_left_alone(runs_dir: Path, tmp_path: Path) -> None:
    _log(runs_dir, "real", ended=NOW - 40 * DAY)
    (runs_dir / "real.wire.jsonl").mkdir()  # a directory by a run file's name: never the store's, never rmtree'd
    (runs_dir / "real.wire.jsonl" / "inside").write_text("keep")
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep")
    (runs_dir / "real.answers").symlink_to(target)
    _log(tmp_path, "linked", ended=NOW - 40 * DAY)
    (runs_dir / "linked.jsonl").symlink_to(tmp_path / "linked.jsonl")  # a run log elsewhere, linked in

    report = prune_runs(runs_dir, older_than=30 * DAY, now=NOW)

    assert [r.run_id for r in report.runs] == ["real"] and report.runs[0].files == (runs_dir / "real.jsonl",)
    assert report.skipped == (SkippedLog(runs_dir / "linked.jsonl", "it is a symbolic link"),)
    assert _names(runs_dir) == {"real.wire.jsonl", "real.answers", "linked.jsonl"}
    assert (runs_dir / "real.wire.jsonl" / "inside").read_text() == "keep" == target.read_text()
    assert (tmp_path / "linked.jsonl").is_file()


def test_age_is_the_end_else_the_logs_last_write(runs_dir: Path) -> None:
    _log(runs_dir, "ended-long-ago", ended=NOW - 10 * DAY)
    os.utime(log_path(runs_dir, "ended-long-ago"), (NOW, NOW))  # touched since: the `done` time still counts
    _log(runs_dir, "lost-old", ended=None)
    os.utime(log_path(runs_dir, "lost-old"), (NOW - 10 * DAY, NOW - 10 * DAY))
    _log(runs_dir, "lost-recent", ended=None)
    os.utime(log_path(runs_dir, "lost-recent"), (NOW - 3600, NOW - 3600))
    _log(runs_dir, "ended-recently", ended=NOW - 3600)

    report = prune_runs(runs_dir, older_than=2 * 3600, now=NOW)

    assert sorted(r.run_id for r in report.runs) == ["ended-long-ago", "lost-old"]
    assert {r.status for r in report.runs} == {"success", "lost"}
    assert _names(runs_dir) == {"lost-recent.jsonl", "ended-recently.jsonl"}


def test_a_run_its_writer_holds_is_never_pruned_however_old(runs_dir: Path) -> None:
    writer = _log(runs_dir, "running", ended=None, keep_open=True)
    wire = runs_dir / "running.wire.jsonl"
    wire.write_bytes(b"{}\n")
    for path in (writer.path, wire):
        os.utime(path, (NOW - 100 * DAY, NOW - 100 * DAY))
    try:
        for dry_run in (True, False):
            report = prune_runs(runs_dir, older_than=0, dry_run=dry_run, now=NOW)
            assert report.runs == () and report.held == ("running",)
            assert _names(runs_dir) == {"running.jsonl", "running.wire.jsonl"}
    finally:
        writer.close()
    assert [r.run_id for r in prune_runs(runs_dir, older_than=0, now=NOW).runs] == ["running"]  # lost now
    assert _names(runs_dir) == set()


def test_statuses_and_dry_run(runs_dir: Path) -> None:
    _log(runs_dir, "ok", ended=NOW - 5 * DAY)
    _log(runs_dir, "bad", ended=NOW - 5 * DAY, status=RunStatus.FAILED)
    _log(runs_dir, "stopped", ended=NOW - 5 * DAY, status=RunStatus.INTERRUPTED)
    before = _names(runs_dir)

    dry = prune_runs(runs_dir, older_than=DAY, statuses=["failed", "interrupted"], dry_run=True, now=NOW)
    assert dry.dry_run and sorted(r.run_id for r in dry.runs) == ["bad", "stopped"]
    assert dry.size == sum((runs_dir / f"{r}.jsonl").stat().st_size for r in ("bad", "stopped"))
    assert _names(runs_dir) == before  # a dry run removes nothing

    done = prune_runs(runs_dir, older_than=DAY, statuses=["failed"], now=NOW)
    assert [r.run_id for r in done.runs] == ["bad"] and done.as_json()["count"] == 1
    assert _names(runs_dir) == {"ok.jsonl", "stopped.jsonl"}


def test_nothing_to_prune(runs_dir: Path, tmp_path: Path) -> None:
    assert prune_runs(tmp_path / "missing", older_than=0).runs == ()
    _log(runs_dir, "young", ended=NOW)
    assert prune_runs(runs_dir, older_than=DAY, now=NOW).as_json() == {
        "dry_run": False, "count": 0, "bytes": 0, "runs": [], "held": [], "errors": [], "skipped": []}
    with pytest.raises(ValueError, match="0 or more"):
        prune_runs(runs_dir, older_than=-1)


def test_last_is_no_run_id(runs_dir: Path, host: PluginHost) -> None:
    with pytest.raises(InvalidSpecError, match="names the newest run"):
        validate_run_id("last")
    with pytest.raises(InvalidSpecError, match="names the newest run"):  # chosen through the Python API
        run_sync(AgentRunSpec(prompt="hi"), "scripted", host=host, runs_dir=runs_dir, run_id="last")
    assert not runs_dir.exists() or _names(runs_dir) == set()
    with pytest.raises(InvalidSpecError, match="is the wire log of run 'x'"):
        log_path(runs_dir, "x.wire")  # `x.wire.jsonl` is run x's wire log
    _log(runs_dir, "lastly", ended=NOW)  # only the exact word is reserved
    assert find_run(runs_dir, "last") == "lastly" == validate_run_id("lastly")
