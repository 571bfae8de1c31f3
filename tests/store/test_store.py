"""Run store: directory resolution, run ids, private files, torn lines, listing."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from harness_core.errors import InvalidSpecError
from harness_core.events import Done, HarnessResult, RunStarted, RunStatus, TextDelta
from harness_core.store import (
    LogWriter,
    list_runs,
    log_path,
    new_run_id,
    read_events,
    resolve_runs_dir,
    summarize,
    validate_run_id,
)


def test_runs_dir_precedence(tmp_path: Path) -> None:
    env = {"HARNESS_RUNS_DIR": str(tmp_path / "env"), "XDG_STATE_HOME": str(tmp_path / "xdg")}
    assert resolve_runs_dir(tmp_path / "flag", env) == tmp_path / "flag"
    assert resolve_runs_dir(None, env) == tmp_path / "env"
    assert resolve_runs_dir(None, {"XDG_STATE_HOME": str(tmp_path / "xdg")}) == tmp_path / "xdg/harness/runs"
    assert resolve_runs_dir(None, {}) == Path.home() / ".local/state/harness/runs"


@pytest.mark.parametrize("bad", ["../x", "a/b", "..", "", ".hidden", "a\\b", "x" * 200, "a b", "/etc/passwd"])
def test_bad_run_ids_are_refused(bad: str, tmp_path: Path) -> None:
    with pytest.raises(InvalidSpecError, match="harness runs"):
        log_path(tmp_path, bad)


def test_new_run_ids_are_valid_and_sortable() -> None:
    first, second = new_run_id(), new_run_id()
    assert validate_run_id(first) == first and first != second
    assert first[:15] <= second[:15]


def _write(path: Path, *events: object) -> None:
    writer = LogWriter(path)
    for event in events:
        writer.write_line(event.model_dump_json().encode())  # type: ignore[attr-defined]
    writer.close()


def test_logs_are_private_and_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "r1.jsonl"
    _write(path, TextDelta(text="x"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    with pytest.raises(FileExistsError):
        LogWriter(path)


def test_reader_tolerates_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    _write(path, TextDelta(text="a"), TextDelta(text="b"))
    with path.open("ab") as fh:
        fh.write(b'{"run_id":"r","seq":2,"ty')
    assert [e.text for e in read_events(path)] == ["a", "b"]  # type: ignore[union-attr]


def test_reader_names_a_corrupt_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"type":"text_delta","text":"a"}\n{"nonsense": true}\n')
    with pytest.raises(InvalidSpecError, match=r"r\.jsonl:2"):
        list(read_events(path))


def test_listing_reads_first_and_last_lines(tmp_path: Path) -> None:
    started = RunStarted(run_id="20260101T000000-aaaa", provider="p", provider_version="1", spec={"prompt": "hi"})
    done = Done(result=HarnessResult(status=RunStatus.SUCCESS, duration_ms=7))
    _write(tmp_path / "20260101T000000-aaaa.jsonl", started, TextDelta(text="x" * 10_000), done)
    _write(tmp_path / "20260102T000000-bbbb.jsonl", started)
    (tmp_path / "20260102T000000-bbbb.wire.jsonl").write_text("{}\n")
    runs = list_runs(tmp_path)
    assert [r.run_id for r in runs] == ["20260102T000000-bbbb", "20260101T000000-aaaa"]
    assert [r.status for r in runs] == ["lost", "success"]  # bbbb's writer closed without `done`
    assert runs[1].as_json()["prompt"] == "hi" and runs[1].as_json()["duration_ms"] == 7


def test_running_lost_and_unreadable_runs(tmp_path: Path) -> None:
    started = RunStarted(run_id="r", provider="p", provider_version="1", spec={"prompt": "hi"})
    live = LogWriter(tmp_path / "20260103T000000-live.jsonl")
    live.write_line(started.model_dump_json().encode())
    live.flush()
    _write(tmp_path / "20260102T000000-dead.jsonl", started)
    unreadable = tmp_path / "20260101T000000-gone.jsonl"
    unreadable.mkdir()  # a directory named like a log: reading it fails
    statuses = {r.run_id: r.status for r in list_runs(tmp_path)}
    assert statuses == {"20260103T000000-live": "running", "20260102T000000-dead": "lost",
                        "20260101T000000-gone": "unreadable"}
    live.close()
    assert summarize(tmp_path / "20260103T000000-live.jsonl").status == "lost"


def test_an_existing_runs_dir_is_made_private(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir(mode=0o755)
    runs.chmod(0o755)
    LogWriter(runs / "r.jsonl").close()
    assert stat.S_IMODE(runs.stat().st_mode) == 0o700


def test_run_id_with_a_trailing_newline_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidSpecError):
        validate_run_id("20260101T000000-aaaa\n")
