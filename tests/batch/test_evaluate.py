"""Evaluating with a batch, offline: verifiers (exit status, reward.json, reward.txt) judging scripted agents that
write a right or a wrong answer, a hanging verifier bounded and its tree gone, a failed run not verified, the
provider x model x attempt matrix, resume by cell, and a `harness batch` SIGKILLed mid-verification resumed."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest

from harness_core.batch import Batch, BatchTask, BatchUpdate, TaskFileError, TaskResult, WorktreePlan, parse_tasks
from harness_core.batch.results import Verification
from harness_core.batch.verifier import Verdict, run_verifier
from harness_core.capabilities import Capability, ProviderInfo
from harness_core.executor import Executor, TaskAttempt, WorkerLostError
from harness_core.plugins import PluginHost, reset_host
from harness_core.provider import hookimpl
from harness_core.redaction import RunSecrets
from harness_core.transport.process import ChildProcess
from harness_core.transport.proctree import marked_with
from tests.batch.conftest import PROVIDER, batch_process, finish, offline_plugin, read_results, run_logs, task_lines

OTHER = "scripted-offline-b"
RIGHT = {"steps": [{"write": "answer.txt", "content": "42\n"}, {"say": "the answer is 42"}]}
WRONG = {"steps": [{"write": "answer.txt", "content": "41\n"}, {"say": "the answer is 41"}]}
CHECK = "grep -qx 42 answer.txt"
GRADE = ('if grep -qx 42 answer.txt; then t=1 r=0.75; else t=0 r=0.25; fi; '
         'printf \'{"reward": %s, "tests": %s, "style": 0.5}\' "$r" "$t" > "$HARNESS_VERIFIER_DIR/reward.json"; '
         'echo graded')


class _OtherProvider(offline_plugin.OfflineScriptedProvider):  # type: ignore[name-defined,misc]
    info: ClassVar[ProviderInfo] = ProviderInfo(name=OTHER, version="1.0", capabilities=frozenset(Capability))


class _OtherPlugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(_OtherProvider)


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginHost]:
    """Two offline scripted providers: the test plugin's and one more (for the matrix)."""
    monkeypatch.chdir(tmp_path)
    found = PluginHost.create(entry_points=False, plugins=[(PROVIDER, offline_plugin), (OTHER, _OtherPlugin())])
    reset_host(found)
    monkeypatch.setenv("HARNESS_PROVIDER", PROVIDER)
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(tmp_path / "runs"))
    yield found
    reset_host(None)


def tasks_of(lines: list[dict[str, Any]]) -> list[BatchTask]:
    return parse_tasks([json.dumps(line) for line in lines], offline=True)


def play(batch: Batch, deadline: float = 120) -> list[TaskResult]:
    async def main() -> list[TaskResult]:
        with anyio.fail_after(deadline):
            return [result async for result in batch.results()]

    return anyio.run(main)


