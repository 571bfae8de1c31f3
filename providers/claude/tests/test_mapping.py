"""Golden tests of the pure mapping: recorded real Claude Code transcripts → HarnessEvents.

Regenerate the golden files after an intended mapping change with HARNESS_UPDATE_GOLDEN=1 and review the diff.
A missing golden file is written and the test fails (review it and run again): it never passes unchecked.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from harness_core import HarnessError, McpServer, RunStatus, ToolKind, ToolStatus

from harness_claude.display import tool_display
from harness_claude.mapping import ClaudeMapper, approval_request
from harness_claude.outcome import classify_api_error

HERE = Path(__file__).parent
TRANSCRIPTS = HERE / "transcripts"
GOLDEN = HERE / "golden"
ALL = sorted(p for p in TRANSCRIPTS.rglob("*.jsonl") if not p.name.endswith(".stdin.jsonl"))


def _cwd_of(lines: list[dict[str, Any]]) -> str | None:
    for msg in lines:
        if msg.get("type") == "system" and msg.get("subtype") == "init":
            return str(msg.get("cwd"))
    return None


def map_transcript(path: Path, *, fast: bool = True) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The events and results of a transcript, mapped as `Turn` maps them (`text_delta` first, else `feed`), or
    with `feed` alone (`fast=False`)."""
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    stdin = path.with_name(path.name.replace(".jsonl", ".stdin.jsonl"))
    sent_interrupt = "interrupt" in path.name or "sigint" in path.name
    if stdin.exists():
        sent_interrupt = '"interrupt"' in stdin.read_text()
    mapper = ClaudeMapper(_cwd_of(lines))
    mapper.interrupt_sent = sent_interrupt
    events, ends = [], []
    for msg in lines:
        before = mapper.result
        delta = mapper.text_delta(msg) if fast else None
        mapped = [delta] if delta is not None else mapper.feed(msg)
        events += [e.model_dump(mode="json", exclude={"run_id", "seq", "ts"}) for e in mapped]
        if mapper.result is not before:  # a `result` line
            ends.append(mapper.result.model_dump(mode="json", exclude={"run_id", "provider"}))  # type: ignore[union-attr]
    return events, ends


def check_golden(golden: Path, got: Any) -> None:
    """Compare with the golden file; HARNESS_UPDATE_GOLDEN=1 rewrites it. A missing one is written, then fails."""
    update = bool(os.environ.get("HARNESS_UPDATE_GOLDEN"))
    if update or not golden.exists():
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
        if not update:
            pytest.fail(f"wrote missing golden file {golden}; review it and run again")
    assert got == json.loads(golden.read_text()), f"{golden}: rerun with HARNESS_UPDATE_GOLDEN=1 if intended"


