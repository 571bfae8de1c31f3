"""`harness run` flags for sessions and their limits: `--continue` (the last session in this directory, with its
provider), `--output-schema FILE`, `--effort`, `--max-turns`, `--max-cost-usd`, `--max-output-tokens` (into the
spec, through `--background` too); cost on the final line; `harness runs`/`show` grouping a session's turns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

import harness_core.testing.scripted as scripted
from harness_core.capabilities import Capability, ProviderInfo
from harness_core.events import Done, RunStarted
from harness_core.hookspecs import hookimpl
from harness_core.plugins import PluginHost, get_host, reset_host
from harness_core.provider import OfflineSetup
from harness_core.scripted.backends import MessagesBackend
from harness_core.scripted.scenarios import SCENARIOS, Expected, Say, Scenario
from harness_core.store import list_runs, log_path, read_events, summarize
from tests.cli.test_cli import invoke, make_host

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class OtherProvider(scripted.ScriptedProvider):
    info: ClassVar[ProviderInfo] = ProviderInfo(name="other", version="1.0", capabilities=frozenset(Capability))


class NoCostProvider(scripted.ScriptedProvider):
    info: ClassVar[ProviderInfo] = ProviderInfo(name="no-cost", version="1.0",
                                                capabilities=frozenset(Capability) - {Capability.COST})


class OfflineProvider(scripted.ScriptedProvider):
    """The scripted provider with an offline setup (a scripted backend it does not need: it plays in-process)."""

    info: ClassVar[ProviderInfo] = ProviderInfo(name="offline-able", version="1.0", capabilities=frozenset(Capability))

    def offline_setup(self, scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
        return OfflineSetup(backend=MessagesBackend(scenario, cwd=workspace), provider_options={"scenario": "say"})


class _Plugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(OtherProvider)
        register(NoCostProvider)
        register(OfflineProvider)


@pytest.fixture(autouse=True)
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginHost]:
    monkeypatch.chdir(tmp_path)
    found = make_host(("flags-test", _Plugin()))
    reset_host(found)
    monkeypatch.setenv("HARNESS_PROVIDER", "scripted")
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setitem(SCENARIOS, "json_answer", Scenario(
        "json_answer", (Say('{"answer": 42, "why": "it is"}'),), Expected(final_text='{"answer": 42, "why": "it is"}')))
    yield found
    reset_host(None)


def run_started(runs_dir: Path) -> RunStarted:
    first = next(iter(read_events(list_runs(runs_dir)[0].path)))
    assert isinstance(first, RunStarted)
    return first


def done(runs_dir: Path) -> Done:
    last = list(read_events(list_runs(runs_dir)[0].path))[-1]
    assert isinstance(last, Done)
    return last


# --- --continue ------------------------------------------------------------------------------------------

def test_continue_resumes_the_last_session_of_this_directory_with_its_provider(runs_dir: Path,
                                                                               tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert invoke("run", "first", "-p", "other").exit_code == 0
    first_session = done(runs_dir).result.session_id
    assert invoke("run", "elsewhere", "--cwd", str(elsewhere)).exit_code == 0  # newer, but another directory
    out = invoke("run", "-c", "again")
    assert out.exit_code == 0, out.output
    started = run_started(runs_dir)
    assert started.provider == "other" and started.spec["resume_session"] == first_session
    assert f"continuing session {first_session} (other, run " in out.stderr
    again = invoke("run", "--continue", "--cwd", str(elsewhere), "more")
    assert again.exit_code == 0 and run_started(runs_dir).provider == "scripted"


def test_continue_with_no_session_here_says_how_to_start_one(runs_dir: Path) -> None:
    out = invoke("run", "-c", "again")
    assert out.exit_code == 2
    assert "no run in" in out.stderr and "start one with `harness run PROMPT`" in out.stderr
    assert not list_runs(runs_dir)


def test_continue_with_a_provider_takes_that_providers_last_session_here(runs_dir: Path) -> None:
    assert invoke("run", "first").exit_code == 0
    none = invoke("run", "-c", "-p", "other", "again")
    assert none.exit_code == 2
    assert "no 'other' run in" in none.stderr and "start one with `harness run -p other PROMPT`" in none.stderr
    assert invoke("run", "-p", "other", "second").exit_code == 0
    other_session = done(runs_dir).result.session_id
    assert invoke("run", "third").exit_code == 0  # the newest session here is a scripted one
    out = invoke("run", "-c", "-p", "other", "again")
    assert out.exit_code == 0, out.output
    started = run_started(runs_dir)
    assert started.provider == "other" and started.spec["resume_session"] == other_session
    chat = invoke("chat", "-c", "-p", "other", input="more\n")
    assert chat.exit_code == 0 and f"continuing session {other_session} (other, run " in chat.stderr
    assert run_started(runs_dir).spec["resume_session"] == other_session
    both = invoke("run", "-c", "--resume", "abc", "again")
    assert both.exit_code == 2 and "--continue and --resume" in both.stderr
    assert len(list_runs(runs_dir)) == 5


def test_continue_skips_the_runs_played_offline(runs_dir: Path, tmp_path: Path) -> None:
    """An offline run's agent session went with its temporary state: `--continue` takes the online one before it."""
    here = tmp_path / "d1"
    here.mkdir()
    assert invoke("run", "-p", "offline-able", "--cwd", str(here), "online").exit_code == 0
    online_session = done(runs_dir).result.session_id
    offline = invoke("run", "--offline", "-p", "offline-able", "--cwd", str(here), "--force", "offline")
    assert offline.exit_code == 0, offline.output
    assert "HARNESS_OFFLINE" in run_started(runs_dir).spec["env"]  # how its log marks it
    assert done(runs_dir).result.session_id != online_session
    out = invoke("run", "--cwd", str(here), "-c", "again")
    assert out.exit_code == 0, out.output
    assert run_started(runs_dir).spec["resume_session"] == online_session