def test_verifiers_judge_right_and_wrong_answers(tmp_path: Path, host: PluginHost) -> None:
    secret = "s3cret-token-value-1234"
    lines = [
        {"id": "exit-right", "scenario": RIGHT, "verify": CHECK},
        {"id": "exit-wrong", "scenario": WRONG, "verify": CHECK},
        {"id": "json-right", "scenario": RIGHT, "verify": GRADE},
        {"id": "json-wrong", "scenario": WRONG, "verify": GRADE},
        {"id": "json-reward", "scenario": RIGHT,
         "verify": 'echo \'{"reward": 1, "tests": 0.5}\' > "$HARNESS_VERIFIER_DIR/reward.json"'},
        {"id": "txt", "scenario": WRONG, "verify": 'echo 0.25 > "$HARNESS_VERIFIER_DIR/reward.txt"; exit 3'},
        {"id": "nan", "scenario": RIGHT, "verify": 'echo nan > "$HARNESS_VERIFIER_DIR/reward.txt"'},
        {"id": "json-one", "scenario": RIGHT, "verify": 'echo \'{"score": 1}\' > "$HARNESS_VERIFIER_DIR/reward.json"'},
        {"id": "json-several", "scenario": RIGHT,  # counts are not rewards: no verdict, never a mean
         "verify": 'echo \'{"ok": 1, "count": 3}\' > "$HARNESS_VERIFIER_DIR/reward.json"'},
        {"id": "json-first", "scenario": RIGHT,  # as Harbor: reward.json before reward.txt
         "verify": 'echo 1 > "$HARNESS_VERIFIER_DIR/reward.txt"; '
                   'echo \'{"reward": 0.5}\' > "$HARNESS_VERIFIER_DIR/reward.json"'},
        {"id": "leaky", "scenario": RIGHT, "env": {"TOKEN": secret}, "verify_env": {"LEAK": secret},
         "verify": 'echo "to stdout $LEAK"; echo "to stderr" >&2'},
        {"id": "plain", "scenario": RIGHT},  # the batch's verifier
    ]
    batch = Batch(tasks_of(lines), offline=True, verify="test -s answer.txt", results=tmp_path / "r.jsonl",
                  host=host)
    results = {r.id: r for r in play(batch)}

    expected = {"exit-right": (1.0, True, None), "exit-wrong": (0.0, False, None),
                "json-right": (0.75, False, {"reward": 0.75, "tests": 1.0, "style": 0.5}),
                "json-wrong": (0.25, False, {"reward": 0.25, "tests": 0.0, "style": 0.5}),
                "json-reward": (1.0, True, {"reward": 1.0, "tests": 0.5}), "txt": (0.25, False, None),
                "nan": (0.0, False, None), "json-one": (1.0, True, {"score": 1.0}),
                "json-several": (0.0, False, {"ok": 1.0, "count": 3.0}), "json-first": (0.5, False, {"reward": 0.5}),
                "leaky": (1.0, True, None), "plain": (1.0, True, None)}
    assert {i: (r.reward, r.verified, r.rewards) for i, r in results.items()} == expected
    assert all(r.ok and r.verification is not None and r.verification.ran for r in results.values())
    assert {i for i, r in results.items() if not r.verification.verdict} == {"nan", "json-several"}  # type: ignore[union-attr]
    assert results["json-several"].verification.reason == (  # type: ignore[union-attr]
        "no verdict: reward.json has several numbers and no `reward`: write the one that decides as `reward`")
    assert results["exit-wrong"].verification.exit_code == 1  # type: ignore[union-attr]
    assert results["exit-wrong"].verification.reason == "the verifier exited with status 1"  # type: ignore[union-attr]
    assert results["txt"].verification.exit_code == 3  # type: ignore[union-attr]
    assert "reward.txt holds 'nan', not a finite number" in (results["nan"].verification.reason or "")  # type: ignore[union-attr]
    assert results["json-right"].verification.output_tail == "graded\n"  # type: ignore[union-attr]
    leaky = results["leaky"].verification
    assert leaky is not None and secret not in leaky.output_tail and "to stdout" in leaky.output_tail
    assert "to stderr" in leaky.output_tail  # stderr merged in
    output = Path(leaky.output or "")
    assert output == tmp_path / "runs" / f"{results['leaky'].run_id}.verify.log"
    assert stat.S_IMODE(output.stat().st_mode) == 0o600 and secret not in output.read_text()
    assert "to stdout" in output.read_text()
    assert batch.stats.passed == 5 and batch.stats.not_passed == 7 and batch.stats.verifiers
    assert secret not in (tmp_path / "r.jsonl").read_text()
    assert {r["id"]: r["reward"] for r in read_results(tmp_path / "r.jsonl")} == {i: e[0] for i, e in expected.items()}