@pytest.mark.parametrize("path", ALL, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_golden(path: Path) -> None:
    events, ends = map_transcript(path)
    check_golden(GOLDEN / path.parent.name / f"{path.stem}.json", {"events": events, "results": ends})


def test_missing_golden_is_written_and_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_UPDATE_GOLDEN", raising=False)
    golden = tmp_path / "sub" / "new.json"
    with pytest.raises(pytest.fail.Exception, match="wrote missing golden"):
        check_golden(golden, {"events": []})
    assert json.loads(golden.read_text()) == {"events": []}
    check_golden(golden, {"events": []})  # now it exists: compared, passes


def _is_result_usage(event: dict[str, Any]) -> bool:
    """The `context_usage` of a `result` line (it has the cost; those of each model message do not)."""
    return event["type"] == "context_usage" and event.get("usage", {}).get("cost_usd") is not None


def final_message_text(events: list[dict[str, Any]]) -> str:
    """The text deltas of the turn's last assistant message (item ids are `<message id>:<block index>`)."""
    first_result_at = next(i for i, e in enumerate(events) if _is_result_usage(e))
    deltas = [e for e in events[:first_result_at] if e["type"] == "text_delta"]
    if not deltas:
        return ""
    last = str(deltas[-1]["item_id"]).rsplit(":", 1)[0]
    return "".join(e["text"] for e in deltas if str(e["item_id"]).rsplit(":", 1)[0] == last)


@pytest.mark.parametrize("path", ALL, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_streamed_text_is_never_repeated(path: Path) -> None:
    """The deltas of the final message add up to the `result` text exactly: a block (or a piece of one, however
    short) emitted twice, or lost, shows."""
    events, ends = map_transcript(path)
    if not ends or ends[0]["status"] != "success":
        return
    assert final_message_text(events) == ends[0]["final_text"]


def test_repeated_short_text_is_caught() -> None:
    events = [
        {"type": "text_delta", "text": "ok", "item_id": "m1:0"},
        {"type": "text_delta", "text": "ok", "item_id": "m1:0"},
        {"type": "context_usage", "usage": {"cost_usd": 0.1}},
    ]
    assert final_message_text(events) != "ok"


def _events(name: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return map_transcript(TRANSCRIPTS / "shared" / f"transcript-{name}.jsonl")


def test_bash_turn_with_partial_messages() -> None:
    events, ends = _events("bash-partial")
    types = [e["type"] for e in events]
    assert types[0] == "session_started"
    assert types.count("tool_use") == 1 and types.count("tool_result") == 1
    use = next(e for e in events if e["type"] == "tool_use")
    assert use["display"]["kind"] == "shell" and use["display"]["command"] == "echo hello"
    res = next(e for e in events if e["type"] == "tool_result")
    assert res["display"]["status"] == "completed" and res["display"]["exit_code"] == 0
    assert res["display"]["duration_ms"] is not None and res["output"] == "hello"
    assert len(ends) == 1 and ends[0]["final_text"] == "The command printed: hello. Done."
    usage = next(e for e in events if _is_result_usage(e))["usage"]
    assert usage["input_tokens"] == 200 and usage["output_tokens"] == 24 and usage["cost_usd"] > 0


def test_each_model_message_reports_the_turn_usage_so_far() -> None:
    """Per model message a non-cumulative `context_usage` (input from message_start, output from message_delta),
    so the runner can stop a turn over `max_output_tokens` before its `result`."""
    events, _ = _events("bash-partial")
    so_far = [e["usage"] for e in events if e["type"] == "context_usage" and not _is_result_usage(e)]
    assert len(so_far) == 2 and not any(e["cumulative"] for e in events if e["type"] == "context_usage")
    assert so_far[0]["output_tokens"] < so_far[1]["output_tokens"] == 24
    assert so_far[1]["input_tokens"] == 200


def test_thinking_maps_to_reasoning_once() -> None:
    events, _ = _events("think")
    assert [e["text"] for e in events if e["type"] == "reasoning_delta"] == ["Let me think about this."]


@pytest.mark.parametrize(("name", "code"), [("err401-r2", "auth_failed"), ("err500-r2", "model_error")])
def test_api_errors_are_classified(name: str, code: str) -> None:
    events, ends = _events(name)
    retries = [e for e in events if e["type"] == "notice"]  # Claude Code retrying: warnings, not errors
    assert [e["code"] for e in retries] == ["retrying", "retrying"]
    assert all(e["details"]["error_code"] == code for e in retries)
    assert not any(e["type"] == "error" and e["error"]["retryable"] for e in events)
    assert ends[0]["status"] == "failed" and ends[0]["error"]["code"] == code
    assert not any(e["type"] == "text_delta" for e in events), (
        "the CLI's synthetic error text is not agent text"
    )


def test_interrupt_results_are_interrupted_only_after_our_interrupt() -> None:
    _, ends = _events("sj-interrupt_tool")
    assert ends[0]["status"] == "interrupted"
    lines = [json.loads(x) for x in (TRANSCRIPTS / "shared/transcript-sj-interrupt_tool.jsonl").open()]
    mapper = ClaudeMapper("/tmp/e2e/ws")  # no interrupt sent by us
    for line in lines:
        mapper.feed(line)
        if mapper.finished:
            break
    outcome, result = mapper.outcome, mapper.result
    assert isinstance(outcome, HarnessError) and "aborted_tools" in outcome.message
    assert result is not None and result.status is RunStatus.FAILED and result.error == outcome.to_info()


def test_outcome_is_none_until_the_result_line_then_the_result() -> None:
    lines = [json.loads(x) for x in (TRANSCRIPTS / "recorded/think.jsonl").open()]
    mapper = ClaudeMapper("/tmp/e2e/ws")
    for line in lines[:-1]:
        mapper.feed(line)
        assert mapper.outcome is None and not mapper.finished
    assert lines[-1]["type"] == "result"
    mapper.feed(lines[-1])
    assert mapper.finished and mapper.outcome is mapper.result and mapper.result.status is RunStatus.SUCCESS


def test_max_turns_fails_with_a_hint() -> None:
    _, ends = _events("maxturns")
    error = ends[0]["error"]
    assert ends[0]["status"] == "failed" and error["code"] == "model_error"
    assert "raise -o max_turns=N above 1" in error["message"] and error["details"]["max_turns"] == 1


def test_denied_approval_is_a_declined_tool_result() -> None:
    events, ends = _events("sj-deny")
    res = next(e for e in events if e["type"] == "tool_result")
    assert res["display"]["status"] == "declined" and res["is_error"]
    assert ends[0]["status"] == "success"


def test_permission_denied_line_declines_once() -> None:
    mapper = ClaudeMapper("/ws")
    denied = {
        "type": "system",
        "subtype": "permission_denied",
        "tool_name": "Bash",
        "tool_use_id": "t1",
        "message": "needs approval",
        "session_id": "s",
    }
    late = {
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "needs approval", "is_error": True}
            ],
        },
    }
    first = mapper.feed(denied)
    assert len(first) == 1 and first[0].type == "tool_result"
    assert first[0].display.status is ToolStatus.DECLINED
    assert mapper.feed(late) == []


