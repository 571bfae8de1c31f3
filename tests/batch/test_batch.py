"""The batch driver on the local engine, offline: bounded concurrency (measured from the runs' own logs), a log and
a result per task, resume from the results file, retries of transient failures only, the cost limit, interrupts,
worktrees with real git and their patches."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness_core import AgentRunSpec
from harness_core.batch import Batch, BatchTask, TaskFileError, TaskResult, WorktreePlan, parse_tasks, run_batch
from harness_core.events import Done
from harness_core.plugins import PluginHost
from tests.batch.conftest import PROVIDER, max_overlap, read_results, run_logs, writes

pytestmark = pytest.mark.usefixtures("host")


def tasks_of(lines: list[dict[str, Any]]) -> list[BatchTask]:
    return parse_tasks([json.dumps(line) for line in lines], offline=True)


def play(batch: Batch) -> list[TaskResult]:
    async def main() -> list[TaskResult]:
        return [result async for result in batch.results()]

    return anyio.run(main)


def test_fifty_tasks_at_concurrency_eight_each_with_its_log_and_result(tmp_path: Path, host: PluginHost) -> None:
    tasks = tasks_of([{"id": f"t{n:02d}", "scenario": writes(f"f{n}.txt", f"task {n}\n", wait=0.15)}
                      for n in range(50)])
    batch = Batch(tasks, concurrency=8, offline=True, results=tmp_path / "results.jsonl", host=host)
    results = play(batch)

    assert sorted(r.id for r in results) == [f"t{n:02d}" for n in range(50)]
    assert all(r.ok and r.attempts == 1 for r in results), [r for r in results if not r.ok]
    assert {r.id: r.files_changed for r in results} == {f"t{n:02d}": (f"f{n}.txt",) for n in range(50)}
    assert [r["id"] for r in read_results(tmp_path / "results.jsonl")] == [r.id for r in results]
    logs = run_logs(tmp_path / "runs")
    assert set(logs) == {r.run_id for r in results}  # one log per task, nothing else
    assert all(isinstance(events[-1], Done) and events[-1].result.ok for events in logs.values())
    overlap = max_overlap(logs)
    assert 2 <= overlap <= 8, overlap  # measured from the logs, not from the driver's own count
    assert batch.stats.peak_running <= 8 and batch.stats.succeeded == 50


def test_a_rerun_skips_what_the_results_file_holds_as_finished(tmp_path: Path, host: PluginHost) -> None:
    lines = [{"id": f"t{n}", "scenario": writes(f"f{n}.txt", "x\n")} for n in range(6)]
    results = tmp_path / "results.jsonl"
    earlier = [TaskResult(id="t0", run_id="r0", status="success"), TaskResult(id="t1", run_id="r1", status="failed"),
               TaskResult(id="t2", run_id="r2", status="interrupted")]
    results.write_text("".join(r.model_dump_json() + "\n" for r in earlier) + '{"id": "t3", "run_')  # torn line
    batch = Batch(tasks_of(lines), concurrency=2, offline=True, results=results, host=host)
    played = play(batch)

    assert sorted(r.id for r in played) == ["t2", "t3", "t4", "t5"]  # interrupted and torn: played again
    assert batch.stats.skipped == 2
    assert [r["id"] for r in read_results(results)][:3] == ["t0", "t1", "t2"]
    assert len(read_results(results)) == 7  # the torn line is gone, four new lines follow the three
    again = Batch(tasks_of(lines), concurrency=2, offline=True, results=results, host=host)
    assert play(again) == [] and again.stats.skipped == 6


def test_an_injected_429_is_retried_and_the_retry_succeeds(tmp_path: Path, host: PluginHost) -> None:
    tasks = tasks_of([{"id": "flaky", "scenario": ["fail_429", writes("a.txt", "a\n")]},
                      {"id": "down", "scenario": "fail_500"},
                      {"id": "refused", "scenario": "fail_401"}])
    results = {r.id: r for r in play(Batch(tasks, offline=True, retry=2, retry_backoff=0.01, host=host))}

    assert results["flaky"].ok and results["flaky"].attempts == 2 and len(results["flaky"].run_ids) == 2
    assert results["down"].status == "failed" and results["down"].attempts == 3  # 5xx: retried, still down
    assert results["down"].error_code == "model_error" and results["down"].retryable
    assert results["refused"].attempts == 1 and results["refused"].error_code == "auth_failed"  # never retried
    logs = run_logs(tmp_path / "runs")
    assert len(logs) == 2 + 3 + 1  # every attempt is a run with its own log
    first = logs[results["flaky"].run_ids[0]][-1]
    assert isinstance(first, Done) and first.result.error is not None and first.result.error.code == "rate_limited"


def test_without_retry_a_rate_limit_is_the_result() -> None:
    tasks = tasks_of([{"id": "flaky", "scenario": ["fail_429", "say"]}])
    (result,) = play(Batch(tasks, offline=True))
    assert result.status == "failed" and result.error_code == "rate_limited" and result.retryable


def test_the_cost_limit_stops_starting_tasks(host: PluginHost) -> None:
    lines = [{"id": f"t{n}", "scenario": "say", "provider_options": {"cost_usd": 0.4}} for n in range(6)]
    batch = Batch(tasks_of(lines), concurrency=1, offline=True, max_cost_usd=1.0, host=host)
    played = play(batch)
    assert [r.id for r in played] == ["t0", "t1", "t2"]  # 0.4, 0.8, 1.2: the third reached the limit
    assert batch.budget_reached and batch.stats.not_started == 3
    assert played[0].cost_usd == pytest.approx(0.4)


def test_interrupt_ends_live_runs_cleanly_and_starts_no_more(tmp_path: Path, host: PluginHost) -> None:
    tasks = tasks_of([{"id": f"t{n}", "scenario": {"steps": [{"take_long": 30}, {"say": "late"}]}} for n in range(5)])
    started: list[str] = []
    batch = Batch(tasks, concurrency=2, offline=True, results=tmp_path / "r.jsonl", host=host,
                  on_update=lambda u: started.append(u.task_id) if u.kind == "started" else None)

    async def main() -> list[TaskResult]:
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                async def stop_when_two_live() -> None:
                    while len(started) < 2:  # noqa: ASYNC110 - the driver's callback is synchronous
                        await anyio.sleep(0.02)
                    await anyio.sleep(0.2)
                    batch.interrupt()
                tg.start_soon(stop_when_two_live)
                return [r async for r in batch.results()]

    played = anyio.run(main)
    assert sorted(r.status for r in played) == ["interrupted", "interrupted"]
    assert batch.stats.not_started == 3
    assert all(isinstance(events[-1], Done) for events in run_logs(tmp_path / "runs").values())
    assert [r["status"] for r in read_results(tmp_path / "r.jsonl")] == ["interrupted", "interrupted"]


def test_every_problem_is_reported_before_anything_starts(tmp_path: Path, host: PluginHost) -> None:
    lines = [{"id": "ok", "scenario": "say"}, {"id": "ghost", "provider": "nope"},
             {"id": "opts", "provider_options": {"colour": "blue"}}, {"id": "cap", "effort": "high", "provider": "x"}]
    batch = Batch(tasks_of(lines), offline=True, host=host)
    with pytest.raises(TaskFileError) as caught:
        anyio.run(batch.check)
    lines_said = [n for n, _ in caught.value.problems]
    assert lines_said == [2, 3, 4]
    assert "no provider named 'nope'" in caught.value.message and "colour" in caught.value.message
    assert not (tmp_path / "runs").exists() or not list((tmp_path / "runs").glob("*.jsonl"))


def test_run_batch_takes_tuples_from_python(tmp_path: Path, host: PluginHost) -> None:
    for n in range(3):
        (tmp_path / f"ws{n}").mkdir()
    specs = [(f"p{n}", AgentRunSpec(prompt="hi", cwd=tmp_path / f"ws{n}",
                                    provider_options={"scenario": "say"}), PROVIDER) for n in range(3)]

    async def main() -> list[TaskResult]:
        return [r async for r in run_batch(specs, concurrency=2, host=host)]

    assert sorted(r.id for r in anyio.run(main)) == ["p0", "p1", "p2"]


def test_a_task_cwd_gone_after_the_check_fails_that_task_and_is_never_made(tmp_path: Path, host: PluginHost) -> None:
    kept, gone = tmp_path / "kept", tmp_path / "gone"
    kept.mkdir()
    gone.mkdir()
    batch = Batch(tasks_of([{"id": "kept", "scenario": "say", "cwd": str(kept)},
                            {"id": "gone", "scenario": "say", "cwd": str(gone)}]), offline=True, host=host)
    anyio.run(batch.check)
    gone.rmdir()  # removed between the check and its start
    results = {r.id: r for r in play(batch)}
    assert results["kept"].ok and results["gone"].status == "failed"
    assert f"the task's cwd {gone} is gone" in (results["gone"].error or "")
    assert not gone.exists()


def test_a_problem_tasks_share_is_said_once_naming_every_task(tmp_path: Path) -> None:
    from tests.batch.conftest import offline_plugin
    from tests.cli.test_cli import _MissingPlugin

    host = PluginHost.create(entry_points=False, plugins=[(PROVIDER, offline_plugin), ("missing", _MissingPlugin())])
    tasks = parse_tasks([json.dumps({"id": f"t{n}", "prompt": "hi", "provider": "missing"}) for n in range(3)])
    with pytest.raises(TaskFileError) as caught:
        anyio.run(Batch(tasks, host=host).check)
    assert caught.value.problems == [(1, "t0 (also t1 on line 2, t2 on line 3): provider 'missing': missing-cli not "
                                         "found on PATH; install it with `pip install missing-cli`")]


# --- worktrees and patches, with real git -------------------------------------------------------------------

def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@e", *args], cwd=cwd, check=True,
                          capture_output=True, text=True, timeout=60).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git("init", "-q", cwd=path)
    for n in range(10):
        (path / f"m{n}.py").write_text(f"VALUE = {n}\n")
    git("add", ".", cwd=path)
    git("commit", "-qm", "base", cwd=path)
    return path


def test_each_task_in_its_worktree_and_its_patch_holds_only_its_edit(tmp_path: Path, repo: Path,
                                                                    host: PluginHost) -> None:
    lines = [{"id": f"t{n}", "scenario": {"steps": [{"take_long": 0.1},
                                                     {"edit": f"m{n}.py", "old": f"= {n}", "new": f"= {n + 100}"},
                                                     {"say": f"edited m{n}.py"}]}} for n in range(10)]
    out = tmp_path / "out"
    batch = Batch(tasks_of(lines), concurrency=4, offline=True, worktrees=WorktreePlan(repo, root=tmp_path / "wt"),
                  patches=out, host=host)
    results = {r.id: r for r in play(batch)}

    assert all(r.ok for r in results.values())
    for n in range(10):
        patch = (out / f"t{n}.patch").read_text()
        assert f"-VALUE = {n}\n+VALUE = {n + 100}\n" in patch
        assert patch.count("diff --git") == 1 and f"a/m{n}.py" in patch
        assert results[f"t{n}"].patch == str(out / f"t{n}.patch")
        check = subprocess.run(["git", "apply", "--check", str(out / f"t{n}.patch")], cwd=repo, timeout=60)
        assert check.returncode == 0
    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert sorted(p["instance_id"] for p in predictions) == [f"t{n}" for n in range(10)]
    assert all(set(p) == {"instance_id", "model_patch", "model_name_or_path"} for p in predictions)
    assert all(p["model_patch"] == (out / f"{p['instance_id']}.patch").read_text() for p in predictions)
    assert git("status", "--porcelain", cwd=repo) == ""  # the repository itself is untouched
    assert git("worktree", "list", cwd=repo).count("\n") == 1  # every worktree removed afterwards
    assert not list((tmp_path / "wt").glob("t*"))


def test_seeded_scenario_files_are_not_part_of_the_patch(tmp_path: Path, repo: Path, host: PluginHost) -> None:
    tasks = tasks_of([{"id": "tools", "scenario": "tools"}])  # seeds notes.txt, edits it, writes new.txt
    play(Batch(tasks, offline=True, worktrees=WorktreePlan(repo, root=tmp_path / "wt"), patches=tmp_path / "out",
               keep=True, host=host))
    patch = (tmp_path / "out" / "tools.patch").read_text()
    assert "b/new.txt" in patch and "+fresh" in patch
    assert "-alpha\n+beta\n" in patch  # notes.txt was in the base (seeded): a change, not a new file
    assert patch.count("new file mode") == 1
    assert (tmp_path / "wt" / "tools" / "new.txt").is_file()  # kept


def test_a_bad_ref_is_reported_with_its_line(tmp_path: Path, repo: Path, host: PluginHost) -> None:
    tasks = tasks_of([{"id": "a", "scenario": "say"}, {"id": "b", "scenario": "say", "ref": "no-such-branch"}])
    batch = Batch(tasks, offline=True, worktrees=WorktreePlan(repo, root=tmp_path / "wt"), host=host)
    with pytest.raises(TaskFileError) as caught:
        anyio.run(batch.check)
    assert [n for n, _ in caught.value.problems] == [2] and "no-such-branch" in caught.value.message


def test_no_secret_reaches_the_results_file(tmp_path: Path, host: PluginHost) -> None:
    from harness_core.scripted.scenarios import LEAK_SHAPED

    tasks = tasks_of([{"id": "leak", "scenario": "print_secrets"}])
    (result,) = play(Batch(tasks, offline=True, results=tmp_path / "r.jsonl", host=host))
    assert result.ok and "The token is" in result.final_text
    assert LEAK_SHAPED not in result.final_text
    assert LEAK_SHAPED not in (tmp_path / "r.jsonl").read_text()


def test_a_retry_starts_from_the_base_and_the_patch_holds_only_the_last_attempt(tmp_path: Path, repo: Path,
                                                                                 host: PluginHost) -> None:
    first = {"steps": [{"write": "junk.txt", "content": "half done\n"}, {"fail": 500}]}
    tasks = tasks_of([{"id": "t", "scenario": [first, writes("good.txt", "good\n")]}])
    (result,) = play(Batch(tasks, offline=True, retry=1, retry_backoff=0.01, patches=tmp_path / "out",
                           worktrees=WorktreePlan(repo, root=tmp_path / "wt"), host=host))
    assert result.ok and result.attempts == 2
    patch = (tmp_path / "out" / "t.patch").read_text()
    assert "b/good.txt" in patch and "junk.txt" not in patch


def test_a_task_the_driver_cannot_prepare_fails_alone(tmp_path: Path, host: PluginHost) -> None:
    from harness_core.scripted.scenarios import Say, Scenario

    escaping = Scenario("escaping", (Say("hi"),), files={"../outside.txt": "x"})
    tasks = [BatchTask("bad", AgentRunSpec(prompt="p"), scenarios=(escaping,)),
             *tasks_of([{"id": f"ok{n}", "scenario": writes(f"f{n}.txt", "x\n", wait=0.2)} for n in range(3)])]
    results = {r.id: r for r in play(Batch(tasks, concurrency=4, offline=True, host=host))}
    assert results["bad"].status == "failed" and results["bad"].error_code == "invalid_spec"
    assert "outside the workspace" in (results["bad"].error or "")
    assert all(results[f"ok{n}"].ok for n in range(3))
    assert not (tmp_path / "outside.txt").exists()


def test_an_interrupt_during_the_backoff_leaves_the_task_to_a_rerun(tmp_path: Path, host: PluginHost) -> None:
    tasks = tasks_of([{"id": "flaky", "scenario": ["fail_429", "say"]}])
    batch = Batch(tasks, offline=True, retry=3, retry_backoff=60, results=tmp_path / "r.jsonl", host=host,
                  on_update=lambda u: batch.interrupt() if u.kind == "retrying" else None)
    (result,) = play(batch)
    assert result.status == "interrupted" and result.error_code == "rate_limited"
    again = Batch(tasks, offline=True, retry=1, retry_backoff=0.01, results=tmp_path / "r.jsonl", host=host)
    assert [(r.ok, r.attempts) for r in play(again)] == [(True, 2)]  # not skipped: played again


def test_one_batch_at_a_time_per_results_file(tmp_path: Path) -> None:
    from harness_core.batch import ResultsFile
    from harness_core.errors import InvalidSpecError

    held = ResultsFile(tmp_path / "r.jsonl")
    try:
        with pytest.raises(InvalidSpecError, match="another batch is using the results file"):
            ResultsFile(tmp_path / "r.jsonl")
    finally:
        held.close()
    ResultsFile(tmp_path / "r.jsonl").close()
