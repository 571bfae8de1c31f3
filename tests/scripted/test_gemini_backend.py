"""The scripted Gemini API over plain HTTP (urllib): SSE chunks of `GenerateContentResponse`, thoughts, function
calls from the default and a custom dialect, Google error bodies, side calls answered without consuming a step,
non-streaming calls, token counting, the played-out answer, and stalls that end on `stop()`. No CLIs; what a
particular agent's dialect sends is tested with its provider."""

from __future__ import annotations

import contextlib
import http.client
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from harness_core.scripted.backends import FINISHED_TEXT, SIDE_TEXT, FunctionCall
from harness_core.scripted.backends.gemini import GeminiBackend, GeminiDialect, schema_instance
from harness_core.scripted.scenarios import SCENARIOS, EditFile, Fail, ReadFile, Say, Scenario, Stall, TakeLong

MODEL = "gemini-2.5-pro"
TOOLS = [{"functionDeclarations": [{"name": "run_command", "parameters": {"type": "object"}}]}]


@contextlib.contextmanager
def serving(backend: GeminiBackend) -> Iterator[GeminiBackend]:
    with backend:
        yield backend


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def post(url: str, body: Mapping[str, Any], timeout: float = 5) -> tuple[int, str, bytes]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json", "x-goog-api-key": "k"}
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.headers["Content-Type"], resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers["Content-Type"], err.read()


def stream(backend: GeminiBackend, model: str = MODEL, **body: Any) -> list[dict[str, Any]]:
    """One `:streamGenerateContent?alt=sse` call: the JSON of each unnamed `data:` frame."""
    payload = {"contents": [user("go")], "tools": TOOLS, **body}
    status, ctype, raw = post(f"{backend.url}/v1beta/models/{model}:streamGenerateContent?alt=sse", payload)
    assert (status, ctype) == (200, "text/event-stream")
    assert raw == b"" or raw.endswith(b"\n\n")
    frames = [frame for frame in raw.decode().split("\n\n") if frame.strip()]
    assert all(frame.startswith("data: ") and "\nevent:" not in frame for frame in frames)
    return [json.loads(frame[len("data: "):]) for frame in frames]


