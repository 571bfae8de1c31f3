"""Codex retrying, resuming and refusing, as both Codex providers name it: reconnect notices and their bound
(harness_codex_common.retries), a 500 and a missing session (errors), and the tool calls Codex refused
without an item, read from recorded real rollouts (rollout: `tests/rollouts/*.jsonl`, codex 0.169.0 in a
read-only sandbox through each provider, Codex's own prompt lines dropped and paths rewritten to /tmp/e2e)."""

from __future__ import annotations

import json
import tempfile
import threading
import time
from pathlib import Path

import pytest

from harness_codex_common import (
    CodexCliOptions,
    Reconnects,
    message_status,
    model_api_url,
    parse_reconnect,
    read_turn,
    refused_events,
    rollout_path,
    session_not_found,
)
from harness_codex_common.rollout import read_finished_turn, turn_finished

ROLLOUTS = Path(__file__).parent / "rollouts"
CONNECTION = "Connection failed: error sending request"


def test_reconnect_texts_are_parsed() -> None:
    bounded = parse_reconnect(f"Reconnecting... 2/5 ({CONNECTION})")
    assert bounded is not None and (bounded.attempt, bounded.limit, bounded.reason) == (2, 5, CONNECTION)
    waiting = parse_reconnect("Reconnecting... waiting for network", CONNECTION)  # app-server: cause apart
    assert waiting is not None and (waiting.attempt, waiting.limit, waiting.reason) == (None, None, CONNECTION)
    assert parse_reconnect(CONNECTION) is None
    assert parse_reconnect("unexpected status 500: Reconnecting... 1/5") is None


def test_reconnects_are_notices_until_the_bound_then_the_unreachable_error() -> None:
    retries = Reconnects(limit=1, base_url="http://127.0.0.1:9/v1")
    waiting = parse_reconnect(f"Reconnecting... waiting for network ({CONNECTION})")
    assert waiting is not None
    first = retries.notice("Reconnecting... waiting for network", waiting)
    assert first.type == "notice" and first.level == "warning" and first.code == "reconnecting"
    assert first.details == {"attempt": 1, "max": 1, "reason": CONNECTION}
    assert not retries.exhausted
    retries.notice("Reconnecting... waiting for network", waiting)
    assert retries.exhausted
    error = retries.give_up()
    assert error.code == "model_error" and error.retryable
    assert error.message.startswith(
        f"the agent could not reach its model API at http://127.0.0.1:9/v1 after 2 attempts ({CONNECTION}); "
        "check the network and the base URL"
    )
    assert "--offline" in error.message and error.details == {"base_url": "http://127.0.0.1:9/v1", "attempts": 2}


def test_codex_giving_up_itself_counts_every_attempt_and_a_status_keeps_its_class() -> None:
    retries = Reconnects(base_url=None)
    for n in range(1, 6):
        reconnect = parse_reconnect(f"Reconnecting... {n}/5 ({CONNECTION})")
        assert reconnect is not None
        retries.notice("", reconnect)
    final = retries.final(None, CONNECTION)
    assert final is not None and "after 6 attempts" in final.message and "base_url" in final.message
    assert retries.final(503, "unexpected status 503 Service Unavailable") is None  # classified as usual
    server = Reconnects(limit=0)
    reconnect = parse_reconnect("Reconnecting... 1/9 (We're currently experiencing high demand)")
    assert reconnect is not None
    assert server.notice("", reconnect, status=500).details["status"] == 500
    assert server.give_up().message.startswith("the model API failed (HTTP 500: ")


def test_the_base_url_comes_from_the_config_overrides_config_toml_or_the_environment(tmp_path: Path) -> None:
    inline = {
        "model_provider": '"mock"',
        "model_providers.mock": '{name="mock", base_url="http://127.0.0.1:1/v1", wire_api="responses"}',
    }
    assert model_api_url(inline, {}, str(tmp_path)) == "http://127.0.0.1:1/v1"
    nested = CodexCliOptions.model_validate(
        {"config": ["model_provider=local", "model_providers.local.base_url=http://127.0.0.1:2/v1"]}
    )
    assert model_api_url(nested.config, {}, str(tmp_path)) == "http://127.0.0.1:2/v1"
    (tmp_path / "config.toml").write_text(
        'model_provider = "lab"\n[model_providers.lab]\nbase_url = "http://127.0.0.1:3/v1"\n'
    )
    assert model_api_url({}, {}, str(tmp_path)) == "http://127.0.0.1:3/v1"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert model_api_url({}, {"OPENAI_BASE_URL": "http://127.0.0.1:4/v1"}, str(empty)) == "http://127.0.0.1:4/v1"
    assert model_api_url({"model_provider": "other"}, {}, str(empty)) is None


@pytest.mark.parametrize(
    ("message", "status"),
    [
        ("We’re currently experiencing high demand, which may cause temporary errors.", 500),  # real 0.169.0
        ("Reconnecting... 1/5 (We’re currently experiencing high demand, which may cause temporary errors.)", 500),
        ("unexpected status 502 Bad Gateway: upstream broke, url: http://127.0.0.1:1/v1/responses", 502),
    ],
)
def test_codex_500_text_carries_the_status(message: str, status: int) -> None:
    assert message_status(message) == status


@pytest.mark.parametrize(
    "said",
    [
        "codex app-server refused thread/resume: no rollout found for thread id 0199a213-81c0-7800-8aa1-bbab2a035a53",
        "Error: thread/resume: thread/resume failed: no rollout found for thread id 0199a213 (code -32600)",
        "invalid session id: invalid character: expected an optional prefix of `urn:uuid:`",
    ],
)
def test_a_resume_codex_has_no_thread_for_is_session_not_found(said: str) -> None:
    error = session_not_found("0199a213", said)
    assert error is not None and error.code == "session_not_found" and error.session_id == "0199a213"
    assert "harness runs" in error.message and "CODEX_HOME" in error.message
    assert session_not_found("x", "codex app-server refused thread/resume: invalid params") is None


