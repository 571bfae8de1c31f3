"""`harness report` and `report(...)`: results files written here with known outcomes give the pass rates, Wilson
bounds, pass@k, rewards, costs and times worked out by hand; the last line of a cell counts; an interrupted or a
missing attempt is said; an old batch's lines (no attempt, model or verdict) still report; a bad line names its
file and line. The command at 80 and 160 columns (a real terminal), --json round-trips, --markdown is a table."""

from __future__ import annotations

import fcntl
import json
import os
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from harness_core.batch import Report, TaskResult, Verification, report
from harness_core.batch.scores import wilson_interval
from harness_core.cli import cli
from harness_core.errors import InvalidSpecError
from harness_core.events import Usage

_DEADLINE = 60


def cell(task: str, attempt: int, *, provider: str = "scripted", model: str | None = None, status: str = "success",
         verified: bool | None = None, reward: float | None = None, cost: float | None = None, ms: int = 1000,
         tokens: tuple[int, int] = (0, 0), code: str | None = None) -> TaskResult:
    verification = None if verified is None else Verification(ran=True, exit_code=0 if verified else 1, verdict=True)
    return TaskResult(id=task, run_id=f"run-{task}-{provider}-{model}-{attempt}", status=status,
                      provider=provider, model=model, attempt=attempt, verified=verified, reward=reward,
                      verification=verification, cost_usd=cost, duration_ms=ms, error_code=code,
                      usage=Usage(input_tokens=tokens[0], output_tokens=tokens[1], cost_usd=cost))


def write(path: Path, lines: Sequence[TaskResult | dict[str, Any] | str], *, end: str = "\n") -> Path:
    text = [line.model_dump_json() if isinstance(line, TaskResult) else
            json.dumps(line) if isinstance(line, dict) else line for line in lines]
    path.write_text("\n".join(text) + end)
    return path


def known(path: Path) -> Path:
    """Group `scripted`: task a passes 1 of 3 attempts, task b 3 of 3. Group `made-up/m2`: task a 2 of 5."""
    rewards_a = (1.0, 0.0, 0.5)
    lines: list[TaskResult | dict[str, Any] | str] = []
    for attempt in (1, 2, 3):
        lines.append(cell("a", attempt, verified=attempt == 1, reward=rewards_a[attempt - 1], cost=0.25,
                          ms=100 * attempt, tokens=(1000, 10)))
        lines.append(cell("b", attempt, verified=True, reward=1.0, cost=0.25, ms=100 * (attempt + 3),
                          tokens=(2000, 20)))
    for attempt in range(1, 6):
        failed = attempt == 5
        lines.append(cell("a", attempt, provider="made-up", model="m2", verified=attempt in (2, 4),
                          reward=1.0 if attempt in (2, 4) else 0.0, status="failed" if failed else "success",
                          code="rate_limited" if failed else None, ms=1000))
    return write(path, lines)


