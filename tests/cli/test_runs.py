"""`harness runs` and `harness show` as people use them: run ids by unique prefix or `last` (`show` with no id is
the last run), an ambiguous prefix names its candidates; `runs --limit/--status/--provider`; `runs prune`."""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_core.events import Done, HarnessResult, RunStarted, RunStatus
from harness_core.plugins import PluginHost, reset_host
from harness_core.store import LogWriter, list_runs
from tests.cli.test_cli import invoke, make_host


@pytest.fixture(autouse=True)
def runs_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    host: PluginHost = make_host()
    reset_host(host)
    directory = tmp_path / "runs"
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(directory))
    (tmp_path / "tmp").mkdir()  # `runs prune` also sweeps what killed runs left in the temporary directory: this
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # test's, not the machine's (other runs')
    yield directory
    reset_host(None)


def _log(runs_dir: Path, run_id: str, ts: float, status: RunStatus, provider: str = "scripted") -> None:
    writer = LogWriter(runs_dir / f"{run_id}.jsonl")
    started = RunStarted(run_id=run_id, seq=0, ts=ts, provider=provider, provider_version="1",
                         spec={"prompt": f"prompt of {run_id}"})
    done = Done(run_id=run_id, seq=1, ts=ts + 1, result=HarnessResult(status=status, duration_ms=1000))
    for event in (started, done):
        writer.write_line(event.model_dump_json().encode())
    writer.close()


@pytest.fixture
def three(runs_dir: Path) -> Path:
    _log(runs_dir, "20261201T100000-aaaa1111", 1000.0, RunStatus.SUCCESS)
    _log(runs_dir, "20261201T110000-aaab2222", 2000.0, RunStatus.FAILED, provider="other")
    _log(runs_dir, "20261201T120000-cccc3333", 3000.0, RunStatus.INTERRUPTED)
    return runs_dir


def test_show_takes_a_unique_prefix_and_last(three: Path) -> None:
    assert json.loads(invoke("show", "20261201T10", "--json").stdout)["run_id"] == "20261201T100000-aaaa1111"
    assert json.loads(invoke("show", "last", "--json").stdout)["run_id"] == "20261201T120000-cccc3333"
    assert json.loads(invoke("show", "--json").stdout)["run_id"] == "20261201T120000-cccc3333"  # no id: last


def test_an_ambiguous_prefix_names_the_candidates(three: Path) -> None:
    result = invoke("show", "20261201T1")
    assert result.exit_code == 2
    assert "matches 3 runs" in result.stderr and "20261201T110000-aaab2222" in result.stderr


def test_show_last_with_no_runs_says_how_to_start_one() -> None:
    result = invoke("show")
    assert result.exit_code == 2 and "harness run PROMPT" in result.stderr


def test_runs_limit_status_and_provider(three: Path) -> None:
    newest = invoke("runs", "--limit", "1").stdout.splitlines()
    assert "20261201T120000-cccc3333" in newest[1] and len(newest) == 3
    assert newest[2] == "(2 older runs not shown; --limit 0 shows all)"
    listed = json.loads(invoke("runs", "--json", "--status", "success", "--status", "failed").stdout)
    assert [r["run_id"] for r in listed] == ["20261201T110000-aaab2222", "20261201T100000-aaaa1111"]
    assert [r["run_id"] for r in json.loads(invoke("runs", "--json", "--provider", "other").stdout)] == [
        "20261201T110000-aaab2222"]
    assert "match the filters" in invoke("runs", "--provider", "scripted", "--status", "lost").stdout
    assert "no provider named 'nobody'" in invoke("runs", "--provider", "nobody").stderr
    assert len(json.loads(invoke("runs", "--json", "--limit", "0").stdout)) == 3


def test_show_says_when_where_what_changed_and_the_whole_prompt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  runs_dir: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("alpha\n")
    prompt = "first line of the task\nsecond line, which an excerpt would cut " + "x" * 80
    assert invoke("run", prompt, "-o", "scenario=tools", "--provider", "scripted").exit_code == 0
    shown = invoke("show").stdout
    assert f"directory {tmp_path}" in shown and "started   20" in shown
    assert "prompt    first line of the task\n          second line, which an excerpt would cut " + "x" * 80 in shown
    assert "changed   notes.txt, new.txt" in shown
    assert json.loads(invoke("show", "--json").stdout)["files_changed"] == ["notes.txt", "new.txt"]  # as recorded


def test_a_lost_run_says_what_lost_means(runs_dir: Path) -> None:
    writer = LogWriter(runs_dir / "20261201T130000-dddd4444.jsonl")
    writer.write_line(RunStarted(run_id="20261201T130000-dddd4444", seq=0, ts=1.0, provider="scripted",
                                 provider_version="1", spec={"prompt": "p"}).model_dump_json().encode())
    writer.close()  # no `done`, and nobody holds the log: lost
    shown = invoke("show", "last").stdout
    assert "status    lost" in shown and "its Harness ended before the run did" in shown