def test_a_hanging_verifier_is_bounded_and_its_process_tree_is_gone(tmp_path: Path, host: PluginHost) -> None:
    ChildProcess.track_started_marks()
    pids = tmp_path / "pids"
    verify = '(sleep 1000 & echo $! >> "$PIDS"; wait) & echo $! >> "$PIDS"; echo $$ >> "$PIDS"; sleep 1000'
    lines = [{"id": "hangs", "scenario": RIGHT, "verify": verify, "verify_timeout": 1,
              "verify_env": {"PIDS": str(pids)}}]
    (result,) = play(Batch(tasks_of(lines), offline=True, host=host), deadline=60)

    verification = result.verification
    assert verification is not None and verification.ran and verification.exit_code is None
    assert (verification.reason or "").startswith("timed out after 1 s (verify_timeout)")
    assert result.ok and result.reward == 0.0 and result.verified is False
    assert len(pids.read_text().split()) == 3
    assert marked_with(ChildProcess.started_marks()) == set()  # nothing the batch started is left
    for pid in map(int, pids.read_text().split()):
        assert not _alive(pid), pid


def test_a_failed_run_is_not_verified(tmp_path: Path, host: PluginHost) -> None:
    marker = tmp_path / "verified"
    lines = [{"id": "refused", "scenario": "fail_401", "verify": f"touch {marker}"}]
    (result,) = play(Batch(tasks_of(lines), offline=True, host=host))
    assert result.status == "failed" and result.reward == 0.0 and result.verified is False
    assert result.verification is not None and not result.verification.ran
    assert result.verification.reason == "not verified: the agent's run failed (auth_failed)"
    assert not marker.exists()


def test_an_interrupt_stops_a_verifier_and_the_cell_plays_again(tmp_path: Path, host: PluginHost) -> None:
    ChildProcess.track_started_marks()
    lines = [{"id": "slow", "scenario": RIGHT, "verify": "sleep 1000"}]
    batch = Batch(tasks_of(lines), offline=True, results=tmp_path / "r.jsonl", host=host)
    batch.on_update = lambda u: batch.interrupt() if u.kind == "verifying" else None
    (result,) = play(batch, deadline=60)
    assert result.status == "interrupted" and result.verification is not None
    assert (result.verification.reason or "").startswith("stopped: the batch was interrupted")
    assert marked_with(ChildProcess.started_marks()) == set()
    assert read_results(tmp_path / "r.jsonl")[0]["status"] == "interrupted"


def test_two_providers_two_attempts_make_four_cells_per_task(tmp_path: Path, host: PluginHost) -> None:
    updates: list[BatchUpdate] = []
    lines = [{"id": "t1", "scenario": RIGHT}, {"id": "t2", "scenario": WRONG},
             {"id": "pinned", "scenario": RIGHT, "provider": OTHER}]
    batch = Batch(tasks_of(lines), providers=[PROVIDER, OTHER], attempts=2, offline=True, verify=CHECK,
                  results=tmp_path / "r.jsonl", host=host, on_update=updates.append)
    results = play(batch)

    cells = sorted(r.cell for r in results)
    assert cells == sorted([(t, p, "", a) for t in ("t1", "t2") for p in (PROVIDER, OTHER) for a in (1, 2)]
                           + [("pinned", OTHER, "", 1), ("pinned", OTHER, "", 2)])
    assert len({r.run_id for r in results}) == 10 and set(run_logs(tmp_path / "runs")) == {r.run_id for r in results}
    assert all(r.attempts == 1 for r in results)  # tries of a cell, not its place among --attempts
    assert {r.id: r.verified for r in results} == {"t1": True, "t2": False, "pinned": True}
    assert batch.stats.total == 10 and batch.stats.tasks == 3 and batch.stats.passed == 6
    labels = {u.label for u in updates if u.kind == "finished"}
    assert f"t1 [{PROVIDER}, attempt 2]" in labels and "pinned [attempt 1]" not in labels
    assert f"pinned [{OTHER}, attempt 1]" in labels
    assert len(read_results(tmp_path / "r.jsonl")) == 10


def test_models_make_cells_and_a_task_model_pins_it(tmp_path: Path, host: PluginHost) -> None:
    lines = [{"id": "free", "scenario": RIGHT}, {"id": "own", "scenario": RIGHT, "model": "m-own"}]
    results = play(Batch(tasks_of(lines), models=["m/1", "m-2"], offline=True, host=host))
    assert sorted(r.cell for r in results) == [("free", PROVIDER, "m-2", 1), ("free", PROVIDER, "m/1", 1),
                                              ("own", PROVIDER, "m-own", 1)]


