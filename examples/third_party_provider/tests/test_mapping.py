"""The pure mapping from Responses stream events to Harness events, one run of several responses."""

from __future__ import annotations

from typing import Any

from harness_core import (
    ContextUsage,
    ModelError,
    ProviderRaw,
    ReasoningDelta,
    RunStatus,
    SessionStarted,
    TextDelta,
    Usage,
)

from harness_mini_agent.mapping import ResponsesMapper


def _usage(inp: int, out: int, reasoning: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": inp,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": reasoning},
    }


CALL: dict[str, Any] = {
    "type": "function_call",
    "id": "fc_0",
    "call_id": "call_0",
    "name": "exec_command",
    "arguments": '{"cmd": "ls"}',
}
FIRST: list[dict[str, Any]] = [  # reasoning, then one tool call
    {"type": "response.created", "response": {"id": "resp_0", "model": "gpt-x"}},
    {"type": "response.reasoning_summary_text.delta", "item_id": "rs_0", "delta": "Look first."},
    {"type": "response.output_item.done", "item": {"type": "reasoning", "id": "rs_0", "summary": []}},
    {"type": "response.output_item.done", "item": CALL},
    {"type": "response.completed", "response": {"id": "resp_0", "usage": _usage(100, 20, 5)}},
]
ANSWER: dict[str, Any] = {
    "type": "message",
    "id": "msg_1",
    "content": [{"type": "output_text", "text": "Two files."}],
}
SECOND: list[dict[str, Any]] = [  # the answer, streamed
    {"type": "response.created", "response": {"id": "resp_1", "model": "gpt-x"}},
    {"type": "response.output_text.delta", "item_id": "msg_1", "delta": "Two "},
    {"type": "response.output_text.delta", "item_id": "msg_1", "delta": "files."},
    {"type": "response.output_item.done", "item": ANSWER},
    {"type": "response.completed", "response": {"id": "resp_1", "usage": _usage(130, 10)}},
]


def _play(mapper: ResponsesMapper, events: list[dict[str, Any]]) -> list[Any]:
    mapper.start_response()
    return [out for event in events for out in mapper.feed(event)]


def test_a_run_of_two_responses() -> None:
    mapper = ResponsesMapper("default-model")
    assert mapper.start() == []
    first = _play(mapper, FIRST)
    assert first == [
        SessionStarted(session_id="resp_0", model="gpt-x"),
        ReasoningDelta(text="Look first.", item_id="rs_0"),
        ContextUsage(usage=Usage(input_tokens=100, output_tokens=20, reasoning_tokens=5)),
    ]
    assert mapper.response.completed and [c.cmd for c in mapper.response.calls] == ["ls"]
    assert mapper.session_id is None, "a response with an unanswered call is no session to continue from"

    second = _play(mapper, SECOND)
    assert [type(e) for e in second] == [TextDelta, TextDelta, ContextUsage], "announced once, text not twice"
    result = mapper.result(RunStatus.SUCCESS)
    assert (result.final_text, result.session_id) == ("Two files.", "resp_1")
    assert result.usage == Usage(input_tokens=230, output_tokens=30, reasoning_tokens=5)


def test_a_resumed_run_announces_the_session_it_continues() -> None:
    mapper = ResponsesMapper("m", resume_session="resp_41")
    assert mapper.start() == [SessionStarted(session_id="resp_41", resumed=True, model="m")]
    events = _play(mapper, SECOND)
    assert not any(isinstance(e, SessionStarted) for e in events)
    assert mapper.result(RunStatus.SUCCESS).session_id == "resp_1"


def test_an_interrupted_run_keeps_the_last_session_it_can_continue_from() -> None:
    mapper = ResponsesMapper("m", resume_session="resp_41")
    _play(mapper, FIRST[:2])  # cut off mid-response
    assert not mapper.response.completed
    assert mapper.result(RunStatus.INTERRUPTED).session_id == "resp_41"


def test_a_message_that_was_not_streamed_arrives_whole() -> None:
    mapper = ResponsesMapper("m")
    events = _play(mapper, [e for e in SECOND if e["type"] != "response.output_text.delta"])
    assert [e for e in events if isinstance(e, TextDelta)] == [TextDelta(text="Two files.", item_id="msg_1")]
    assert mapper.text == "Two files."


def test_a_failed_response_carries_the_error_and_unknown_items_stay_visible() -> None:
    mapper = ResponsesMapper("m")
    web = {"type": "web_search_call", "id": "ws_0", "status": "completed"}
    events = _play(
        mapper,
        [
            {"type": "response.output_item.done", "item": web},
            {"type": "response.failed", "response": {"error": {"message": "the model overheated"}}},
        ],
    )
    assert events == [ProviderRaw(method="web_search_call", payload=web)]
    error = mapper.response.error
    assert isinstance(error, ModelError) and "the model overheated" in error.message
    assert not mapper.response.completed
