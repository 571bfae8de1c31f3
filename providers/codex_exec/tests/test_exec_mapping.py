"""Golden tests: recorded real `codex exec --json` transcripts → the events the mapping gives.

Regenerate the golden files (`transcripts/<name>.events.json`) after an intended mapping change with
HARNESS_UPDATE_GOLDEN=1 and review the diff. A missing golden file is written and the test fails.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from exec_helpers import TRANSCRIPTS, load_cases

from harness_codex_exec.mapping import ExecMapping, classify_error, usage_since
from harness_core import ErrorEvent, RunStatus, TextDelta, ToolResult, ToolSummary, ToolUse, Usage

GOLDEN = sorted(p.name for p in TRANSCRIPTS.glob("*.jsonl") if not p.name.startswith("shared"))


def _map(lines: list[dict[str, Any]], **kwargs: Any) -> tuple[ExecMapping, list[Any]]:
    mapping = ExecMapping(cwd="/tmp/e2e/ws", **kwargs)
    return mapping, mapping.feed_all(lines)


def _dump(events: list[Any]) -> list[dict[str, Any]]:
    return [e.model_dump(mode="json", exclude={"run_id", "seq", "ts"}) for e in events]


def check_golden(golden: Path, got: Any) -> None:
    """Compare with the golden file; HARNESS_UPDATE_GOLDEN=1 rewrites it. A missing one is written, then fails."""
    update = bool(os.environ.get("HARNESS_UPDATE_GOLDEN"))
    if update or not golden.exists():
        golden.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
        if not update:
            pytest.fail(f"wrote missing golden file {golden}; review it and run again")
    assert got == json.loads(golden.read_text()), f"{golden}: rerun with HARNESS_UPDATE_GOLDEN=1 if intended"


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_events(name: str) -> None:
    ((_header, lines),) = load_cases(name)
    _, events = _map(lines, previous_total=Usage())
    check_golden(TRANSCRIPTS / name.replace(".jsonl", ".events.json"), _dump(events))


def test_missing_golden_is_written_and_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_UPDATE_GOLDEN", raising=False)
    golden = tmp_path / "new.events.json"
    with pytest.raises(pytest.fail.Exception, match="wrote missing golden"):
        check_golden(golden, [])
    assert json.loads(golden.read_text()) == []
    check_golden(golden, [])


def _tools(events: list[Any]) -> list[tuple[str, str, str | None, str | None]]:
    return [
        (e.display.kind.value, e.display.title, e.display.path, e.display.command)
        for e in events
        if isinstance(e, ToolUse)
    ]


def test_tools_get_the_app_server_labels() -> None:
    ((_, lines),) = load_cases("tools.jsonl")
    mapping, events = _map(lines, previous_total=Usage())
    assert _tools(events) == [
        ("shell", "Running command", None, "echo harness-ok"),
        ("read", "Reading file", "/tmp/e2e/ws/notes.txt", "cat notes.txt"),
        ("edit", "Editing file", "/tmp/e2e/ws/notes.txt", None),
        ("write", "Writing file", "/tmp/e2e/ws/new.txt", None),
    ]
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.display.status.value for r in results] == ["completed"] * 4
    assert results[0].display.exit_code == 0 and "harness-ok" in (results[0].output or "")
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["All four tools ran."]
    assert mapping.final_text == "All four tools ran." and mapping.finished and mapping.failure is None
    outcome = mapping.outcome
    assert outcome is not None and outcome.status is RunStatus.SUCCESS and outcome.error is None
    assert outcome.final_text == "All four tools ran." and outcome.session_id == mapping.session_id
    assert outcome.usage == mapping.usage and outcome.usage.input_tokens > 0


def test_shared_transcript_cases() -> None:
    cases = {h["case"]: lines for h, lines in load_cases("shared-exec.jsonl")}
    m, events = _map(cases["shell_patch"])
    assert _tools(events)[0][:2] == ("shell", "Running command")  # `cat x && echo y > z` is compound
    assert _tools(events)[1][:2] == ("edit", "Editing file")
    m, events = _map(cases["http401"])
    assert m.failure is not None and m.failure.code == "auth_failed"
    assert [e.error.code for e in events if isinstance(e, ErrorEvent)] == ["auth_failed"]  # once, not twice
    m, _ = _map(cases["http500"])
    assert m.failure is not None and m.failure.code == "model_error"
    m, _ = _map(cases["sigint-midstream"])
    assert not m.finished and m.session_id is not None and m.outcome is None


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("fail_401.jsonl", "auth_failed"),
        ("fail_429.jsonl", "rate_limited"),
        ("fail_500.jsonl", "model_error"),
    ],
)
def test_backend_failures_are_classified(name: str, code: str) -> None:
    ((_, lines),) = load_cases(name)
    mapping, events = _map(lines)
    assert mapping.failure is not None and mapping.failure.code == code
    assert [e.error.code for e in events if isinstance(e, ErrorEvent)] == [code]
    outcome = mapping.outcome
    assert outcome is not None and outcome.status is RunStatus.FAILED
    assert outcome.error is not None and outcome.error.code == code


def test_classify_error_messages() -> None:
    missing = classify_error("Missing environment variable: `OPENAI_API_KEY`.")
    assert missing.code == "auth_failed" and "OPENAI_API_KEY" in missing.message and "codex login" in missing.message
    forbidden = classify_error("unexpected status 403 Forbidden: no")
    assert forbidden.code == "auth_failed" and forbidden.details["status"] == 403 and "HTTP 403" in forbidden.message
    assert classify_error("rate limit reached for gpt").retryable is True
    assert classify_error("rate limit reached for gpt").code == "rate_limited"
    limited = classify_error("last status: 429 Too Many Requests")
    assert limited.code == "rate_limited" and "wait a moment" in limited.message
    failed = classify_error("unexpected status 503 Service Unavailable: busy")
    assert failed.code == "model_error" and failed.retryable and "-o config.model" in failed.message
    other = classify_error("stream disconnected before completion")
    assert other.code == "model_error" and not other.retryable and "status" not in other.details


def test_usage_since_is_none_when_a_figure_went_down() -> None:
    total = Usage(input_tokens=150, cached_input_tokens=40, output_tokens=30, reasoning_tokens=5)
    since = usage_since(total, Usage(input_tokens=100, cached_input_tokens=40, output_tokens=10))
    assert since == Usage(input_tokens=50, cached_input_tokens=0, output_tokens=20, reasoning_tokens=5)
    assert usage_since(total, Usage(input_tokens=100, reasoning_tokens=6)) is None
    assert usage_since(total, Usage()) == total


def test_usage_is_per_run_when_the_previous_total_is_known() -> None:
    ((_, first),) = load_cases("resume_first.jsonl")
    ((_, second),) = load_cases("resume_second.jsonl")
    m1, _ = _map(first, previous_total=Usage())
    m2, events = _map(second, previous_total=m1.usage, resume_session=m1.session_id)
    usage = next(e for e in events if e.type == "context_usage")
    assert usage.cumulative is False and usage.usage.input_tokens == 100 and m2.usage.output_tokens == 20
    _m3, events = _map(second, resume_session=m1.session_id)  # previous total unknown
    usage = next(e for e in events if e.type == "context_usage")
    assert usage.cumulative is True and usage.usage.input_tokens == 700


def test_resume_that_started_a_new_thread_is_flagged() -> None:
    ((_, lines),) = load_cases("say.jsonl")
    m, events = _map(lines, resume_session="not-a-uuid", previous_total=None)
    assert events[0].type == "session_started" and events[0].resumed is False
    assert events[1].type == "error" and events[1].error.code == "session_not_found"  # the run fails: see below
    assert m.outcome is not None and m.outcome.status is RunStatus.FAILED
    assert next(e for e in events if e.type == "context_usage").cumulative is False


def test_web_search_recorded_from_the_real_binary() -> None:
    ((_, lines),) = load_cases("web_search.jsonl")
    _, events = _map(lines)
    uses = [e for e in events if isinstance(e, ToolUse)]
    assert [(u.display.kind.value, u.display.title, u.display.command) for u in uses] == [
        ("web", "Searching the web", "harness codex")
    ]


def test_mcp_todo_error_item_and_unknown_lines() -> None:
    mcp = {
        "id": "item_0",
        "type": "mcp_tool_call",
        "server": "fs",
        "tool": "read_file",
        "arguments": {"path": "/x"},
        "result": None,
        "error": None,
        "status": "in_progress",
    }
    done = {
        **mcp,
        "result": {"content": [{"type": "text", "text": "hi"}], "structured_content": None},
        "status": "completed",
    }
    todo = {
        "id": "item_1",
        "type": "todo_list",
        "items": [{"text": "Read", "completed": True}, {"text": "Edit", "completed": False}],
    }
    lines = [
        {"type": "item.started", "item": mcp},
        {"type": "item.completed", "item": done},
        {"type": "item.started", "item": todo},
        {"type": "item.updated", "item": todo},  # unchanged: no second summary
        {
            "type": "item.completed",
            "item": {
                **todo,
                "items": [{"text": "Read", "completed": True}, {"text": "Edit", "completed": True}],
            },
        },
        {"type": "item.completed", "item": {"id": "item_2", "type": "error", "message": "heads up"}},
        {"type": "item.completed", "item": {"id": "item_3", "type": "brand_new", "x": 1}},
        {"type": "thread.renamed", "name": "x"},
    ]
    _, events = _map(lines)
    assert [e.type for e in events] == [
        "tool_use",
        "tool_result",
        "tool_summary",
        "tool_summary",
        "error",
        "provider_raw",
        "provider_raw",
    ]
    assert (events[0].display.kind.value, events[0].display.title) == ("mcp", "read_file")
    assert (events[0].display.command or "").startswith("read_file(")  # the call, as every provider shows it
    assert events[1].name == "fs.read_file" and "hi" in (events[1].output or "")
    summaries = [e for e in events if isinstance(e, ToolSummary)]
    assert summaries[0].kind == "todo" and summaries[0].text == "[x] Read\n[ ] Edit"
    assert events[4].error.details["fatal"] is False


def test_completed_without_started_still_gives_a_tool_use() -> None:
    item = {
        "id": "item_0",
        "type": "command_execution",
        "command": "ls",
        "aggregated_output": "a\n",
        "exit_code": 2,
        "status": "completed",
    }
    _, events = _map([{"type": "item.completed", "item": item}])
    assert [e.type for e in events] == ["tool_use", "tool_result"]
    assert events[1].is_error is True and events[1].display.title == "Listing files"


def test_multi_file_patch_gives_one_tool_per_path() -> None:
    item = {
        "id": "item_4",
        "type": "file_change",
        "status": "completed",
        "changes": [{"path": "/tmp/e2e/ws/a", "kind": "add"}, {"path": "/tmp/e2e/ws/b", "kind": "delete"}],
    }
    _, events = _map([{"type": "item.completed", "item": item}])
    assert [(e.tool_id, e.display.title) for e in events if isinstance(e, ToolUse)] == [
        ("item_4#0", "Writing file"),
        ("item_4#1", "Deleting file"),
    ]


def test_mapping_module_is_pure() -> None:
    source = (Path(__file__).parents[1] / "harness_codex_exec" / "mapping.py").read_text()
    for forbidden in ("import anyio", "subprocess", "open(", "time."):
        assert forbidden not in source


def test_reconnecting_is_a_notice_and_codex_giving_up_names_the_base_url() -> None:
    """Recorded: codex against a closed 127.0.0.1 port, `unbounded_connection_retries` off (5 retries)."""
    from harness_codex_common import Reconnects

    ((_, lines),) = load_cases("reconnect_bounded.jsonl")
    mapping, events = _map(lines, reconnects=Reconnects(5, "http://127.0.0.1:1/v1"))
    notices = [e for e in events if e.type == "notice"]
    assert [n.details["attempt"] for n in notices] == [1, 2, 3, 4, 5] and {n.code for n in notices} == {"reconnecting"}
    assert [e.error.code for e in events if isinstance(e, ErrorEvent)] == ["model_error"]  # the last one only
    assert mapping.failure is not None and mapping.gave_up is None
    assert mapping.failure.message.startswith(
        "the agent could not reach its model API at http://127.0.0.1:1/v1 after 6 attempts"
    )


def test_endless_reconnecting_ends_the_run_past_max_reconnects() -> None:
    """Recorded: codex's default "waiting for network" mode, which would retry forever."""
    from harness_codex_common import Reconnects

    ((_, lines),) = load_cases("reconnect_waiting.jsonl")
    mapping, events = _map(lines, reconnects=Reconnects(1, "http://127.0.0.1:1/v1"))
    assert [e.type for e in events][:4] == ["session_started", "notice", "notice", "error"]  # then codex is stopped
    assert mapping.gave_up is not None and mapping.finished
    outcome = mapping.outcome
    assert outcome is not None and outcome.status is RunStatus.FAILED and outcome.error is not None
    assert "after 2 attempts" in outcome.error.message and outcome.error.retryable
    _, unbounded = _map(lines)  # the default bound (5) is not reached by these three notices
    assert [e.type for e in unbounded] == ["session_started", "notice", "notice", "notice"]