def test_a_rerun_plays_only_the_cells_the_results_file_lacks(tmp_path: Path, host: PluginHost) -> None:
    results = tmp_path / "r.jsonl"
    earlier = [TaskResult(id="t1", run_id="r1", status="success", provider=PROVIDER, attempt=1),
               TaskResult(id="t1", run_id="r2", status="failed", provider=OTHER, attempt=2),
               TaskResult(id="t1", run_id="r3", status="interrupted", provider=PROVIDER, attempt=2)]
    results.write_text("".join(r.model_dump_json() + "\n" for r in earlier))
    lines = [{"id": "t1", "scenario": RIGHT}]

    def again(**options: Any) -> list[TaskResult]:
        return play(Batch(tasks_of(lines), providers=[PROVIDER, OTHER], attempts=2, offline=True, results=results,
                          host=host, **options))

    played = again()
    assert sorted(r.cell for r in played) == [("t1", PROVIDER, "", 2), ("t1", OTHER, "", 1)]
    assert again() == []
    assert [r.cell for r in again(rerun_failed=True)] == [("t1", OTHER, "", 2)]


def test_patches_and_worktrees_of_cells_do_not_collide(tmp_path: Path, host: PluginHost) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "base"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@e", *args], cwd=repo, check=True,
                       capture_output=True, timeout=60)
    lines = [{"id": "t1", "scenario": RIGHT}, {"id": "solo", "scenario": WRONG, "provider": PROVIDER}]
    out = tmp_path / "out"
    results = play(Batch(tasks_of(lines), providers=[PROVIDER, OTHER], offline=True, host=host, patches=out,
                         worktrees=WorktreePlan(repo, root=tmp_path / "wt"), verify=CHECK))
    assert sorted(p.name for p in out.glob("*.patch")) == sorted(
        [f"t1+{OTHER}.patch", f"t1+{PROVIDER}.patch", "solo.patch"])
    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert sorted((p["instance_id"], p["model_name_or_path"]) for p in predictions) == sorted([
        ("solo", f"harness/{PROVIDER}"), ("t1", f"harness/{OTHER}"), ("t1", f"harness/{PROVIDER}")])
    assert all("+42" in p["model_patch"] or "+41" in p["model_patch"] for p in predictions)
    assert {r.id: r.verified for r in results} == {"t1": True, "solo": False}


def test_the_verify_fields_of_a_tasks_file_are_checked_all_at_once() -> None:
    lines = [{"id": "a", "prompt": "x", "verify": ""}, {"id": "b", "prompt": "x", "verify_timeout": 0},
             {"id": "c", "prompt": "x", "verify_env": {"1BAD": "x", "OK": 3}}, {"id": "d", "prompt": "x", "verfy": "x"},
             {"id": "e", "prompt": "x", "verify": "pytest -q", "verify_timeout": 30, "verify_env": {"A": "1"}}]
    with pytest.raises(TaskFileError) as caught:
        parse_tasks([json.dumps(line) for line in lines])
    said = [text for _, text in caught.value.problems]
    assert [line for line, _ in caught.value.problems] == [1, 2, 3, 4]
    assert said[0].startswith("a: `verify` is a shell command")
    assert said[1].startswith("b: `verify_timeout` is a number of seconds more than 0")
    assert said[2] == "c: `verify_env`: '1BAD', 'OK': a variable is a name (letters, digits, '_') with a string value"
    assert "did you mean 'verify'?" in said[3]
    (good,) = caught.value.tasks
    assert (good.verify, good.verify_timeout, dict(good.verify_env)) == ("pytest -q", 30.0, {"A": "1"})