def parts(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [part for chunk in chunks for part in chunk["candidates"][0]["content"]["parts"]]


def generate(backend: GeminiBackend, body: Mapping[str, Any], model: str = MODEL) -> tuple[int, Any]:
    status, ctype, raw = post(f"{backend.url}/v1beta/models/{model}:generateContent", body)
    assert ctype == "application/json"
    return status, json.loads(raw)


def test_say_streams_text_chunks_and_ends_with_stop_and_usage() -> None:
    with serving(GeminiBackend(SCENARIOS["say"])) as backend:
        chunks = stream(backend)
    assert [p["text"] for p in parts(chunks)] == ["Hello from", " the scrip", "ted model."]
    assert all(c["candidates"][0]["content"]["role"] == "model" for c in chunks)
    assert [c["candidates"][0].get("finishReason") for c in chunks] == [None, None, "STOP"]
    usage = chunks[-1]["usageMetadata"]
    assert usage == {"promptTokenCount": 100, "candidatesTokenCount": 20, "totalTokenCount": 120}
    assert chunks[-1]["modelVersion"] == MODEL and chunks[-1]["responseId"]
    assert backend.requests[0]["model"] == MODEL, "the path's model is recorded as the request's, as other APIs send it"


def test_think_is_a_thought_part_before_the_answer() -> None:
    with serving(GeminiBackend(SCENARIOS["think"])) as backend:
        chunks = stream(backend)
    played = parts(chunks)
    assert played[0] == {"text": "Let me consider the question.", "thought": True}
    assert "".join(p["text"] for p in played[1:] if not p.get("thought")) == "Thought it through."
    assert chunks[-1]["usageMetadata"]["thoughtsTokenCount"] == 5


def test_tool_steps_are_function_calls_with_absolute_paths_then_the_scenario_finishes(tmp_path: Path) -> None:
    with serving(GeminiBackend(SCENARIOS["tools"], cwd=tmp_path)) as backend:
        played = [parts(stream(backend)) for _ in range(6)]
        assert len(backend.requests) == 6 and backend.remaining == 0
    calls = [p[0]["functionCall"] for p in played[:4]]
    assert calls == [
        {"name": "run_command", "args": {"command": "echo harness-ok"}},
        {"name": "read_file", "args": {"path": f"{tmp_path}/notes.txt"}},
        {"name": "edit_file", "args": {"path": f"{tmp_path}/notes.txt", "old_text": "alpha", "new_text": "beta"}},
        {"name": "write_file", "args": {"path": f"{tmp_path}/new.txt", "content": "fresh\n"}},
    ]
    assert "".join(p["text"] for p in played[4]) == "All four tools ran."
    assert [p["text"] for p in played[5]] == [FINISHED_TEXT]


def test_usage_grows_per_turn() -> None:
    with serving(GeminiBackend(SCENARIOS["say"])) as backend:
        counts = [stream(backend)[-1]["usageMetadata"]["promptTokenCount"] for _ in range(3)]
    assert counts == [100, 110, 120]


def test_paths_stay_relative_without_a_cwd_and_a_custom_dialect_renames_a_tool() -> None:
    class Tools(GeminiDialect):
        def read_file(self, step: ReadFile, cwd: str | None) -> FunctionCall:
            return FunctionCall("view", {"file": self.path(step.path, cwd), "lines": 10})

    scenario = Scenario("s", (ReadFile("a.txt"), EditFile("a.txt", "x", "y")))
    with serving(GeminiBackend(scenario, dialect=Tools())) as backend:
        assert parts(stream(backend))[0]["functionCall"] == {"name": "view", "args": {"file": "a.txt", "lines": 10}}
        assert parts(stream(backend))[0]["functionCall"]["args"]["path"] == "a.txt"


@pytest.mark.parametrize(
    ("status", "google_status"), [(401, "UNAUTHENTICATED"), (429, "RESOURCE_EXHAUSTED"), (500, "INTERNAL")]
)
def test_fail_answers_the_status_with_a_google_error(status: int, google_status: str) -> None:
    with serving(GeminiBackend(Scenario("f", (Fail(status, "scripted failure"),)))) as backend:
        url = f"{backend.url}/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
        got, ctype, raw = post(url, {"contents": [user("go")]})
        assert (got, ctype) == (status, "application/json")
        assert json.loads(raw) == {"error": {"code": status, "message": "scripted failure", "status": google_status}}
        assert generate(backend, {"contents": [user("again")]})[0] == status  # a down API stays down


def test_fail_then_say_recovers() -> None:
    with serving(GeminiBackend(Scenario("f", (Fail(503), Say("back", chunks=1))))) as backend:
        assert generate(backend, {"contents": []})[1]["error"]["status"] == "UNAVAILABLE"
        assert [p["text"] for p in parts(stream(backend))] == ["back"]


def test_non_streaming_turn_gets_the_whole_response() -> None:
    with serving(GeminiBackend(SCENARIOS["think"])) as backend:
        status, response = generate(backend, {"contents": [user("go")]})
    assert status == 200
    candidate = response["candidates"][0]
    assert candidate["finishReason"] == "STOP"
    assert candidate["content"]["parts"] == [
        {"text": "Let me consider the question.", "thought": True},
        {"text": "Thought it through."},
    ]


def test_side_calls_and_count_tokens_do_not_consume_a_step() -> None:
    class Tools(GeminiDialect):
        def is_turn(self, body: Mapping[str, Any], model: str) -> bool:
            return "tools" in body and "lite" not in model

    schema = {
        "type": "OBJECT",
        "properties": {"reasoning": {"type": "STRING"}, "score": {"type": "INTEGER"}, "extra": {"type": "STRING"}},
        "required": ["reasoning", "score"],
    }
    with serving(GeminiBackend(SCENARIOS["say"], dialect=Tools())) as backend:
        asked = {"contents": [user("route")], "generationConfig": {"responseJsonSchema": schema}}
        status, routed = generate(backend, asked, model="tiny-lite")
        assert status == 200
        assert json.loads(routed["candidates"][0]["content"]["parts"][0]["text"]) == {"reasoning": "", "score": 1}
        _, titled = generate(backend, {"contents": [user("title")]})
        assert titled["candidates"][0]["content"]["parts"] == [{"text": SIDE_TEXT}]
        assert [p["text"] for p in parts(stream(backend, model="tiny-lite"))] == [SIDE_TEXT]
        counted = post(f"{backend.url}/v1beta/models/{MODEL}:countTokens", {"contents": [user("x")]})
        assert counted[0] == 200 and json.loads(counted[2]) == {"totalTokens": 100}
        assert backend.remaining == 1 and backend.requests == []
        assert "".join(p["text"] for p in parts(stream(backend))) == "Hello from the scripted model."
        assert [e.turn for e in backend.exchanges] == [False, False, False, False, True]


def test_the_dialect_learns_the_cwd_from_a_request() -> None:
    class Tools(GeminiDialect):
        def find_cwd(self, body: Mapping[str, Any]) -> str | None:
            return str(body.get("systemInstruction", {}).get("parts", [{}])[0].get("text") or "") or None

    with serving(GeminiBackend(Scenario("r", (ReadFile("a.txt"),)), dialect=Tools())) as backend:
        call = parts(stream(backend, systemInstruction={"parts": [{"text": "/work/dir"}]}))[0]["functionCall"]
    assert call["args"]["path"] == "/work/dir/a.txt" and backend.cwd == "/work/dir"


def test_other_paths_get_a_google_404() -> None:
    with serving(GeminiBackend(SCENARIOS["say"])) as backend:
        status, _, raw = post(f"{backend.url}/v1beta/files", {})
        assert status == 404 and json.loads(raw)["error"]["status"] == "NOT_FOUND"
        assert backend.remaining == 1


def test_a_later_prompt_replays_a_played_out_scenario_when_asked() -> None:
    backend = GeminiBackend(SCENARIOS["say"])
    backend.replay_each_prompt = True
    reply = {"role": "model", "parts": [{"text": "x"}]}
    tool_answer = {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}
    assert backend.prompts_in({"contents": [user("a"), reply, tool_answer, user("b")]}) == 2
    with serving(backend):
        assert "".join(p["text"] for p in parts(stream(backend))) == "Hello from the scripted model."
        second = stream(backend, contents=[user("go"), reply, user("more")])
        assert "".join(p["text"] for p in parts(second)) == "Hello from the scripted model."


def test_schema_instance_covers_the_shapes_side_calls_ask_for() -> None:
    assert schema_instance({"type": "object", "properties": {"next_speaker": {"type": "string",
                            "enum": ["user", "model"]}, "ok": {"type": "boolean"}}}) == {"next_speaker": "user",
                                                                                        "ok": False}
    assert schema_instance({"type": "ARRAY", "items": {"type": "NUMBER", "minimum": 3}, "minItems": 2}) == [3, 3]
    assert schema_instance({"anyOf": [{"type": "string"}, {"type": "null"}]}) == ""
    assert schema_instance({"type": ["integer", "null"]}) == 1
    assert schema_instance("not a schema") is None


def test_slow_say_spaces_its_chunks() -> None:
    with serving(GeminiBackend(Scenario("slow", (Say("abcd", chunks=4, delay=0.1),)))) as backend:
        t0 = time.monotonic()
        chunks = stream(backend)
    assert time.monotonic() - t0 >= 0.3
    assert [p["text"] for p in parts(chunks)] == list("abcd")


def test_a_trailing_stall_keeps_stalling_streamed_and_not() -> None:
    with serving(GeminiBackend(Scenario("s", (Stall(0.2),)))) as backend:
        assert stream(backend) == []  # headers, then nothing until the stall ends
        t0 = time.monotonic()
        with pytest.raises(OSError):  # no status line at all, then the connection closes
            generate(backend, {"contents": [user("go")]})
        assert time.monotonic() - t0 >= 0.2
        assert len(backend.requests) == 2


def _hold(backend: GeminiBackend, method: str, got: list[Any], answered: threading.Event) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", backend.port, timeout=10)
    try:
        conn.request("POST", f"/v1beta/models/{MODEL}:{method}", body=json.dumps({"contents": [user("go")]}))
        resp = conn.getresponse()
        got.append(resp.status)
        answered.set()
        got.append(resp.read())
    except OSError as err:
        got.append(err)
    finally:
        conn.close()


@pytest.mark.parametrize("method", ["streamGenerateContent?alt=sse", "generateContent"])
def test_stop_releases_a_stalled_call_at_once(method: str) -> None:
    backend = GeminiBackend(SCENARIOS["stall"]).start()
    got: list[Any] = []
    answered = threading.Event()
    caller = threading.Thread(target=_hold, args=(backend, method, got, answered))
    caller.start()
    deadline = time.monotonic() + 5
    while not backend.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    assert backend.requests
    if method.startswith("stream"):
        assert answered.wait(5) and got[0] == 200  # the stream started, and then nothing came
    t0 = time.monotonic()
    backend.stop()
    caller.join(5)
    assert not caller.is_alive() and time.monotonic() - t0 < 2
    assert got[-1] == b"" or isinstance(got[-1], OSError)


def test_stop_interrupts_a_take_long() -> None:
    backend = GeminiBackend(Scenario("t", (TakeLong(60), Say("never")))).start()
    got: list[Any] = []
    caller = threading.Thread(target=_hold, args=(backend, "generateContent", got, threading.Event()))
    caller.start()
    deadline = time.monotonic() + 5
    while not backend.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    t0 = time.monotonic()
    backend.stop()
    caller.join(5)
    assert not caller.is_alive() and time.monotonic() - t0 < 2 and isinstance(got[-1], OSError)
