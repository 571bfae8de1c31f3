"""Another user's runs directory, or one others may write, is refused by every command that uses it, with the
fix (git's `safe.directory` rule); a run file planted as a link or by another user is not used: a background
run's approvals are never answered from it. Approval request ids cannot be guessed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from harness_core import AgentRunSpec, open_run
from harness_core.events import ApprovalDecision, ApprovalRequested
from harness_core.jobs.answers import AnswersFile
from harness_core.plugins import PluginHost, get_host
from harness_core.store import UnsafeRunsDirError, check_runs_dir, list_runs, read_events, summarize

_DEADLINE = 60.0
_NOBODY = 65534

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root")


def _harness(runs_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HARNESS_PROVIDER": "scripted", "HARNESS_RUNS_DIR": str(runs_dir), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "harness_core", *args], env=env, text=True, capture_output=True,
                          timeout=_DEADLINE)


@pytest.fixture
def foreign_runs(tmp_path: Path) -> Iterator[Path]:
    """A runs directory (with one finished run in it) that belongs to another user."""
    runs = tmp_path / "runs"
    assert _harness(runs, "run", "x", "-o", "scenario=say").returncode == 0
    for path in [runs, *runs.iterdir()]:
        os.chown(path, _NOBODY, _NOBODY)
    yield runs
    for path in [runs, *runs.iterdir()]:
        os.chown(path, 0, 0)


@needs_root
@pytest.mark.parametrize("command", [["run", "x", "-o", "scenario=say"], ["run", "--background", "x"], ["runs"],
                                     ["show", "last"], ["attach", "last"], ["approve", "last"], ["cancel", "last"],
                                     ["runs", "prune", "--older-than", "0s"]])
def test_a_runs_dir_of_another_user_is_refused_by_every_command(foreign_runs: Path, command: list[str]) -> None:
    out = _harness(foreign_runs, *command)
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"the runs directory {foreign_runs} belongs to nobody (uid {_NOBODY})" in out.stderr
    assert f"sudo chown -R root {foreign_runs}" in out.stderr and "--runs-dir DIR" in out.stderr  # the fix
    assert "Traceback" not in out.stderr
    assert len(list(foreign_runs.glob("*.jsonl"))) == 1  # nothing was added


@pytest.mark.parametrize("mode", [0o770, 0o777, 0o1777])
def test_a_runs_dir_others_may_write_is_refused_with_the_chmod_that_fixes_it(tmp_path: Path, mode: int) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    runs.chmod(mode)
    out = _harness(runs, "run", "x", "-o", "scenario=say")
    assert out.returncode == 2 and f"chmod 700 {runs}" in out.stderr, out.stderr
    assert list(runs.iterdir()) == []
    listed = _harness(runs, "runs")
    assert listed.returncode == 2 and "may be written by" in listed.stderr
    runs.chmod(0o700)
    assert _harness(runs, "run", "x", "-o", "scenario=say").returncode == 0  # fixed as it said


def test_check_runs_dir_accepts_a_private_dir_and_a_missing_one(tmp_path: Path) -> None:
    check_runs_dir(tmp_path / "not-yet")
    (tmp_path / "mine").mkdir(mode=0o755)
    check_runs_dir(tmp_path / "mine")  # readable by others is the writer's to tighten, not a refusal


def _request() -> ApprovalRequested:
    return ApprovalRequested(request_id="r1")


def test_an_answers_file_planted_as_a_link_is_never_read_nor_written_through(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text(json.dumps({"request_id": "r1", "decision": "approve", "by": "mallory"}) + "\n")
    link = tmp_path / "run.answers"
    link.symlink_to(target)
    answers = AnswersFile(link)
    with pytest.raises(UnsafeRunsDirError, match="symbolic link"):
        answers.decisions()
    with pytest.raises(UnsafeRunsDirError, match="symbolic link"):
        answers.answer("r1", ApprovalDecision.DENY, by="me")
    with pytest.raises(UnsafeRunsDirError, match="symbolic link"):
        answers.clear()
    assert "mallory" in target.read_text()  # neither truncated nor appended to


@needs_root
def test_an_answers_file_of_another_user_is_not_taken(tmp_path: Path) -> None:
    path = tmp_path / "run.answers"
    path.write_text(json.dumps({"request_id": "r1", "decision": "approve", "by": "mallory"}) + "\n")
    path.chmod(0o600)
    os.chown(path, _NOBODY, _NOBODY)
    with pytest.raises(UnsafeRunsDirError, match="belongs to nobody"):
        AnswersFile(path).decisions()


def test_an_answers_file_others_may_write_is_not_taken(tmp_path: Path) -> None:
    path = tmp_path / "run.answers"
    path.write_text(json.dumps({"request_id": "r1", "decision": "approve", "by": "mallory"}) + "\n")
    path.chmod(0o666)
    with pytest.raises(UnsafeRunsDirError, match="may be written by its group and every user"):
        AnswersFile(path).decisions()


@pytest.mark.skipif("scripted" not in get_host().providers, reason="the scripted provider is not installed")
def test_a_background_run_denies_rather_than_take_a_swapped_answers_file(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    started = _harness(runs, "run", "--background", "x", "-o", "scenario=tools", "--approval", "untrusted")
    assert started.returncode == 0, started.stderr
    run_id = started.stdout.strip()
    log = runs / f"{run_id}.jsonl"
    deadline = time.monotonic() + _DEADLINE
    while summarize(log).status != "waiting for approval":
        assert time.monotonic() < deadline, summarize(log).status
        time.sleep(0.05)
    request = next(e for e in read_events(log) if isinstance(e, ApprovalRequested))
    answers = runs / f"{run_id}.answers"
    forged = tmp_path / "forged"
    forged.write_text(json.dumps({"request_id": request.request_id, "decision": "approve", "by": "mallory"}) + "\n")
    answers.unlink()
    answers.symlink_to(forged)  # what a user who could write the directory would do
    while summarize(log).done is None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    resolved = [e for e in read_events(log) if e.type == "approval_resolved"]
    assert resolved[0].decision is ApprovalDecision.DENY  # type: ignore[union-attr]
    assert "symbolic link" in (resolved[0].reason or "")  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_approval_request_ids_are_not_guessable(host: PluginHost, runs_dir: Path) -> None:
    ids: list[str] = []

    async def approve(request: ApprovalRequested) -> ApprovalDecision:
        ids.append(request.request_id)
        return ApprovalDecision.APPROVE

    for _ in range(2):
        spec = AgentRunSpec(prompt="x", approval="untrusted", provider_options={"scenario": "tools"})
        with anyio.fail_after(_DEADLINE):
            async with open_run(spec, "scripted", approver=approve, runs_dir=runs_dir) as live:
                await live.wait()
    assert len(ids) >= 4 and len(set(ids)) == len(ids)  # the same provider ids, run after run: never the same
    assert all(len(i) >= 16 for i in ids), ids
    for summary in list_runs(runs_dir):  # the log and every answer name the ids the approver saw
        logged = {e.request_id for e in read_events(summary.path) if isinstance(e, ApprovalRequested)}
        assert logged <= set(ids)