def test_show_never_prints_a_logs_control_characters(runs_dir: Path) -> None:
    writer = LogWriter(runs_dir / "20261201T140000-eeee5555.jsonl")
    writer.write_line(RunStarted(run_id="20261201T140000-eeee5555", seq=0, ts=1.0, provider="scripted",
                                 provider_version="1", spec={"prompt": "hi\x1b]0;pwned\x07 there",
                                                             "cwd": "/tmp/\x1b[2Jws"}).model_dump_json().encode())
    writer.close()
    shown = invoke("show", "last").stdout
    assert "\x1b" not in shown and "\x07" not in shown and "prompt    hi]0;pwned there" in shown


# --- harness runs prune -----------------------------------------------------------------------------------

def test_runs_is_still_the_list_and_lists_prune_in_its_help(three: Path) -> None:
    assert len(invoke("runs", "-n", "2").stdout.splitlines()) == 4  # header, two runs, the "not shown" line
    assert "prune" in invoke("runs", "--help").stdout
    assert "--older-than AGE" in invoke("runs", "prune", "--help").stdout


def test_prune_removes_old_runs_and_says_how_many_and_how_much(three: Path) -> None:
    (three / "20261201T100000-aaaa1111.wire.jsonl").write_bytes(b"w" * 2048)
    _log(three, "20261201T130000-young000", time.time(), RunStatus.SUCCESS)
    dry = invoke("runs", "prune", "--older-than", "30d", "--dry-run")
    assert dry.exit_code == 0 and "would remove  20261201T100000-aaaa1111  success" in dry.stdout
    assert "3 runs (" in dry.stdout and "would be removed" in dry.stdout and len(list_runs(three)) == 4
    done = invoke("runs", "prune", "--older-than", "30d", "--status", "failed")
    assert done.exit_code == 0 and done.stdout.splitlines()[-1].startswith("removed 1 run, ")
    assert "20261201T110000-aaab2222" in done.stdout
    report = json.loads(invoke("runs", "prune", "--older-than", "2w", "--json").stdout)
    assert [r["run_id"] for r in report["runs"]] == ["20261201T120000-cccc3333", "20261201T100000-aaaa1111"]
    assert report["count"] == 2 and report["bytes"] > 2048 and report["dry_run"] is False
    assert [r.run_id for r in list_runs(three)] == ["20261201T130000-young000"]
    assert sorted(p.name for p in three.iterdir()) == ["20261201T130000-young000.jsonl"]
    assert "nothing to remove" in invoke("runs", "prune", "--older-than", "1h").stdout


def test_prune_lists_every_file_it_removes_or_would(three: Path) -> None:
    old = "20261201T100000-aaaa1111"
    (three / f"{old}.wire.jsonl").write_bytes(b"w" * 2048)
    (three / f"{old}.answers").write_bytes(b"{}\n")
    (three / f"{old}.notes").write_text("the user's")  # not a file of the store's: neither listed nor removed
    files = sorted(p for p in three.iterdir() if p.suffix != ".notes")
    for dry_run in (True, False):
        result = invoke("runs", "prune", "--older-than", "30d", *(["--dry-run"] if dry_run else []))
        assert result.exit_code == 0
        listed = [line.split()[0] for line in result.stdout.splitlines() if line.startswith("    ")]
        assert sorted(Path(p) for p in listed) == files  # each file, under its run
        assert "    " + str(three / f"{old}.wire.jsonl") + "  2.0 KiB" in result.stdout
        totals = f"3 runs ({len(files)} files, " if dry_run else f"removed 3 runs, {len(files)} files, "
        assert totals in result.stdout.splitlines()[-1]
        assert ".notes" not in result.stdout
    assert sorted(p.name for p in three.iterdir()) == [f"{old}.notes"]


def test_prune_in_a_data_folder_removes_nothing_of_it(tmp_path: Path) -> None:
    """The review's case: `--runs-dir .` in a folder of data: `data.jsonl` (40 days old) is no run log."""
    data = tmp_path / "project"
    (data / "data.d").mkdir(parents=True)
    (data / "data.jsonl").write_text('{"x": 1}\n')
    (data / "data.csv").write_text("x\n1\n")
    (data / "data.d" / "keep.txt").write_text("keep")
    os.utime(data / "data.jsonl", (time.time() - 40 * 86400,) * 2)
    for extra in (["--dry-run"], [], ["--json"]):
        result = invoke("runs", "prune", "--older-than", "30d", "--runs-dir", str(data), *extra)
        assert result.exit_code == 0
        if extra == ["--json"]:
            report = json.loads(result.stdout)
            assert report["runs"] == [] and report["skipped"] == [
                {"path": str(data / "data.jsonl"), "reason": "its first line is not a Harness event"}]
        else:
            assert "nothing to remove" in result.stdout and "would remove" not in result.stdout
            assert (f"skipped: not a Harness run log  {data / 'data.jsonl'}  (its first line is not a Harness "
                    "event)") in result.stdout
            assert "skipped 1 file: not a Harness run log" in result.stdout
    assert sorted(p.name for p in data.iterdir()) == ["data.csv", "data.d", "data.jsonl"]
    assert (data / "data.d" / "keep.txt").read_text() == "keep"