@pytest.mark.parametrize("name", ["read-only-appserver", "read-only-exec"])
def test_refused_patches_of_a_read_only_run_become_declined_tools(name: str) -> None:
    records = read_turn(ROLLOUTS / f"{name}.jsonl")
    events = refused_events(records, "/tmp/e2e/ws")
    pairs = [(e.type, e.tool_id, e.display.kind.value, e.display.path, e.display.status.value) for e in events]
    assert pairs == [
        ("tool_use", "call_2", "edit", "/tmp/e2e/ws/notes.txt", "started"),
        ("tool_result", "call_2", "edit", "/tmp/e2e/ws/notes.txt", "declined"),
        ("tool_use", "call_3", "write", "/tmp/e2e/ws/new.txt", "started"),
        ("tool_result", "call_3", "write", "/tmp/e2e/ws/new.txt", "declined"),
    ]
    result = events[1]
    assert result.type == "tool_result" and result.is_error
    assert result.display.summary == (
        "patch rejected: writing is blocked by read-only sandbox; rejected by user approval settings"
    )
    # The commands of that turn have items of their own (and an id seen on the wire is never shown twice).
    assert refused_events(records, "/tmp/e2e/ws", seen={"call_2", "call_3"}) == []


def test_only_the_latest_turn_counts_and_a_missing_rollout_gives_nothing(tmp_path: Path) -> None:
    lines = (ROLLOUTS / "read-only-exec.jsonl").read_text()
    later = {"type": "event_msg", "payload": {"type": "task_started", "turn_id": "t2"}}
    path = tmp_path / "sessions" / "2026" / "rollout-2026-01-01T00-00-00-abc.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(lines + json.dumps(later) + "\n")
    assert rollout_path(tmp_path, "abc") == path and rollout_path(tmp_path, "a/b") is None
    assert refused_events(read_turn(path)) == []
    assert read_turn(None) == [] and read_turn(tmp_path / "nope.jsonl") == []


def test_item_less_calls_that_are_not_patches_are_not_failures() -> None:
    """`write_stdin` (polling a command that outlived its yield) and `update_plan` never have items of their
    own; only an `apply_patch` without one was refused."""
    def call(call_id: str, name: str, arguments: str) -> dict[str, object]:
        return {"type": "response_item", "payload": {"type": "function_call", "call_id": call_id, "name": name,
                                                     "arguments": arguments}}

    def answer(call_id: str, output: str) -> dict[str, object]:
        return {"type": "response_item", "payload": {"type": "function_call_output", "call_id": call_id,
                                                     "output": output}}

    records = [
        {"type": "event_msg", "payload": {"type": "task_started"}},
        call("c1", "write_stdin", '{"session_id": 3, "chars": ""}'), answer("c1", "Process exited with code 0"),
        call("c2", "update_plan", '{"plan": []}'), answer("c2", "Plan updated"),
        {"type": "event_msg", "payload": {"type": "task_complete"}},
    ]
    assert refused_events(records, "/ws") == []
    assert turn_finished(records) and not turn_finished(records[:-1])


def test_a_rollout_of_today_is_found_without_walking_the_whole_home(tmp_path: Path) -> None:
    day = time.strftime("%Y/%m/%d", time.localtime())
    path = tmp_path / "sessions" / day / "rollout-2026-12-01T00-00-00-t1.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("")
    old = tmp_path / "sessions" / "2020" / "01" / "01" / "rollout-2020-01-01T00-00-00-t0.jsonl"
    old.parent.mkdir(parents=True)
    old.write_text("")
    assert rollout_path(tmp_path, "t1") == path
    assert rollout_path(tmp_path, "t0") == old  # an older thread: the whole tree, as before


def test_a_turn_not_yet_written_is_read_again_until_it_is(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_text(json.dumps({"type": "event_msg", "payload": {"type": "task_started"}}) + "\n")
    assert not turn_finished(read_finished_turn(path, wait=0.2))  # never completed: gives up after the wait
    with path.open("a") as fh:
        fh.write(json.dumps({"type": "event_msg", "payload": {"type": "task_complete"}}) + "\n")
    assert turn_finished(read_finished_turn(path, wait=0.2))


def test_a_task_complete_written_during_the_wait_ends_it() -> None:
    """Codex writes its rollout asynchronously: the turn's end may land after `turn/completed`. The read sees it
    when it lands, not at the end of the wait."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rollout.jsonl"
        path.write_text(json.dumps({"type": "event_msg", "payload": {"type": "task_started"}}) + "\n")

        def land() -> None:
            with path.open("a") as fh:
                fh.write(json.dumps({"type": "event_msg", "payload": {"type": "task_complete"}}) + "\n")

        timer = threading.Timer(0.1, land)
        started = time.monotonic()
        timer.start()
        try:
            records = read_finished_turn(path, wait=30.0)
        finally:
            timer.join()
        assert turn_finished(records)
        assert time.monotonic() - started < 10  # read again while waiting, not once at the 30 s give-up
        assert records[-1]["payload"]["type"] == "task_complete"


def test_an_aborted_turn_is_finished() -> None:
    """An interrupted turn ends in `turn_aborted` (codex writes no `task_complete` for it)."""
    records = [{"type": "event_msg", "payload": {"type": "task_started"}},
               {"type": "event_msg", "payload": {"type": "turn_aborted", "reason": "interrupted"}}]
    assert turn_finished(records) and not turn_finished(records[:1])