def test_the_numbers_equal_the_hand_computed_ones(tmp_path: Path) -> None:
    found = report(known(tmp_path / "r.results.jsonl"))
    ours, theirs = found.groups
    assert (ours.label, ours.tasks, ours.runs, ours.succeeded, ours.solved_by) == ("scripted", 2, 6, 6, "verifier")
    assert (ours.passed, ours.verified_runs, ours.pass_rate, ours.solved) == (4, 6, 4 / 6, 4)
    assert (ours.pass_rate_low, ours.pass_rate_high) == wilson_interval(4, 6)
    assert ours.pass_rate_low == pytest.approx(0.29999, abs=5e-6)
    assert ours.pass_rate_high == pytest.approx(0.90323, abs=5e-6)
    assert ours.attempts == 3
    assert ours.pass_at_k == {1: 2 / 3, 2: 5 / 6, 3: 1.0}  # a: 1/3, 2/3, 1; b: 1, 1, 1; averaged over the tasks
    assert ours.pass_at_k_note is None
    assert ours.mean_reward == 0.75  # (1 + 0 + 0.5 + 3) / 6
    assert (ours.cost_usd, ours.cost_per_solved_usd) == (1.5, 0.375)
    assert (ours.input_tokens, ours.output_tokens) == (9000, 90)
    assert (ours.duration_p50_ms, ours.duration_p95_ms) == (300, 600)  # nearest rank of 100..600
    assert ours.errors == {}

    assert (theirs.label, theirs.provider, theirs.model) == ("made-up/m2", "made-up", "m2")
    assert (theirs.runs, theirs.succeeded, theirs.failed, theirs.passed, theirs.pass_rate) == (5, 4, 1, 2, 0.4)
    assert theirs.pass_at_k == {1: 0.4, 2: 0.7, 3: 0.9, 4: 1.0, 5: 1.0}  # n=5, c=2: 1 - C(3,k)/C(5,k)
    assert theirs.mean_reward == 0.4
    assert (theirs.cost_usd, theirs.cost_per_solved_usd) == (None, None)
    assert theirs.errors == {"rate_limited": 1}

    assert [(row.id, [(c.group, c.solved, c.cells) for c in row.groups]) for row in found.tasks] == [
        ("a", [("scripted", 1, 3), ("made-up/m2", 2, 5)]), ("b", [("scripted", 3, 3)])]
    assert found.tasks[0].groups[0].run_ids == [f"run-a-scripted-None-{n}" for n in (1, 2, 3)]
    assert (found.lines, found.cells, found.notes) == (11, 11, [])


def test_the_last_line_of_a_cell_counts_and_an_interrupted_one_is_said(tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", [
        cell("a", 1, status="interrupted", verified=None, code="interrupted"),
        cell("a", 1, verified=True, reward=1.0),  # the resumed batch played it again
        cell("a", 2, verified=False, reward=0.0),
        cell("b", 1, verified=True, reward=1.0),
        cell("b", 2, status="interrupted", code="interrupted", ms=99_000),
    ])
    found = report(path)
    group = found.groups[0]
    assert (found.lines, found.cells, group.runs, group.interrupted, group.verified_runs) == (5, 4, 4, 1, 3)
    assert group.pass_rate == 2 / 3 and group.mean_reward == 2 / 3
    assert group.pass_at_k == {1: 0.75}  # a: 1/2, b: 1/1; pass@2 needs 2 verified attempts of b
    assert group.duration_p95_ms == 1000  # the interrupted cell's time is not a run's time
    assert group.errors == {}  # interrupted is its own column, not a failure
    assert "1 earlier line(s) replaced by a later line of the same cell" in found.notes[0]
    assert group.pass_at_k_note is not None and group.pass_at_k_note in found.notes
    assert "pass@k for k > 1 is not defined: task b has 1 verified attempt(s) of the 2" in group.pass_at_k_note
    assert [(c.solved, c.cells, c.interrupted) for row in found.tasks for c in row.groups] == [(1, 2, 0), (1, 2, 1)]


def test_a_verifier_without_a_verdict_is_said_and_left_out_of_the_rate(tmp_path: Path) -> None:
    stopped = cell("a", 2).model_copy(update={"verification": Verification(ran=False, reason="the batch stopped")})
    found = report(write(tmp_path / "r.jsonl", [cell("a", 1, verified=True, reward=1.0), stopped]))
    group = found.groups[0]
    assert (group.verified_runs, group.no_verdict, group.pass_rate, group.solved, group.solved_by) == (
        1, 1, 1.0, 1, "verifier")
    assert "scripted: 1 finished run(s) have a verifier but no verdict" in found.notes[0]