# --- --output-schema -------------------------------------------------------------------------------------

_SCHEMA = {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}


def test_output_schema_prints_the_parsed_answer_and_puts_it_in_done(runs_dir: Path, tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(_SCHEMA))
    out = invoke("run", "x", "-o", "scenario=json_answer", "--output-schema", str(schema))
    assert out.exit_code == 0, out.output
    answer = ["{", '  "answer": 42,', '  "why": "it is"', "}"]
    assert out.stdout.splitlines() == answer  # stdout is no terminal: the answer alone
    shown = out.stderr.splitlines()  # the live view
    assert shown == [*answer, shown[-1]] and shown[-1].startswith("✓ success")
    assert run_started(runs_dir).spec["output_schema"] == _SCHEMA
    as_json = invoke("run", "x", "-o", "scenario=json_answer", "--output-schema", str(schema), "--json")
    final = json.loads(as_json.stdout.splitlines()[-1])
    assert final["type"] == "done" and final["result"]["structured_output"] == {"answer": 42, "why": "it is"}


def test_an_answer_that_does_not_match_fails_the_run(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(_SCHEMA))
    answer = tmp_path / "answer.txt"
    answer.write_text("an earlier answer\n")
    out = invoke("run", "x", "--output-schema", str(schema), "--output-last-message", str(answer))  # `say`: prose
    assert out.exit_code == 1
    assert "[error] invalid_structured_output: " in out.stderr
    assert out.stderr.count("Hello from the scripted model.") == 1  # the view shows what it wrote, once
    assert out.stdout == ""  # a failed run has no answer: nothing on stdout, the file as it was
    assert answer.read_text() == "an earlier answer\n"


def test_a_chat_with_an_output_schema_prints_each_answer_once(runs_dir: Path, tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(_SCHEMA))
    out = invoke("chat", "-o", "scenario=json_answer", "--output-schema", str(schema), input="one\ntwo\n")
    assert out.exit_code == 0, out.output
    assert out.stdout.count('  "answer": 42,\n') == 2 and '{"answer"' not in out.stdout
    assert out.stdout.count("✓ success") == 2


@pytest.mark.parametrize(("content", "says"), [
    ("{not json", "is not JSON"),
    ("[1, 2]", "holds a JSON list, not a JSON Schema object"),
    ('{"type": 12}', "is not a valid JSON Schema: 12 is not valid under any of the given schemas"),
])
def test_a_bad_schema_file_is_a_usage_error_naming_the_file(tmp_path: Path, runs_dir: Path, content: str,
                                                           says: str) -> None:
    schema = tmp_path / "bad.json"
    schema.write_text(content)
    out = invoke("run", "x", "--output-schema", str(schema))
    assert out.exit_code == 2
    assert f"'{schema}' {says}" in out.stderr
    missing = invoke("run", "x", "--output-schema", str(tmp_path / "nope.json"))
    assert missing.exit_code == 2 and "cannot read" in missing.stderr and "nope.json" in missing.stderr
    assert not list_runs(runs_dir)


# --- effort and budgets ----------------------------------------------------------------------------------

def test_effort_and_budget_flags_reach_the_spec(runs_dir: Path) -> None:
    out = invoke("run", "x", "--effort", "high", "--max-turns", "3", "--max-cost-usd", "0.5",
                 "--max-output-tokens", "1000")
    assert out.exit_code == 0, out.output
    spec = run_started(runs_dir).spec
    assert (spec["effort"], spec["max_turns"], spec["max_cost_usd"], spec["max_output_tokens"]) == ("high", 3, 0.5,
                                                                                                   1000)


