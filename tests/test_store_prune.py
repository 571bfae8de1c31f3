"""`store.prune_runs`: which runs go (age from `done`, else the log's last write; statuses), every file of each
(and never a neighbour's), never a run its writer still holds, dry runs; and run ids that would clash with the
store's names (`last`, `<id>.wire`) refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness_core import AgentRunSpec, run_sync
from harness_core.errors import InvalidSpecError
from harness_core.events import Done, HarnessResult, RunStarted, RunStatus
from harness_core.plugins import PluginHost
from harness_core.store import LogWriter, find_run, list_runs, log_path, prune_runs, validate_run_id

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


def test_old_runs_go_with_every_file_they_own_and_nothing_of_their_neighbours(runs_dir: Path) -> None:
    _log(runs_dir, "abc", ended=NOW - 40 * DAY)
    (runs_dir / "abc.wire.jsonl").write_bytes(b"x" * 100)
    (runs_dir / "abc.answers").write_bytes(b"y" * 10)
    (runs_dir / "abc.work").mkdir()
    (runs_dir / "abc.work" / "state").write_bytes(b"z" * 7)
    _log(runs_dir, "abcd", ended=NOW - 1 * DAY)  # a longer id sharing the prefix: young, kept
    (runs_dir / "abcd.wire.jsonl").write_bytes(b"w")
    _log(runs_dir, "abc.1", ended=NOW - 1 * DAY)  # a run id with a dot: its files are not `abc`'s
    (runs_dir / "abc.1.wire.jsonl").write_bytes(b"w")
    (runs_dir / "notes.txt").write_text("not a run's")
    size = sum(p.stat().st_size for p in (runs_dir / "abc.jsonl", runs_dir / "abc.wire.jsonl",
                                          runs_dir / "abc.answers")) + 7

    report = prune_runs(runs_dir, older_than=30 * DAY, now=NOW)

    assert [r.run_id for r in report.runs] == ["abc"] and not report.dry_run
    assert report.runs[0].files[-1] == runs_dir / "abc.jsonl"  # the log goes last
    assert report.size == size == report.runs[0].size
    assert _names(runs_dir) == {"abcd.jsonl", "abcd.wire.jsonl", "abc.1.jsonl", "abc.1.wire.jsonl", "notes.txt"}
    assert {r.run_id for r in list_runs(runs_dir)} == {"abcd", "abc.1"}


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
        "dry_run": False, "count": 0, "bytes": 0, "runs": [], "held": [], "errors": []}
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