def test_an_old_batch_without_attempts_models_or_verdicts_still_reports(tmp_path: Path) -> None:
    old = [{"id": f"t{n}", "run_id": f"r{n}", "status": "success" if n < 3 else "failed", "provider": "scripted",
            "error_code": None if n < 3 else "process_exited", "attempts": 1, "run_ids": [f"r{n}"],
            "usage": {"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.5}, "cost_usd": 0.5, "duration_ms": 400,
            "files_changed": [], "final_text": "done", "patch": None} for n in range(4)]
    found = report(write(tmp_path / "old.results.jsonl", old))
    group = found.groups[0]
    assert (group.label, group.runs, group.succeeded, group.solved, group.solved_by) == ("scripted", 4, 3, 3, "status")
    assert (group.pass_rate, group.pass_rate_low, group.pass_at_k, group.mean_reward) == (None, None, {}, None)
    assert (group.cost_usd, group.cost_per_solved_usd, group.errors) == (2.0, 2.0 / 3, {"process_exited": 1})
    text = invoke("report", str(tmp_path / "old.results.jsonl")).stdout
    assert "the run succeeded (no verifier) (scripted)" in text
    row = next(line for line in text.splitlines() if line.startswith("scripted "))
    assert row.split()[6:10] == ["—", "—", "—", "—"]  # PASS, 95% CI, PASS@1, REWARD: no verifier


def test_several_files_are_batches_of_their_own_a_shared_group_split_by_file(tmp_path: Path) -> None:
    first = write(tmp_path / "one.jsonl", [cell("a", 1, verified=False, reward=0.0)])
    second = write(tmp_path / "two.jsonl", [cell("a", 1, verified=True, reward=1.0),
                                             cell("a", 1, provider="made-up", verified=False, reward=0.0)])
    found = report(first, second)
    assert found.files == [str(first), str(second)]
    assert (found.lines, found.cells) == (3, 3)  # one file's line replaces no line of another
    assert [(g.label, g.file, g.passed, g.runs) for g in found.groups] == [
        ("one: scripted", str(first), 0, 1), ("two: scripted", str(second), 1, 1), ("made-up", str(second), 0, 1)]
    assert "scripted: in several of them, so a group per file" in found.notes[-1]
    assert not any("replaced" in note for note in found.notes)
    assert report(first, first).cells == 1 and "given more than once" in report(first, first).notes[0]


def test_two_prompts_of_the_same_tasks_and_provider_compare_side_by_side(tmp_path: Path) -> None:
    """A comparison of prompts: two tasks files with the same ids, played by one provider, 3 attempts each."""
    def batch(path: Path, passes: dict[str, int]) -> Path:
        return write(path, [cell(task, attempt, verified=attempt <= passed, reward=float(attempt <= passed),
                                 cost=0.5, ms=100 * attempt)
                            for task, passed in passes.items() for attempt in (1, 2, 3)])

    terse = batch(tmp_path / "terse.results.jsonl", {"fix": 1, "docs": 0})
    detailed = batch(tmp_path / "detailed.results.jsonl", {"fix": 3, "docs": 2})
    found = report(terse, detailed)
    a, b = found.groups
    assert (a.label, a.provider, a.file, a.passed, a.verified_runs, a.pass_rate) == (
        "terse: scripted", "scripted", str(terse), 1, 6, 1 / 6)
    assert (b.label, b.provider, b.file, b.passed, b.verified_runs, b.pass_rate) == (
        "detailed: scripted", "scripted", str(detailed), 5, 6, 5 / 6)
    assert a.pass_at_k == {1: 1 / 6, 2: 1 / 3, 3: 0.5} and b.pass_at_k[3] == 1.0  # fix 1/3, 2/3, 1; docs 0
    assert (a.cost_usd, a.cost_per_solved_usd, b.cost_per_solved_usd) == (3.0, 3.0, 0.6)
    assert [[(c.group, c.solved, c.cells) for c in row.groups] for row in found.tasks] == [
        [("terse: scripted", 1, 3), ("detailed: scripted", 3, 3)],
        [("terse: scripted", 0, 3), ("detailed: scripted", 2, 3)]]
    text = invoke("report", str(terse), str(detailed)).stdout
    assert "group(s) (provider/model, per file where files share one)" in text
    grid = text[text.index("solved runs per task:"):].splitlines()
    assert grid[1].split() == ["TASK", "terse:", "scripted", "detailed:", "scripted"]
    assert grid[2].split() == ["fix", "1/3", "3/3"] and grid[3].split() == ["docs", "0/3", "2/3"]
    result = invoke("report", str(terse), str(detailed), "--json")
    assert Report.model_validate_json(result.stdout) == found
    assert [g["file"] for g in json.loads(result.stdout)["groups"]] == [str(terse), str(detailed)]
    (tmp_path / "again").mkdir()  # the same stem in another directory: the label is the path as given
    same_stem = batch(tmp_path / "again" / "terse.results.jsonl", {"fix": 2, "docs": 2})
    assert [g.label for g in report(terse, same_stem).groups] == [f"{terse}: scripted", f"{same_stem}: scripted"]


def test_a_torn_last_line_is_left_out_and_said_a_whole_one_counts(tmp_path: Path) -> None:
    whole = cell("b", 1, verified=True, reward=1.0).model_dump_json()
    torn = write(tmp_path / "torn.jsonl", [cell("a", 1, verified=True, reward=1.0), whole[:40]], end="")
    found = report(torn)
    assert found.cells == 1 and f"{torn}:2: an unfinished last line" in found.notes[0]
    assert report(write(tmp_path / "whole.jsonl", [cell("a", 1), whole], end="")).cells == 2


@pytest.mark.parametrize(("line", "said"), [
    ("{not json", "not JSON"),
    (json.dumps({"id": "a", "prompt": "fix it"}), "it looks like a tasks file"),
    (json.dumps({"id": "a", "run_id": "r", "status": "exploded"}), "status: Input should be"),
])
def test_a_bad_line_names_its_file_and_line_and_what_to_do(tmp_path: Path, line: str, said: str) -> None:
    path = write(tmp_path / "bad.jsonl", [cell("a", 1), "", line, cell("a", 2)])
    with pytest.raises(InvalidSpecError, match=f"{path}:3: not a task result") as caught:
        report(path)
    assert said in caught.value.message and "remove the line" in caught.value.message
    result = invoke("report", str(path))
    assert result.exit_code == 2 and f"harness: error: {path}:3: not a task result" in result.stderr
    assert "Traceback" not in result.output


def test_a_missing_file_or_a_directory_is_a_usage_error_with_the_next_step(tmp_path: Path) -> None:
    result = invoke("report", str(tmp_path / "nope.results.jsonl"))
    assert result.exit_code == 2, result.output
    assert "cannot read the results file" in result.stderr and "TASKS.results.jsonl" in result.stderr
    result = invoke("report")
    assert result.exit_code == 2 and "Missing argument 'RESULTS.jsonl...'" in result.stderr


def test_text_from_the_file_sends_no_control_character_to_the_terminal(tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", [cell("evil\x1b]0;owned\x07", 1, provider="made\x1b[2J-up", status="failed",
                                             code="bad\ncode\x1b[31m")])
    for args in ([], ["--markdown"]):
        out = invoke("report", str(path), *args).stdout
        assert "\x1b" not in out and "\x07" not in out and "bad code[31m 1" in out, out
    assert report(path).tasks[0].id == "evil\x1b]0;owned\x07"  # the model keeps the data as it is (--json escapes it)