@pytest.mark.parametrize("flag", [["--max-turns", "0"], ["--max-cost-usd", "0"], ["--max-output-tokens", "-1"]])
def test_budgets_must_be_positive(flag: list[str]) -> None:
    out = invoke("run", "x", *flag)
    assert out.exit_code == 2 and flag[0] in out.stderr


def test_a_run_over_its_cost_budget_fails_showing_cost_and_limit(runs_dir: Path) -> None:
    out = invoke("run", "x", "-o", "cost_usd=0.01", "--max-cost-usd", "0.005")
    assert out.exit_code == 1
    assert "[error] budget_exceeded: the run went over its budget (max_cost_usd = 0.005 USD" in out.stderr
    final = out.stderr.splitlines()[-1]
    assert final.startswith("✗ failed in ") and "$0.0100" in final and "budget_exceeded (max_cost_usd 0.005)" in final


def test_a_capability_the_provider_lacks_is_refused_by_the_runner(runs_dir: Path) -> None:
    out = invoke("run", "x", "-p", "no-cost", "--max-cost-usd", "1")
    assert out.exit_code == 2
    assert "provider 'no-cost' does not support 'cost'" in out.stderr and "scripted" in out.stderr


@pytest.mark.skipif("scripted" not in get_host().providers,
                    reason="the scripted provider is not installed as a plugin (tox installs it)")
def test_background_runs_keep_the_new_spec_fields(runs_dir: Path, tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(_SCHEMA))
    env = {**os.environ, "HARNESS_PROVIDER": "scripted", "HARNESS_RUNS_DIR": str(runs_dir), "NO_COLOR": "1"}
    started = subprocess.run([sys.executable, "-m", "harness_core", "run", "--background", "x", "--effort", "low",
                              "--max-turns", "2", "--max-output-tokens", "500", "--max-cost-usd", "0.25",
                              "--output-schema", str(schema)], env=env, capture_output=True, text=True, timeout=60)
    assert started.returncode == 0, started.stderr
    path = log_path(runs_dir, started.stdout.strip())
    deadline = time.monotonic() + 60
    while summarize(path).done is None:
        assert time.monotonic() < deadline, summarize(path).status
        time.sleep(0.05)
    spec = summarize(path).started.spec  # type: ignore[union-attr]
    assert (spec["effort"], spec["max_turns"], spec["max_output_tokens"], spec["max_cost_usd"]) == ("low", 2, 500,
                                                                                                   0.25)
    assert spec["output_schema"] == _SCHEMA


# --- runs and show group a session's turns ---------------------------------------------------------------

def test_runs_marks_turns_filters_by_session_and_show_names_it(runs_dir: Path) -> None:
    assert invoke("run", "lone").exit_code == 0
    assert invoke("chat", input="one\ntwo\n").exit_code == 0
    listed = json.loads(invoke("runs", "--json").stdout)
    assert [(r["prompt"], r["turn"]) for r in listed] == [("two", 1), ("one", 0), ("lone", None)]
    session = listed[0]["session"]
    assert session and listed[1]["session"] == session and listed[2]["session"] is None
    table = invoke("runs").stdout
    assert "[turn 2] two" in table and "[turn 1] one" in table and "] lone" not in table
    only = json.loads(invoke("runs", "--session", session[:17], "--json").stdout)
    assert [r["prompt"] for r in only] == ["two", "one"]
    by_agent = json.loads(invoke("runs", "--session", listed[0]["session_id"], "--json").stdout)
    assert [r["prompt"] for r in by_agent] == ["two", "one"]
    agent_prefix = json.loads(invoke("runs", "--session", listed[0]["session_id"][:-3], "--json").stdout)
    assert [r["prompt"] for r in agent_prefix] == ["two", "one"]
    not_a_run = invoke("show", session)
    assert not_a_run.exit_code == 2
    assert f"{session} is a session, not a run: `harness runs --session {session}` lists its turns" in not_a_run.stderr
    none = invoke("runs", "--session", "nope")
    assert "no runs in" in none.stdout and "match the filters" in none.stdout
    shown = invoke("show", listed[0]["run_id"]).stdout
    assert f"turn      2 of session {session} (one live agent process)" in shown
    assert "turn " not in invoke("show", listed[2]["run_id"]).stdout.split("prompt")[0]


def test_offline_spec_marks_what_it_plays_as_the_cli_reads_it() -> None:
    from harness_core.cli.flags.continuation import OFFLINE_MARK
    from harness_core.offline._setup import OFFLINE_ENV

    assert OFFLINE_MARK == OFFLINE_ENV
