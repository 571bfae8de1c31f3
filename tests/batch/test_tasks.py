"""Reading tasks (every bad line reported, with its number), scenarios written inline, the retry policy, and
executors found through the plugin host."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest

from harness_core import AgentRunSpec
from harness_core.batch import (
    BatchTask,
    Executor,
    RetryPolicy,
    TaskAttempt,
    TaskFileError,
    engines,
    executor_named,
    executor_names,
    load_tasks,
    parse_tasks,
)
from harness_core.batch.tasks import as_tasks
from harness_core.errors import InvalidSpecError
from harness_core.events import ErrorInfo, HarnessResult, RunStatus
from harness_core.hookspecs import hookimpl
from harness_core.offline import SCENARIOS
from harness_core.plugins import PluginHost
from harness_core.scripted.inline import ScenarioSyntaxError, scenario_from_json, scenario_to_json
from harness_core.scripted.scenarios import Fail, Say, WriteFile


def lines(*items: Any) -> list[str]:
    return [item if isinstance(item, str) else json.dumps(item) for item in items]


def test_a_task_is_a_spec_plus_its_own_fields(tmp_path: Path) -> None:
    (task,) = parse_tasks(lines({"id": "t1", "prompt": "fix it", "provider": "my-agent", "ref": "main",
                                 "model": "m", "max_cost_usd": 0.5, "cwd": str(tmp_path)}))
    assert (task.id, task.provider, task.ref, task.line) == ("t1", "my-agent", "main", 1)
    assert task.spec == AgentRunSpec(prompt="fix it", model="m", max_cost_usd=0.5, cwd=tmp_path)


def test_every_bad_line_is_reported_at_once() -> None:
    with pytest.raises(TaskFileError) as caught:
        parse_tasks(lines({"id": "a", "prompt": "x"}, "", "[1, 2]", "{oops", {"prompt": "no id"},
                          {"id": "a", "prompt": "again"}, {"id": "b/c", "prompt": "x"}, {"id": "d"},
                          {"id": "e", "prompt": "x", "sandbox": "wide-open"}, {"id": "f", "prompt": "x", "x": 1},
                          {"id": "g", "prompt": "x", "scenario": "say"}))
    problems = dict(caught.value.problems)
    assert sorted(problems) == [3, 4, 5, 6, 7, 8, 9, 10, 11]  # line 2 is blank: skipped
    assert "not JSON" in problems[4] and "`id` is required" in problems[5]
    assert "also the id of line 1" in problems[6] and "not a file name" in problems[7]
    assert "prompt" in problems[8] and "sandbox" in problems[9] and "not a field of a task" in problems[10]
    assert "pass --offline" in problems[11]
    assert "9 problems, nothing was run" in caught.value.message


def test_every_problem_of_a_line_is_reported_with_did_you_mean_and_the_good_tasks_kept() -> None:
    known = {"alpha-agent", "beta-agent"}
    with pytest.raises(TaskFileError) as caught:
        parse_tasks(lines({"id": "a", "promt": "x", "sandbox": "wide", "provider": "alpha-agnet"},
                          {"id": "a", "prompt": "again"}, {"id": "b", "prompt": "fine", "provider": "alpha-agent"},
                          {"id": "c", "scenario": "tool"}),
                    offline=True, check_provider=lambda name: None if name in known else f"no provider {name!r}")
    problems = caught.value.problems
    assert [n for n, _ in problems] == [1, 1, 1, 2, 4]  # each problem of line 1, not only its first
    said = " | ".join(text for _, text in problems)
    assert "a: no provider 'alpha-agnet'" in said and "a: promt: not a field of a task; did you mean 'prompt'?" in said
    assert "a: sandbox:" in said and "a: id 'a' is also the id of line 1" in said  # line 1 was bad, still seen
    assert "c: scenario: no offline scenario named 'tool'; did you mean 'tools'?" in said
    assert [t.id for t in caught.value.tasks] == ["b"] and caught.value.tasks[0].line == 3


def test_offline_tasks_take_scenarios_and_need_no_prompt() -> None:
    (named, inline, listed) = parse_tasks(lines(
        {"id": "n", "scenario": "tools"},
        {"id": "i", "scenario": {"steps": [{"write": "a.txt", "content": "A"}, {"say": "done"}]}},
        {"id": "l", "scenario": ["fail_429", "say"]}), offline=True)
    assert named.scenarios == (SCENARIOS["tools"],) and named.spec.prompt
    assert inline.scenarios[0].steps == (WriteFile("a.txt", "A"), Say("done"))
    default = SCENARIOS["think"]
    assert [listed.scenario_for(n, default).name for n in (1, 2, 3)] == ["fail_429", "say", "say"]
    assert BatchTask("x", AgentRunSpec(prompt="p")).scenario_for(1, default) is default


def test_an_empty_file_and_an_unreadable_one_say_so(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(TaskFileError, match="no task in it"):
        load_tasks(tmp_path / "empty.jsonl")
    with pytest.raises(InvalidSpecError, match="cannot read the tasks file"):
        load_tasks(tmp_path / "missing.jsonl")


def test_tasks_from_python() -> None:
    spec = AgentRunSpec(prompt="p")
    tasks = as_tasks([("a", spec), ("b", spec, "my-agent"), BatchTask("c", spec)])
    assert [(t.id, t.provider) for t in tasks] == [("a", None), ("b", "my-agent"), ("c", None)]
    with pytest.raises(TaskFileError) as caught:
        as_tasks([("a", spec), ("a", spec), ("b", "not a spec"), ("bad id!", spec)])
    assert len(caught.value.problems) == 3


@pytest.mark.parametrize(("value", "said"), [
    ("nope", "no offline scenario named 'nope'"),
    ({"steps": []}, "non-empty list `steps`"),
    ({"steps": [{"say": "a", "run": "b"}]}, "exactly one kind"),
    ({"steps": [{"write": "a.txt"}]}, "content"),
    ({"steps": [{"write": "a.txt", "content": "x"}]}, "must end the model's turn"),
    ({"steps": [{"say": 3}]}, "`text` must be text"),
    ({"steps": [{"fail": "429"}]}, "must be a whole number"),
    ({"steps": [{"say": "x", "colour": 1}]}, "unknown field"),
    ({"steps": [{"say": "x"}], "extra": 1}, "unknown scenario field"),
    ({"steps": [{"say": "x"}], "files": {"a": 1}}, "`files` maps"),
    ({"steps": [{"say": "x"}], "files": {"../../escaped.txt": "x"}}, "leaves the workspace"),
    ({"steps": [{"write": "/etc/x", "content": "x"}, {"say": "x"}]}, "leaves the workspace"),
])
def test_bad_inline_scenarios_say_what_to_write(value: Any, said: str) -> None:
    with pytest.raises(ScenarioSyntaxError, match=re.escape(said)):
        scenario_from_json(value)


def test_every_named_scenario_round_trips_through_json() -> None:
    for scenario in SCENARIOS.values():
        again = scenario_from_json(json.loads(json.dumps(scenario_to_json(scenario))), name=scenario.name)
        assert again.steps == scenario.steps and again.files == scenario.files
    assert scenario_from_json({"steps": [{"fail": 429}]}).expected.error_code == "rate_limited"
    assert scenario_from_json({"steps": [{"fail": 503}]}).steps == (Fail(503),)


def failed(code: str, retryable: bool = False) -> HarnessResult:
    return HarnessResult(status=RunStatus.FAILED, error=ErrorInfo(code=code, message="m", retryable=retryable))


def test_only_transient_failures_are_retried() -> None:
    policy = RetryPolicy(retries=2)
    assert policy.should_retry(failed("rate_limited", True), 1) and policy.should_retry(failed("model_error", True), 2)
    assert not policy.should_retry(failed("rate_limited", True), 3)  # the retries are spent
    for code in ("process_exited", "provider_crashed", "worker_lost"):
        assert policy.should_retry(failed(code), 1)
    for code in ("auth_failed", "invalid_spec", "budget_exceeded", "idle_timeout", "model_error"):
        assert not policy.should_retry(failed(code), 1)
    assert not policy.should_retry(HarnessResult(status=RunStatus.INTERRUPTED), 1)
    assert not RetryPolicy().should_retry(failed("rate_limited", True), 1)


def test_backoff_doubles_with_full_jitter_and_a_cap() -> None:
    policy, rng = RetryPolicy(retries=10, backoff=2.0), random.Random(7)
    for attempt, bound in ((1, 2.0), (2, 4.0), (3, 8.0), (8, 60.0)):
        delays = [policy.delay(attempt, rng) for _ in range(200)]
        assert all(0 <= d <= bound for d in delays) and max(delays) > bound * 0.8
    with pytest.raises(ValueError):
        RetryPolicy(retries=-1)


class _Engine(Executor):
    name: ClassVar[str] = "test-engine"

    async def play(self, attempt: TaskAttempt, interrupted: anyio.Event) -> HarnessResult:
        return HarnessResult(status=RunStatus.SUCCESS, run_id=attempt.run_id)


class _Plugin:
    def __init__(self, cls: type) -> None:
        self.cls = cls

    @hookimpl
    def harness_register_executors(self, register: Any) -> None:
        register(self.cls)


def test_executors_are_found_through_the_plugin_host() -> None:
    host = PluginHost.create(entry_points=False, plugins=[("engine", _Plugin(_Engine))])
    assert executor_names(host) == ["local", "test-engine"]
    assert isinstance(executor_named("test-engine", host=host), _Engine)
    assert executor_named("local", host=host).describe() == "local (this process)"
    with pytest.raises(InvalidSpecError, match=r"no executor named 'ray'.*pip install -e 'executors/ray\[ray\]'"):
        executor_named("ray", host=host)
    with pytest.raises(InvalidSpecError, match="invalid options for executor 'local'"):
        executor_named("local", {"speed": "max"}, host=host)


def test_a_missing_executor_says_how_to_install_it_or_why_its_plugin_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hint for a missing engine comes from the table of optional engines, or from its plugin's failure."""
    monkeypatch.setitem(engines.OPTIONAL_ENGINES, "warp", "`pip install harness-warp` adds `warp`")
    host = PluginHost.create(entry_points=False, plugins=[("ray", _Plugin(object))])
    with pytest.raises(InvalidSpecError, match=r"^no executor named 'warp'; `pip install harness-warp` adds `warp`; "
                                               r"installed: local$"):
        executor_named("warp", host=host)
    with pytest.raises(InvalidSpecError, match=r"^no executor named 'ray' \(plugin 'ray' is installed but failed to "
                                               r"load: TypeError: .* is not a harness_core.batch.Executor subclass\)"):
        executor_named("ray", host=host)
    with pytest.raises(InvalidSpecError, match=r"^no executor named 'warp9'; installed: local$"):
        executor_named("warp9", host=host)


def test_a_bad_executor_plugin_is_reported_and_local_cannot_be_taken() -> None:
    class Local(_Engine):
        name: ClassVar[str] = "local"

    host = PluginHost.create(entry_points=False, plugins=[("bad", _Plugin(object)), ("taken", _Plugin(Local))])
    assert [b.plugin for b in host.broken] == ["bad", "taken"]
    assert "not a harness_core.batch.Executor subclass" in host.broken[0].error
    assert "already taken" in host.broken[1].error and executor_names(host) == ["local"]