def test_an_mcp_server_that_did_not_start_is_a_warning_once() -> None:
    """Claude Code 2.1.328 starts without a server whose command fails and says so only in the init line."""
    mapper = ClaudeMapper("/ws")
    init = {"type": "system", "subtype": "init", "session_id": "s", "model": "m",
            "mcp_servers": [{"name": "everything", "status": "failed"}, {"name": "harness", "status": "connected"}]}
    events = mapper.feed(init)
    assert [e.type for e in events] == ["session_started", "notice"]
    notice = events[1]
    assert notice.level == "warning" and notice.code == "mcp_server_failed"  # type: ignore[union-attr]
    assert "MCP server 'everything' did not start" in notice.message  # type: ignore[union-attr]
    assert "--mcp-server NAME=COMMAND" in notice.message  # type: ignore[union-attr]
    assert mapper.feed(init) == []  # the next turn's init line repeats it: said once


def test_an_mcp_server_given_by_url_that_failed_gets_advice_for_a_url() -> None:
    """Trial 27, problem 11: `--mcp-server docs=http://…` that is not there was told to run its COMMAND; it gets
    the URL it could not reach, its password and query masked."""
    docs = McpServer(name="docs", url="http://alice:hunter2pass@127.0.0.1:9/mcp?token=abc")
    mapper = ClaudeMapper("/ws", servers=[docs, McpServer(name="ev", command="mcp-server-everything")])
    init = {"type": "system", "subtype": "init", "session_id": "s", "model": "m",
            "mcp_servers": [{"name": "docs", "status": "failed"}, {"name": "ev", "status": "failed"}]}
    docs_notice, ev_notice = (e.message for e in mapper.feed(init)[1:])  # type: ignore[union-attr]
    assert "could not reach http://***@127.0.0.1:9/mcp?***" in docs_notice and "COMMAND" not in docs_notice
    assert "hunter2pass" not in docs_notice and "abc" not in docs_notice
    assert "run COMMAND yourself" in ev_notice


def _tool_turn(name: str, error: str) -> list[Any]:
    mapper = ClaudeMapper("/ws")
    use = {"type": "tool_use", "id": "t1", "name": name, "input": {"command": "ls"}}
    mapper.feed({"type": "assistant", "message": {"id": "m1", "content": [use]}})
    block = {"type": "tool_result", "tool_use_id": "t1", "is_error": True, "content": error}
    return mapper.feed({"type": "user", "message": {"role": "user", "content": [block]}})


def test_tool_refused_by_policy_is_declined() -> None:
    # 2.1.328, --tools without Bash (and the same for --disallowedTools Bash), recorded
    error = (
        "<tool_use_error>Error: No such tool available: Bash. Bash is disabled for this session, in subagents "
        "as well as here.</tool_use_error>"
    )
    (res,) = _tool_turn("Bash", error)
    assert res.display.status is ToolStatus.DECLINED and res.is_error and res.display.exit_code is None