def test_a_batch_killed_mid_verification_replays_only_that_cell(tmp_path: Path) -> None:
    """SIGKILL while a verifier sleeps: its tree dies with Harness, its cell has no line, so the re-run plays it
    (and only it) again."""
    pids, once = tmp_path / "pids", tmp_path / "once"
    slow = f'if [ -e {once} ]; then exit 0; fi; touch {once}; sleep 1000 & echo $! >> {pids}; echo $$ >> {pids}; wait'
    task_lines(tmp_path / "tasks.jsonl", [{"id": "quick", "scenario": RIGHT, "verify": CHECK},
                                          {"id": "slow", "scenario": RIGHT, "verify": slow}])
    results = tmp_path / "tasks.results.jsonl"
    first = batch_process(tmp_path, "tasks.jsonl", "--offline", "-j", "2")
    deadline = time.monotonic() + 120
    while not (results.exists() and read_results(results) and pids.exists() and len(pids.read_text().split()) == 2):
        assert first.poll() is None, finish(first)
        assert time.monotonic() < deadline, "the verifier did not start"
        time.sleep(0.02)
    first.kill()
    first.wait(timeout=60)
    assert [r["id"] for r in read_results(results)] == ["quick"]
    deadline = time.monotonic() + 30  # the supervisor kills the tree once its owner is gone (about a second)
    while any(_alive(int(pid)) for pid in pids.read_text().split()):
        assert time.monotonic() < deadline, "a verifier outlived the killed batch"
        time.sleep(0.05)

    code, _, err = finish(batch_process(tmp_path, "tasks.jsonl", "--offline", "-j", "2"))
    assert code == 0, err
    final = read_results(results)
    assert [(r["id"], r["verified"], r["reward"]) for r in final] == [("quick", True, 1.0), ("slow", True, 1.0)]
    assert "1 succeeded" in err and "1 skipped" in err
    assert "verified: 1 of 1 cell(s) passed (and 1 that passed earlier)" in err
    assert len(run_logs(tmp_path / "runs")) == 3  # quick once, slow twice (its first run lost its verdict)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


def test_the_help_documents_the_evaluate_flags() -> None:
    out = subprocess.run([os.sys.executable, "-m", "harness_core", "batch", "--help"], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "COLUMNS": "200"}).stdout
    for flag in ("--provider", "--model", "--attempts", "--verify CMD", "--verify-timeout SECONDS"):
        assert flag in out


def test_a_task_past_its_agent_timeout_fails_and_is_verified_as_left(tmp_path: Path, host: PluginHost) -> None:
    """A task's agent timeout (a Harbor task's [agent] timeout_sec) interrupts its run: a failed cell,
    `agent_timeout`, yet verified on the workspace as the agent left it (as Harbor does); a task within its
    timeout is untouched."""
    (stalled,) = tasks_of([{"id": "stalls", "scenario": "stall", "verify": "test ! -e answer.txt"}])
    (quick,) = tasks_of([{"id": "quick", "scenario": RIGHT, "verify": CHECK}])
    tasks = [dataclasses.replace(stalled, agent_timeout=1.0), dataclasses.replace(quick, agent_timeout=60.0)]
    began = time.monotonic()
    batch = Batch(tasks, offline=True, host=host)
    results = {r.id: r for r in play(batch, deadline=60)}

    assert time.monotonic() - began < 50
    late = results["stalls"]
    assert (late.status, late.error_code, late.verified, late.reward) == ("failed", "agent_timeout", True, 1.0)
    assert late.verification is not None and late.verification.ran and late.verification.verdict
    assert "agent timeout (1 s)" in (late.error or "")
    assert results["quick"].ok and results["quick"].verified
    assert batch.stats.passed == 2 and batch.stats.failed == 1


def test_trajectories_are_written_per_cell(tmp_path: Path, host: PluginHost) -> None:
    """`trajectories=DIR` (`--trajectories`): one ATIF file per cell, named as its patch would be, 0600."""
    tasks = tasks_of([{"id": "right", "scenario": RIGHT}])
    out = tmp_path / "trajectories"
    results = play(Batch(tasks, offline=True, attempts=2, trajectories=out, host=host))

    files = sorted(p.name for p in out.iterdir())
    assert len(results) == 2 and len(files) == 2 and all(name.startswith("right+") for name in files)
    for path in out.iterdir():
        document = json.loads(path.read_text())
        assert document["schema_version"].startswith("ATIF-v")
        assert document["session_id"] in {r.run_id for r in results}
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert any("the answer is 42" in (step.get("message") or "") for step in document["steps"])