def test_an_empty_results_file_says_there_is_nothing_yet(tmp_path: Path) -> None:
    path = write(tmp_path / "empty.jsonl", [], end="")
    result = invoke("report", str(path))
    assert result.exit_code == 0 and "no results in" in result.stdout and "yet" in result.stdout
    assert report(path).groups == []


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_json_round_trips_to_the_same_report(tmp_path: Path) -> None:
    path = known(tmp_path / "r.jsonl")
    result = invoke("report", str(path), "--json")
    assert result.exit_code == 0, result.output
    assert Report.model_validate_json(result.stdout) == report(path)
    assert json.loads(result.stdout)["groups"][1]["pass_at_k"]["2"] == 0.7


def test_markdown_is_a_table(tmp_path: Path) -> None:
    result = invoke("report", str(known(tmp_path / "r.jsonl")), "--markdown")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    header = lines.index(next(line for line in lines if line.startswith("| GROUP |")))
    assert lines[header + 1] == "|" + "|".join(["---"] * (lines[header].count(" | ") + 1)) + "|"
    assert lines[header + 2].startswith(
        "| scripted | 2 | 6 | 6 | 0 | 4 | 4/6 66.7% | 30.0–90.3% | 66.7% | 100.0% (k=3) |")
    assert "| a | 1/3 | 2/5 |" in lines and "| b | 3/3 | - |" in lines
    assert invoke("report", "x", "--json", "--markdown").exit_code == 2