def test_made_up_tool_is_failed() -> None:
    (res,) = _tool_turn("Frob", "<tool_use_error>Error: No such tool available: Frob</tool_use_error>")
    assert res.display.status is ToolStatus.FAILED


def test_unknown_lines_are_kept_raw() -> None:
    mapper = ClaudeMapper()
    out = mapper.feed({"subtype": "x", "type": "brand_new", "session_id": "s"})
    assert out[0].type == "provider_raw" and out[0].payload["type"] == "brand_new"
    assert mapper.feed({"type": "system", "subtype": "novel"})[0].type == "provider_raw"


def test_assistant_text_without_stream_events_is_emitted_once() -> None:
    mapper = ClaudeMapper()
    msg = {"type": "assistant", "message": {"id": "m1", "content": [{"type": "text", "text": "hi"}]}}
    assert [e.text for e in mapper.feed(msg)] == ["hi"]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("name", "inp", "kind", "title", "path"),
    [
        ("Read", {"file_path": "/ws/a/b.py"}, ToolKind.READ, "Reading file", "a/b.py"),
        ("Write", {"file_path": "/elsewhere/x"}, ToolKind.WRITE, "Writing file", "/elsewhere/x"),
        ("Edit", {"file_path": "/ws/x"}, ToolKind.EDIT, "Editing file", "x"),
        ("MultiEdit", {"file_path": "/ws/x", "edits": []}, ToolKind.EDIT, "Editing file", "x"),
        ("Grep", {"pattern": "foo"}, ToolKind.SEARCH, "Searching", None),
        ("Glob", {"pattern": "*.py"}, ToolKind.SEARCH, "Searching", None),
        ("LS", {"path": "/ws/src"}, ToolKind.READ, "Listing files", "src"),
        ("WebFetch", {"url": "http://x"}, ToolKind.WEB, "Fetching web page", None),
        ("WebSearch", {"query": "q"}, ToolKind.WEB, "Searching the web", None),
        ("Task", {"description": "d"}, ToolKind.AGENT, "Running agent", None),
        ("Agent", {}, ToolKind.AGENT, "Running agent", None),
        ("mcp__git__status", {}, ToolKind.MCP, "status", None),
        ("Frobnicate", {}, ToolKind.UNKNOWN, "Frobnicate", None),
    ],
)
def test_tool_display(name: str, inp: dict[str, Any], kind: ToolKind, title: str, path: str | None) -> None:
    d = tool_display(name, inp, "/ws")
    assert (d.kind, d.title, d.path) == (kind, title, path)


def test_bash_display_and_approval_request() -> None:
    req = {
        "subtype": "can_use_tool",
        "tool_name": "Bash",
        "input": {"command": "touch f"},
        "tool_use_id": "toolu_1",
        "decision_reason": "This command requires approval",
    }
    ev = approval_request("r1", req, "/ws")
    assert ev.request_id == "r1" and ev.tool_id == "toolu_1"
    assert ev.display.kind is ToolKind.SHELL and ev.display.command == "touch f"
    assert ev.reason == "This command requires approval"


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (401, "auth_failed"),
        (403, "auth_failed"),
        (429, "rate_limited"),
        (500, "model_error"),
        (None, "model_error"),
    ],
)
def test_classify(status: int | None, code: str) -> None:
    assert classify_api_error(status, "x").code == code


def test_api_errors_say_what_to_do_next_in_claude_code() -> None:
    assert "ANTHROPIC_API_KEY" in classify_api_error(401, "x").message
    assert "claude /login" in classify_api_error(403, "x").message
    assert "-o max_retries=N" in classify_api_error(429, "x").message
    assert "-o max_retries=N" in classify_api_error(500, "x").message
    assert "Claude Code is retrying" in classify_api_error(500, "x", retrying=True).message