def test_verify_env_values_are_hidden_in_the_verify_log_and_the_results(tmp_path: Path, host: PluginHost) -> None:
    """`verify_env` is where a verifier's password or token goes: its values are the cell's secrets, as `env`'s are
    (a public value such as LANG stays readable)."""
    password, token = "hunter2hunter2xyz", "tok-abcdefabcdef123456"
    lines = [{"id": "a", "scenario": RIGHT, "verify": 'echo "pw=$DB_PASSWORD tok=$MY_TOKEN lang=$LANG"',
              "verify_env": {"DB_PASSWORD": password, "MY_TOKEN": token, "LANG": "en_US.UTF-8"}}]
    (result,) = play(Batch(tasks_of(lines), offline=True, results=tmp_path / "r.jsonl", host=host))
    assert result.verification is not None and result.verified
    log = Path(result.verification.output or "").read_text()
    for text in (log, result.verification.output_tail, (tmp_path / "r.jsonl").read_text()):
        assert "pw=" in text and password not in text and token not in text, text
    assert "lang=en_US.UTF-8" in log


def test_a_task_with_its_own_cwd_and_several_cells_is_refused(tmp_path: Path, host: PluginHost) -> None:
    """A `cwd` is one directory: cells sharing it would play in each other's work. Refused before anything runs,
    every such task at once; one cell is fine."""
    shared = tmp_path / "shared"
    shared.mkdir()
    lines = [{"id": "c", "prompt": "x", "cwd": str(shared), "verify": "true"},
             {"id": "d", "prompt": "x", "cwd": str(shared)}, {"id": "free", "prompt": "x"}]
    tasks = parse_tasks([json.dumps(line) for line in lines])
    for options in ({"attempts": 2}, {"providers": [PROVIDER, OTHER]}, {"models": ["m1", "m2"]}):
        batch = Batch(tasks, offline=True, host=host, **options)
        with pytest.raises(TaskFileError) as caught:
            anyio.run(batch.check)
        said = [text for _, text in caught.value.problems]
        assert [line for line, _ in caught.value.problems] == [1], said
        assert said[0].startswith("c (also d on line 2): `cwd` is one directory, and this task has 2 cells "
                                  "(providers x models x attempts): each needs a fresh workspace. Use --worktrees "
                                  "REPO (a worktree per cell), or leave `cwd` out (a temporary workspace per cell)")
    (result,) = play(Batch(tasks[:1], offline=True, host=host))  # one cell: its own directory
    assert result.ok and result.verified
    live = Batch(tasks[2:], attempts=2, host=host)  # not offline, no worktrees: all in this directory at once
    with pytest.raises(TaskFileError) as caught:
        anyio.run(live.check)
    assert "no workspace of its own: they would all play in" in str(caught.value)


def test_rerun_failed_replays_a_verification_without_a_verdict(tmp_path: Path, host: PluginHost) -> None:
    """A run that succeeded but whose verifier gave no verdict (it timed out, say) is played again by
    `--rerun-failed`; one judged earlier is not; one finished before the batch had a verifier is counted as such."""
    results = tmp_path / "r.jsonl"
    timed_out = Verification(ran=True, reason="timed out after 1 s (verify_timeout)")
    judged = Verification(ran=True, exit_code=1, verdict=True, reason="the verifier exited with status 1")
    earlier = [TaskResult(id="slow", run_id="r1", status="success", provider=PROVIDER, verification=timed_out,
                          verified=False, reward=0.0),
               TaskResult(id="judged", run_id="r2", status="success", provider=PROVIDER, verification=judged,
                          verified=False, reward=0.0),
               TaskResult(id="before", run_id="r3", status="success", provider=PROVIDER)]
    results.write_text("".join(r.model_dump_json() + "\n" for r in earlier))
    lines = [{"id": name, "scenario": RIGHT} for name in ("slow", "judged", "before")]

    def again(**options: Any) -> tuple[list[TaskResult], Batch]:
        batch = Batch(tasks_of(lines), offline=True, verify=CHECK, results=results, host=host, **options)
        return play(batch), batch

    played, batch = again()
    assert played == [] and batch.stats.no_verdict_earlier == 1 and batch.stats.unjudged_earlier == 1
    played, batch = again(rerun_failed=True)
    assert [(r.id, r.verified) for r in played] == [("slow", True)]
    assert played[0].verification is not None and played[0].verification.verdict
    assert batch.stats.unjudged_earlier == 1 and batch.stats.no_verdict_earlier == 0