def _on_a_terminal(tmp_path: Path, columns: int, *args: str) -> str:
    """`harness report ARGS` on a pseudo-terminal `columns` wide ($COLUMNS too), its output."""
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "xterm-256color"}
    controller, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    child = subprocess.Popen([sys.executable, "-m", "harness_core", "report", *args], cwd=tmp_path, env=env,
                             stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal, start_new_session=True)
    os.close(terminal)
    seen = b""
    deadline = time.monotonic() + _DEADLINE
    try:
        while time.monotonic() < deadline:
            if select.select([controller], [], [], 0.2)[0]:
                try:
                    chunk = os.read(controller, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                seen += chunk
            elif child.poll() is not None:
                break
        assert child.wait(timeout=max(deadline - time.monotonic(), 1)) == 0, seen
    finally:
        os.close(controller)
        if child.poll() is None:
            child.kill()
            child.wait(timeout=10)
    return seen.decode().replace("\r\n", "\n")


def test_on_a_wide_terminal_a_table_and_on_a_narrow_one_a_block_per_group(tmp_path: Path) -> None:
    path = known(tmp_path / "r.jsonl")
    wide = _on_a_terminal(tmp_path, 160, str(path))
    lines = wide.splitlines()
    assert max(len(line) for line in lines) <= 160, wide
    assert any(line.startswith("GROUP     ") and "PASS@1" in line and "95% CI" in line for line in lines), wide
    assert any(line.startswith("scripted  ") and "4/6 66.7%" in line and "30.0–90.3%" in line for line in lines)
    assert "TASK  scripted  made-up/m2" in lines

    narrow = _on_a_terminal(tmp_path, 80, str(path))
    lines = narrow.splitlines()
    assert max(len(line) for line in lines) <= 80, narrow
    assert not any(line.startswith("GROUP ") for line in lines), narrow
    assert "scripted: 2 tasks, 6 runs: 6 succeeded, 0 failed, 0 interrupted" in lines
    assert "  pass      4/6 66.7% (95% CI 30.0–90.3%), pass@1 66.7%, pass@3 100.0%" in lines
    assert "  cost      $1.5000 total, $0.3750 per solved run" in lines
    assert "  pass      2/5 40.0% (95% CI 11.8–76.9%), pass@1 40.0%, pass@5 100.0%" in lines
    assert "  failures  rate_limited 1" in lines


def test_a_verifier_that_decided_nothing_is_left_out_and_a_failed_run_counts_as_a_fail(tmp_path: Path) -> None:
    """A verifier that timed out (ran, no verdict: reward 0, verified False) is out of the pass rate; a run that
    failed (its verifier not run: reward 0) is a fail."""
    timed_out = cell("a", 2).model_copy(update={"verified": False, "reward": 0.0, "verification": Verification(
        ran=True, reason="timed out after 1 s (verify_timeout)", verdict=False)})
    failed = cell("a", 3, status="failed", code="model_error").model_copy(update={
        "verified": False, "reward": 0.0, "verification": Verification(ran=False, reason="the run failed")})
    found = report(write(tmp_path / "r.jsonl", [cell("a", 1, verified=True, reward=1.0), timed_out, failed]))
    group = found.groups[0]
    assert (group.verified_runs, group.passed, group.no_verdict, group.pass_rate) == (2, 1, 1, 0.5)
    assert group.mean_reward == 0.5