def test_a_500_carries_its_http_status() -> None:
    ((_, lines),) = load_cases("fail_500.jsonl")
    mapping, _ = _map(lines)
    assert mapping.failure is not None and mapping.failure.details["status"] == 500
    assert "HTTP 500" in mapping.failure.message and mapping.failure.retryable


def test_a_session_codex_took_for_a_name_is_session_not_found() -> None:
    mapping = ExecMapping(resume_session="nosuchthread")
    events = mapping.feed({"type": "thread.started", "thread_id": "01a2314c-0bd8-7b12-a4d0-6edb0fe6ac3d"})
    warning = next(e for e in events if isinstance(e, ErrorEvent))
    assert warning.error.code == "session_not_found" and "'nosuchthread'" in warning.error.message
    assert "harness runs" in warning.error.message and mapping.gave_up is not None
    assert mapping.outcome is not None and mapping.outcome.status is RunStatus.FAILED


def test_the_websocket_fallback_is_a_notice_not_an_error() -> None:
    """0.169.0 with no network says, as an `error` line, that it goes on over HTTPS: not a failure of the run."""
    line = {"type": "error", "message": "Falling back from WebSockets to HTTPS transport. stream disconnected "
            "before completion: error sending request for url (https://api.openai.com/v1/responses)"}
    mapping, events = _map([{"type": "thread.started", "thread_id": "t1"}, line])
    assert [e.type for e in events] == ["session_started", "notice"]
    assert events[1].code == "transport_fallback" and mapping.failure is None  # type: ignore[union-attr]