def test_the_summary_says_which_cells_finished_before_the_batch_had_a_verifier(tmp_path: Path) -> None:
    task_lines(tmp_path / "tasks.jsonl", [{"id": "t1", "scenario": RIGHT}])
    code, _, err = finish(batch_process(tmp_path, "tasks.jsonl", "--offline"))
    assert code == 0, err
    code, _, err = finish(batch_process(tmp_path, "tasks.jsonl", "--offline", "--verify", CHECK))
    assert code == 0, err
    assert ("1 cell(s) finished earlier without a verifier: not judged (use a new --results to judge them)"
            in err), err
    out = subprocess.run([os.sys.executable, "-m", "harness_core", "batch", "--help"], capture_output=True,
                         text=True, timeout=60, env={**os.environ, "COLUMNS": "200"}).stdout
    assert "whose verifier gave no verdict" in " ".join(out.split("--rerun-failed", 1)[1].split())


def test_a_verifier_that_must_write_a_reward_and_writes_none_gives_no_verdict(tmp_path: Path) -> None:
    """`needs_reward` (a Harbor task's test.sh): its exit status never decides; without a reward file there is no
    verdict (replayable), with one the file decides."""
    secrets = RunSecrets([])

    def judge(command: str, **options: Any) -> Verdict:
        return anyio.run(functools.partial(run_verifier, command, tmp_path, seconds=30, env={},
                                           output=tmp_path / "v.log", secrets=secrets, **options))

    silent = judge("exit 0", needs_reward=True)
    assert (silent.reward, silent.verified, silent.verification.verdict) == (0.0, False, False)
    assert silent.verification.reason == "no verdict: the verifier wrote neither reward.txt nor reward.json"
    written = judge('echo 1 > "$HARNESS_VERIFIER_DIR/reward.txt"; exit 1', needs_reward=True)
    assert (written.reward, written.verified, written.verification.verdict) == (1.0, True, True)
    plain = judge("exit 0")
    assert (plain.reward, plain.verified, plain.verification.verdict) == (1.0, True, True)


class _LosesItsFirstWorker(Executor):
    """Plays here, but its first play ends as a lost worker (a killed Ray worker, say)."""

    name: ClassVar[str] = "loses-first"

    def __init__(self) -> None:
        super().__init__()
        self.plays = 0

    def bind(self, play_here: Any) -> None:
        self.play_here = play_here

    async def play(self, attempt: TaskAttempt, interrupted: anyio.Event) -> Any:
        self.plays += 1
        if self.plays == 1:
            raise WorkerLostError("the worker went away")
        return await self.play_here(attempt, interrupted)


@pytest.mark.parametrize("agent_timeout", [None, 60.0])
def test_a_lost_worker_is_retried_with_or_without_an_agent_timeout(host: PluginHost,
                                                                   agent_timeout: float | None) -> None:
    """An executor's WorkerLostError is a retryable failed try, whether the try ran under a task's agent timeout
    (its own task group) or not: the retry plays the cell to its end."""
    (task,) = tasks_of([{"id": "lost", "scenario": RIGHT}])
    executor = _LosesItsFirstWorker()
    batch = Batch([dataclasses.replace(task, agent_timeout=agent_timeout)], offline=True, executor=executor,
                  retry=1, retry_backoff=0.01, host=host)
    (result,) = play(batch)
    assert (result.status, result.attempts, executor.plays) == ("success", 2, 2), result
