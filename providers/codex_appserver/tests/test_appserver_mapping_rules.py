"""Mapping rules that recorded transcripts do not exercise: coalesced output, plans, other tool items."""

from __future__ import annotations

from harness_core.events import ToolKind

from harness_codex_appserver.items import infer_kind
from harness_codex_appserver.mapping import TurnMapper
from harness_codex_appserver.payloads import classify_error

IDS = {"threadId": "t", "turnId": "u"}


def _mapper() -> TurnMapper:
    m = TurnMapper(thread_id="t", flush_bytes=100, flush_interval=10.0, max_streamed_chars=1000)
    m.start_turn("u")
    return m


def test_output_deltas_are_coalesced_and_bounded() -> None:
    m = _mapper()
    events = []
    for i in range(500):  # 500 tiny deltas of 10 characters = 5000 characters
        events += m.map(
            "item/commandExecution/outputDelta", {**IDS, "itemId": "c", "delta": f"line {i:04}\n"}, now=0.0
        )
    assert 5 <= len(events) <= 11  # flushed every ~100 characters, stopped at 1000
    assert sum(len(e.text) for e in events) <= 1000  # type: ignore[union-attr]
    end = m.map(
        "item/completed",
        {
            **IDS,
            "item": {
                "type": "commandExecution",
                "id": "c",
                "command": "x",
                "cwd": "/",
                "status": "completed",
                "commandActions": [],
                "aggregatedOutput": "x" * 10_000,
                "exitCode": 0,
            },
        },
    )
    assert end[0].type == "tool_summary" and end[0].kind == "note" and "4000" in end[0].text
    assert end[-1].type == "tool_result" and len(end[-1].display.summary or "") < 2100


def test_output_flushes_after_interval() -> None:
    m = _mapper()
    assert m.map("item/commandExecution/outputDelta", {**IDS, "itemId": "c", "delta": "a"}, now=0.0) == []
    later = m.map("item/commandExecution/outputDelta", {**IDS, "itemId": "c", "delta": "b"}, now=11.0)
    assert [e.text for e in later] == ["ab"]  # type: ignore[union-attr]


def test_plan_and_diff() -> None:
    m = _mapper()
    plan = m.map(
        "turn/plan/updated",
        {
            **IDS,
            "explanation": "why",
            "plan": [{"step": "read", "status": "completed"}, {"step": "edit", "status": "inProgress"}],
        },
    )
    assert plan[0].text == "why\n[x] read\n[~] edit"  # type: ignore[union-attr]
    diff = {**IDS, "diff": "--- a\n+++ b\n"}
    assert len(m.map("turn/diff/updated", diff)) == 1 and m.map("turn/diff/updated", diff) == []


def test_other_tool_items() -> None:
    m = _mapper()
    mcp = m.map(
        "item/started",
        {
            **IDS,
            "item": {
                "type": "mcpToolCall",
                "id": "m",
                "server": "docs",
                "tool": "lookup",
                "status": "inProgress",
                "arguments": {},
            },
        },
    )
    web = m.map("item/completed", {**IDS, "item": {"type": "webSearch", "id": "w", "query": "anyio"}})
    img = m.map("item/started", {**IDS, "item": {"type": "imageView", "id": "i", "path": "/x.png"}})
    agent = m.map(
        "item/started",
        {
            **IDS,
            "item": {
                "type": "collabAgentToolCall",
                "id": "a",
                "tool": "spawnAgent",
                "status": "inProgress",
                "agentsStates": {},
                "receiverThreadIds": [],
                "senderThreadId": "t",
            },
        },
    )
    kinds = [e.display.kind for e in mcp + web + img + agent]  # type: ignore[union-attr]
    assert kinds == [ToolKind.MCP, ToolKind.WEB, ToolKind.READ, ToolKind.AGENT]
    assert infer_kind("read_file")[0] is ToolKind.READ and infer_kind("grep")[0] is ToolKind.SEARCH
    assert infer_kind("frobnicate")[0] is ToolKind.UNKNOWN


def test_unknown_and_foreign_notifications_are_kept_raw() -> None:
    m = _mapper()
    assert m.map("brand/new", {"x": 1})[0].type == "provider_raw"
    other = m.map("item/agentMessage/delta", {"threadId": "sub", "turnId": "v", "itemId": "x", "delta": "hi"})
    assert other[0].type == "provider_raw"


def test_error_classification() -> None:
    assert classify_error({"httpConnectionFailed": {"httpStatusCode": 401}}) == ("auth_failed", 401)
    assert classify_error({"responseTooManyFailedAttempts": {"httpStatusCode": 429}}) == ("rate_limited", 429)
    assert classify_error("internalServerError") == ("model_error", 500)
    assert classify_error("usageLimitExceeded")[0] == "rate_limited"
    assert classify_error(None) == ("model_error", None)
