"""Mapping rules that recorded transcripts do not exercise: coalesced output, plans, other tool items."""

from __future__ import annotations

from typing import Any

from harness_core import HarnessEvent, ToolKind

from harness_codex_appserver.items import infer_kind
from harness_codex_appserver.mapping import TurnMapper
from harness_codex_appserver.payloads import codex_error_status, turn_error

IDS = {"threadId": "t", "turnId": "u"}


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _mapper(clock: _Clock | None = None) -> TurnMapper:
    m = TurnMapper(
        thread_id="t", flush_bytes=100, flush_interval=10.0, max_streamed_chars=1000, clock=clock or _Clock()
    )
    m.start_turn("u")
    return m


def _feed(m: TurnMapper, method: str, params: Any) -> list[HarnessEvent]:
    return m.feed({"method": method, "params": params})


def test_output_deltas_are_coalesced_and_bounded() -> None:
    m = _mapper()
    events = []
    for i in range(500):  # 500 tiny deltas of 10 characters = 5000 characters
        events += _feed(m, "item/commandExecution/outputDelta", {**IDS, "itemId": "c", "delta": f"line {i:04}\n"})
    assert 5 <= len(events) <= 11  # flushed every ~100 characters, stopped at 1000
    assert sum(len(e.text) for e in events) <= 1000  # type: ignore[union-attr]
    end = _feed(
        m,
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
    clock = _Clock()
    m = _mapper(clock)
    assert _feed(m, "item/commandExecution/outputDelta", {**IDS, "itemId": "c", "delta": "a"}) == []
    clock.now = 9.0
    assert _feed(m, "item/commandExecution/outputDelta", {**IDS, "itemId": "c", "delta": "b"}) == []
    clock.now = 11.0
    later = _feed(m, "item/commandExecution/outputDelta", {**IDS, "itemId": "c", "delta": "c"})
    assert [e.text for e in later] == ["abc"]  # type: ignore[union-attr]


def test_plan_and_diff() -> None:
    m = _mapper()
    plan = _feed(
        m,
        "turn/plan/updated",
        {
            **IDS,
            "explanation": "why",
            "plan": [{"step": "read", "status": "completed"}, {"step": "edit", "status": "inProgress"}],
        },
    )
    assert plan[0].text == "why\n[x] read\n[~] edit"  # type: ignore[union-attr]
    diff = {**IDS, "diff": "--- a\n+++ b\n"}
    assert len(_feed(m, "turn/diff/updated", diff)) == 1 and _feed(m, "turn/diff/updated", diff) == []


def test_other_tool_items() -> None:
    m = _mapper()
    mcp = _feed(
        m,
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
    web = _feed(m, "item/completed", {**IDS, "item": {"type": "webSearch", "id": "w", "query": "anyio"}})
    img = _feed(m, "item/started", {**IDS, "item": {"type": "imageView", "id": "i", "path": "/x.png"}})
    agent = _feed(
        m,
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
    assert m.feed({"params": {"x": 1}})[0].type == "provider_raw"  # no method: kept whole
    assert _feed(m, "brand/new", {"x": 1})[0].type == "provider_raw"
    other = _feed(m, "item/agentMessage/delta", {"threadId": "sub", "turnId": "v", "itemId": "x", "delta": "hi"})
    assert other[0].type == "provider_raw"


def _classify(info: Any) -> tuple[str, int | None]:
    error = turn_error({"message": "m", "codexErrorInfo": info})
    return error.code, error.details.get("status")


def test_error_classification() -> None:
    assert _classify({"httpConnectionFailed": {"httpStatusCode": 401}}) == ("auth_failed", 401)
    assert _classify({"responseTooManyFailedAttempts": {"httpStatusCode": 429}}) == ("rate_limited", 429)
    assert _classify("internalServerError") == ("model_error", 500)
    assert _classify("usageLimitExceeded")[0] == "rate_limited"
    assert _classify({"unauthorized": {}}) == ("auth_failed", 401)
    assert _classify(None) == ("model_error", None)
    assert codex_error_status({"sessionBudgetExceeded": None}) == ("sessionBudgetExceeded", None)


def test_errors_say_what_to_do_next() -> None:
    auth = turn_error({"message": "bad key", "codexErrorInfo": "unauthorized", "additionalDetails": "url: x"})
    assert "bad key (url: x)" in auth.message and "codex login" in auth.message and not auth.retryable
    assert "wait" in turn_error({"message": "slow down", "codexErrorInfo": "usageLimitExceeded"}).message
    failed = turn_error({"message": "boom", "codexErrorInfo": "internalServerError"})
    assert "HTTP 500" in failed.message and "-o config.model" in failed.message and failed.retryable
    retry = turn_error({"message": "reconnecting", "codexErrorInfo": {"httpConnectionFailed": {}}}, will_retry=True)
    assert retry.code == "model_error" and retry.retryable and "codex is retrying" in retry.message