def test_not_logged_in_is_an_auth_failure_with_the_next_step() -> None:
    """Claude Code without credentials says so with no HTTP status: that is `auth_failed`, not a model error
    to retry later (a user hit it on a fresh machine)."""
    from harness_claude.outcome import classify_api_error

    error = classify_api_error(None, "Not logged in · Please run /login")
    assert error.code == "auth_failed" and not error.retryable
    assert "/login" in error.message and "ANTHROPIC_API_KEY" in error.message and "--offline" in error.message
    other = classify_api_error(None, "Overloaded")
    assert other.code == "model_error"


@pytest.mark.parametrize(
    ("name", "session"),
    [("resume_unknown", "3f1c2a9e-0000-4000-8000-000000000000"), ("resume_not_uuid", "not-a-session")],
)
def test_resume_of_an_unknown_session_is_session_not_found(name: str, session: str) -> None:
    lines = [json.loads(x) for x in (TRANSCRIPTS / f"recorded/{name}.jsonl").open()]
    mapper = ClaudeMapper("/tmp/e2e/ws", resumed=True)
    for msg in lines:
        mapper.feed(msg)
    err = mapper.outcome
    assert isinstance(err, HarnessError) and err.code == "session_not_found", err
    assert err.details["session_id"] == session and "`harness runs`" in err.message


@pytest.mark.parametrize(
    "name", ["recorded/interrupt_stream", "shared/transcript-sj-interrupt", "shared/transcript-kill-sigint-stream"]
)
def test_a_stream_we_interrupted_is_not_a_stall(name: str) -> None:
    """2.1.328 ends a stream it stops on our interrupt with `message_stop` + `abandoned_blocks`, as it does a
    stalled one: only without our interrupt is it a stall."""
    lines = [json.loads(x) for x in (TRANSCRIPTS / f"{name}.jsonl").open()]
    assert any(m.get("abandoned_blocks") for m in lines)  # the transcript has the shape this test is about
    events, ends = map_transcript(TRANSCRIPTS / f"{name}.jsonl")
    assert [e for e in events if e["type"] == "error"] == [] and ends[0]["status"] == "interrupted"
    mapper = ClaudeMapper("/tmp/e2e/ws")  # the same lines without our interrupt: the stall is reported
    stalls = [e for m in lines for e in mapper.feed(m) if e.type == "notice"]
    assert [e.code for e in stalls] == ["stream_stalled"]  # type: ignore[union-attr]


@pytest.mark.parametrize("path", ALL, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_text_delta_fast_path_maps_as_feed_does(path: Path) -> None:
    """`text_delta` (the read loop's hot path) changes nothing: the same events and results as `feed` alone."""
    assert map_transcript(path) == map_transcript(path, fast=False)


def test_the_text_delta_fast_path_takes_only_main_agent_text() -> None:
    mapper = ClaudeMapper("/ws")

    def line(delta: dict[str, Any], **extra: Any) -> dict[str, Any]:
        event = {"type": "content_block_delta", "index": 0, "delta": delta}
        return {"type": "stream_event", "event": event, "session_id": "s", "api_message_id": "m", **extra}

    text = {"type": "text_delta", "text": "hi"}
    assert mapper.text_delta({"type": "system", "subtype": "init"}) is None
    assert mapper.text_delta(line({"type": "thinking_delta", "thinking": "hm"})) is None
    assert mapper.text_delta(line({"type": "text_delta", "text": ""})) is None
    assert mapper.text_delta(line(text, parent_tool_use_id="toolu_1")) is None  # a sub-agent's: a tool summary
    assert mapper.text_delta({"type": "stream_event", "event": "odd"}) is None
    first, second = mapper.text_delta(line(text)), mapper.text_delta(line(text, parent_tool_use_id=None))
    assert first is not None and second is not None
    assert (first.text, first.item_id, second.item_id, mapper.session_id) == ("hi", "m:0", "m:0", "s")
    mapper.feed({"type": "stream_event", "event": {"type": "content_block_start", "index": 0,
                                                   "content_block": {"type": "text"}}, "api_message_id": "m"})
    mapper.text_delta(line(text))  # into the new block of the same key, not the one streamed before
    full = {"type": "assistant", "message": {"id": "m", "content": [{"type": "text", "text": "hi there"}]}}
    assert [e.text for e in mapper.feed(full)] == [" there"]  # type: ignore[union-attr]
    assert mapper.streamed_text == "hihihi there"