def test_prune_keeps_a_running_run_and_says_so(runs_dir: Path) -> None:
    writer = LogWriter(runs_dir / "20261201T150000-ffff6666.jsonl")
    writer.write_line(RunStarted(run_id="20261201T150000-ffff6666", seq=0, ts=1.0, provider="scripted",
                                 provider_version="1", spec={"prompt": "p"}).model_dump_json().encode())
    writer.flush()
    os.utime(writer.path, (1.0, 1.0))
    try:
        kept = invoke("runs", "prune", "--older-than", "0s")
        assert kept.exit_code == 0 and "kept 1 still running" in kept.stdout and writer.path.exists()
    finally:
        writer.close()
    assert "removed 1 run" in invoke("runs", "--runs-dir", str(runs_dir), "prune", "--older-than", "0s").stdout


@pytest.mark.parametrize("age", ["30", "30 days", "1.5d", "-3d", "3M", "d"])
def test_a_bad_age_is_a_usage_error_naming_the_forms(three: Path, age: str) -> None:
    result = invoke("runs", "prune", "--older-than", age)
    assert result.exit_code == 2 and "30d, 12h, 90m, 2w or 45s" in result.stderr
    assert len(list_runs(three)) == 3


def test_ages() -> None:
    from harness_core.cli.runs.commands import parse_age

    assert [parse_age(a) for a in ("30d", "12h", "90m", "2w", "45s", "0s")] == [
        30 * 86400, 12 * 3600, 90 * 60, 14 * 86400, 45, 0]


def test_list_options_before_prune_are_refused(three: Path) -> None:
    result = invoke("runs", "--status", "failed", "prune", "--older-than", "1d")
    assert result.exit_code == 2 and "after it" in result.stderr and len(list_runs(three)) == 3
    assert invoke("runs", "prune").exit_code == 2  # --older-than is required: no default retention


def test_runs_provider_filter_names_a_typo() -> None:
    invoke("run", "x", "-o", "scenario=say")
    typo = invoke("runs", "--provider", "scriptd")
    assert typo.exit_code == 2 and "did you mean 'scripted'?" in typo.stderr
    assert invoke("runs", "--provider", "scripted").exit_code == 0


def test_show_says_an_action_cut_short_at_its_question_did_not_run(runs_dir: Path) -> None:
    """As the live view does: an edit whose question Ctrl-C cut short is `⊘ … (not run: interrupted)`, a denied
    one `(not run: denied)`, not `✗ … (failed)`; a command that ran stays as it ended."""
    from harness_core.events import (
        ApprovalDecision,
        ApprovalRequested,
        ApprovalResolved,
        HarnessToolDetails,
        ToolKind,
        ToolResult,
        ToolStatus,
        ToolUse,
    )

    run_id = "20261201T160000-abcd7777"
    edit = HarnessToolDetails(kind=ToolKind.EDIT, title="Editing file", path="notes.txt")
    write = HarnessToolDetails(kind=ToolKind.WRITE, title="Writing file", path="new.txt")
    shell = HarnessToolDetails(kind=ToolKind.SHELL, title="Running command", command="make")
    events = [
        RunStarted(provider="scripted", provider_version="1", spec={"prompt": "p"}),
        ToolUse(tool_id="s", name="shell", display=shell),
        ToolResult(tool_id="s", name="shell", display=shell.model_copy(update={"status": ToolStatus.FAILED,
                                                                              "exit_code": 2})),
        ToolUse(tool_id="w", name="write", display=write),
        ApprovalRequested(request_id="r1", tool_id="w", display=write),
        ApprovalResolved(request_id="r1", decision=ApprovalDecision.DENY, reason="answered on the terminal"),
        ToolResult(tool_id="w", name="write", display=write.model_copy(update={"status": ToolStatus.FAILED})),
        ToolUse(tool_id="e", name="edit", display=edit),
        ApprovalRequested(request_id="r2", tool_id="e", display=edit),
        ToolResult(tool_id="e", name="edit", display=edit.model_copy(update={"status": ToolStatus.FAILED})),
        Done(result=HarnessResult(status=RunStatus.INTERRUPTED)),
    ]
    writer = LogWriter(runs_dir / f"{run_id}.jsonl")
    for seq, event in enumerate(events):
        writer.write_line(event.model_copy(update={"run_id": run_id, "seq": seq, "ts": 1.0 + seq})
                          .model_dump_json().encode())
    writer.close()
    shown = invoke("show", run_id)
    assert "  ✗ Running command make (exit 2)" in shown.stdout
    assert "  ⊘ Writing file new.txt (not run: denied)" in shown.stdout
    assert "  ⊘ Editing file notes.txt (not run: interrupted)" in shown.stdout
    tools = json.loads(invoke("show", run_id, "--json").stdout)["tools"]
    assert [t.get("not_run") for t in tools] == [None, "denied", "interrupted"]
