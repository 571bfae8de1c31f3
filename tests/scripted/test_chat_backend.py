"""The scripted Chat Completions backend over plain HTTP (urllib): streamed chunks and whole completions for every
step kind, OpenAI error bodies, side calls answered without consuming a step, `GET /v1/models`, stalls released by
`stop()`. No CLIs; what a particular agent's dialect sends is tested with its provider."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from harness_core.scripted.backends import FINISHED_TEXT, SIDE_TEXT, FunctionCall
from harness_core.scripted.backends.chat import ChatCompletionsBackend, ChatDialect
from harness_core.scripted.scenarios import SCENARIOS, Fail, ReadFile, Say, Scenario, Stall, TakeLong

TOOLS = [{"type": "function", "function": {"name": "shell", "parameters": {"type": "object"}}}]


def request(url: str, body: dict[str, Any] | None = None, timeout: float = 5) -> tuple[int, str, bytes]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.headers["Content-Type"], resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers["Content-Type"], err.read()


def data_frames(raw: bytes) -> list[str]:
    """The `data:` payloads of an SSE stream whose frames carry no `event:` name (as Chat Completions streams)."""
    assert raw.endswith(b"\n\n")
    frames = [frame for frame in raw.decode().split("\n\n") if frame.strip()]
    assert all(frame.startswith("data: ") and "\n" not in frame for frame in frames), frames
    return [frame[len("data: "):] for frame in frames]


def stream(backend: ChatCompletionsBackend, usage: bool = True, **extra: Any) -> list[dict[str, Any]]:
    """One streamed turn; checks the `[DONE]` terminator and returns the chunks before it."""
    body: dict[str, Any] = {"model": "m-1", "stream": True, "messages": [], "tools": TOOLS, **extra}
    if usage:
        body["stream_options"] = {"include_usage": True}
    status, ctype, raw = request(f"{backend.base_url}/chat/completions", body)
    assert (status, ctype) == (200, "text/event-stream")
    payloads = data_frames(raw)
    assert payloads[-1] == "[DONE]"
    return [json.loads(p) for p in payloads[:-1]]


def deltas(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c["choices"][0]["delta"] for c in chunks if c["choices"]]


def tool_call_of(chunks: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """The function name and parsed arguments of the (single) tool call streamed in `chunks`."""
    calls = [call for d in deltas(chunks) for call in d.get("tool_calls", [])]
    assert calls[0]["id"] and calls[0]["type"] == "function" and calls[0]["function"]["arguments"] == ""
    assert all(call["index"] == 0 for call in calls) and all("id" not in call for call in calls[1:])
    return calls[0]["function"]["name"], json.loads("".join(c["function"]["arguments"] for c in calls))


def complete(backend: ChatCompletionsBackend, **extra: Any) -> dict[str, Any]:
    body = {"model": "m-1", "messages": [], "tools": TOOLS, **extra}
    status, ctype, raw = request(f"{backend.base_url}/chat/completions", body)
    assert (status, ctype) == (200, "application/json")
    result: dict[str, Any] = json.loads(raw)
    return result


def test_say_streams_a_role_chunk_content_deltas_a_finish_and_usage() -> None:
    with ChatCompletionsBackend(SCENARIOS["say"]) as backend:
        chunks = stream(backend)
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert len({c["id"] for c in chunks}) == 1 and {c["model"] for c in chunks} == {"m-1"}
    got = deltas(chunks)
    assert got[0] == {"role": "assistant", "content": ""}
    assert [d["content"] for d in got[1:-1]] == ["Hello from", " the scrip", "ted model."]
    assert got[-1] == {} and chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["prompt_tokens"] == 100
    assert chunks[-1]["usage"]["total_tokens"] == 120


def test_no_usage_chunk_unless_asked() -> None:
    with ChatCompletionsBackend(SCENARIOS["say"]) as backend:
        chunks = stream(backend, usage=False)
    assert all(c["choices"] and "usage" not in c for c in chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_think_streams_reasoning_content_before_the_answer() -> None:
    with ChatCompletionsBackend(SCENARIOS["think"]) as backend:
        chunks = stream(backend)
    got = deltas(chunks)
    reasoning = [d["reasoning_content"] for d in got if "reasoning_content" in d]
    content = [d["content"] for d in got[1:] if "content" in d]
    assert "".join(reasoning) == "Let me consider the question." and "".join(content) == "Thought it through."
    last_reasoning = max(i for i, d in enumerate(got) if "reasoning_content" in d)
    assert last_reasoning < min(i for i, d in enumerate(got[1:], 1) if "content" in d)
    assert chunks[-1]["usage"]["completion_tokens_details"]["reasoning_tokens"] == 5


def test_tool_steps_stream_one_function_call_each_with_absolute_paths_then_finish(tmp_path: Path) -> None:
    with ChatCompletionsBackend(SCENARIOS["tools"], cwd=tmp_path) as backend:
        played = [stream(backend) for _ in range(4)]
        final = stream(backend)
        after = stream(backend)
        assert len(backend.requests) == 6
    assert [tool_call_of(chunks) for chunks in played] == [
        ("shell", {"command": "echo harness-ok"}),
        ("read_file", {"path": f"{tmp_path}/notes.txt"}),
        ("edit_file", {"path": f"{tmp_path}/notes.txt", "old_string": "alpha", "new_string": "beta"}),
        ("write_file", {"path": f"{tmp_path}/new.txt", "content": "fresh\n"}),
    ]
    assert all(chunks[-2]["choices"][0]["finish_reason"] == "tool_calls" for chunks in played)
    assert len({deltas(chunks)[1]["tool_calls"][0]["id"] for chunks in played}) == 4  # one id per call
    assert "".join(d.get("content", "") for d in deltas(final)) == "All four tools ran."
    assert "".join(d.get("content", "") for d in deltas(after)) == FINISHED_TEXT


def test_paths_stay_relative_without_a_cwd_and_a_dialect_may_learn_it() -> None:
    with ChatCompletionsBackend(Scenario("r", (ReadFile("a.txt"),))) as backend:
        assert tool_call_of(stream(backend)) == ("read_file", {"path": "a.txt"})

    class Learns(ChatDialect):
        def find_cwd(self, body: Mapping[str, Any]) -> str | None:
            return "/work/here"

    with ChatCompletionsBackend(Scenario("r", (ReadFile("a.txt"),)), dialect=Learns()) as backend:
        assert tool_call_of(stream(backend)) == ("read_file", {"path": "/work/here/a.txt"})


def test_a_dialect_names_the_tools(tmp_path: Path) -> None:
    class MyTools(ChatDialect):
        def read_file(self, step: ReadFile, cwd: str | None) -> FunctionCall:
            return FunctionCall("view", {"file": self.path(step.path, cwd)})

    with ChatCompletionsBackend(SCENARIOS["tools"], cwd=tmp_path, dialect=MyTools()) as backend:
        assert tool_call_of(stream(backend))[0] == "shell"
        assert tool_call_of(stream(backend)) == ("view", {"file": f"{tmp_path}/notes.txt"})


def test_a_non_streaming_call_gets_a_whole_completion(tmp_path: Path) -> None:
    scenario = Scenario("n", (*SCENARIOS["think"].steps, *SCENARIOS["tools"].steps[:1]))
    with ChatCompletionsBackend(scenario, cwd=tmp_path) as backend:
        said = complete(backend)
        called = complete(backend)
    assert said["object"] == "chat.completion" and said["model"] == "m-1"
    assert said["choices"][0]["message"] == {
        "role": "assistant", "content": "Thought it through.", "reasoning_content": "Let me consider the question."
    }
    assert said["choices"][0]["finish_reason"] == "stop" and said["usage"]["prompt_tokens"] == 100
    message = called["choices"][0]["message"]
    assert message["content"] is None and called["choices"][0]["finish_reason"] == "tool_calls"
    assert [(c["type"], c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message["tool_calls"]] \
        == [("function", "shell", {"command": "echo harness-ok"})]


@pytest.mark.parametrize(
    ("status", "kind", "code"),
    [(401, "invalid_request_error", "invalid_api_key"), (429, "requests", "rate_limit_exceeded"),
     (500, "server_error", None)],
)
def test_fail_answers_the_status_with_an_openai_error(status: int, kind: str, code: str | None) -> None:
    with ChatCompletionsBackend(Scenario("f", (Fail(status, "scripted failure"),))) as backend:
        got, ctype, raw = request(f"{backend.base_url}/chat/completions", {"stream": True, "messages": []})
        again = request(f"{backend.base_url}/chat/completions", {"stream": False, "messages": []})[0]
    assert (got, ctype, again) == (status, "application/json", status)  # a trailing Fail stays down
    assert json.loads(raw) == {"error": {"message": "scripted failure", "type": kind, "param": None, "code": code}}


class SideCalls(ChatDialect):
    """Turns carry tools; a bare call is a side call, one forcing a schema tool gets a call to it."""

    def is_turn(self, body: Mapping[str, Any]) -> bool:
        return bool(body.get("tools")) and body.get("tool_choice") != "required"

    def side_reply(self, body: Mapping[str, Any]) -> str | FunctionCall:
        if body.get("tool_choice") == "required":
            return FunctionCall("answer", {"ok": True})
        return super().side_reply(body)


def test_side_calls_are_answered_without_consuming_a_step() -> None:
    with ChatCompletionsBackend(SCENARIOS["say"], dialect=SideCalls()) as backend:
        side = stream(backend, tools=[])
        forced = complete(backend, tool_choice="required")
        turn = stream(backend)
        assert [e.turn for e in backend.exchanges] == [False, False, True] and len(backend.requests) == 1
    assert "".join(d.get("content", "") for d in deltas(side)) == SIDE_TEXT
    call = forced["choices"][0]["message"]["tool_calls"][0]
    assert (call["function"]["name"], json.loads(call["function"]["arguments"])) == ("answer", {"ok": True})
    assert forced["choices"][0]["finish_reason"] == "tool_calls"
    assert "".join(d.get("content", "") for d in deltas(turn)) == "Hello from the scripted model."


def test_models_lists_the_default_and_every_requested_model_and_other_paths_are_404() -> None:
    with ChatCompletionsBackend(SCENARIOS["say"]) as backend:
        stream(backend, model="other-model")
        status, _, raw = request(f"{backend.base_url}/models")
        one = json.loads(request(f"{backend.base_url}/models/x-1")[2])
        missing = request(f"{backend.base_url}/embeddings", {"input": "x"})[0]
        assert [e.turn for e in backend.exchanges] == [True, False, False, False]
    assert status == 200 and [m["id"] for m in json.loads(raw)["data"]] == ["scripted-model", "other-model"]
    assert one["id"] == "x-1" and one["object"] == "model" and missing == 404


def test_prompts_are_the_user_messages() -> None:
    backend = ChatCompletionsBackend(SCENARIOS["say"])
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "a"},
                {"role": "assistant", "tool_calls": []}, {"role": "tool", "content": "r"},
                {"role": "user", "content": "b"}]
    assert backend.prompts_in({"messages": messages}) == 2 and backend.prompts_in({}) == 0
    backend.stop()


def _read_first_frame_then_rest(url: str, body: dict[str, Any], got: list[bytes], started: threading.Event) -> None:
    req = urllib.request.Request(url, data=json.dumps(body).encode())
    with urllib.request.urlopen(req, timeout=30) as resp:
        got.append(resp.readline())
        started.set()
        got.append(resp.read())


def test_stop_releases_a_stalled_stream_at_once() -> None:
    backend = ChatCompletionsBackend(Scenario("s", (Stall(),)))
    backend.start()
    got: list[bytes] = []
    started = threading.Event()
    reader = threading.Thread(
        target=_read_first_frame_then_rest,
        args=(f"{backend.base_url}/chat/completions", {"stream": True, "messages": []}, got, started),
    )
    reader.start()
    assert started.wait(5)
    assert json.loads(got[0][len(b"data: "):])["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    t0 = time.monotonic()
    backend.stop()
    reader.join(5)
    assert not reader.is_alive() and time.monotonic() - t0 < 2
    assert b"finish_reason\":\"stop" not in got[1] and b"[DONE]" not in got[1]


def test_a_stalled_non_streaming_call_gets_no_status_line() -> None:
    with ChatCompletionsBackend(Scenario("s", (Stall(0.2),))) as backend:
        t0 = time.monotonic()
        with pytest.raises(OSError):  # the connection closes without a response
            request(f"{backend.base_url}/chat/completions", {"messages": []})
        assert time.monotonic() - t0 >= 0.2


def test_slow_say_spaces_its_chunks_and_take_long_delays_the_answer() -> None:
    scenario = Scenario("slow", (TakeLong(0.2), Say("abcd", chunks=2, delay=0.2)))
    with ChatCompletionsBackend(scenario) as backend:
        t0 = time.monotonic()
        chunks = stream(backend)
        elapsed = time.monotonic() - t0
    assert [d["content"] for d in deltas(chunks)[1:-1]] == ["ab", "cd"]
    assert elapsed >= 0.4
