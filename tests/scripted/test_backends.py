"""Scripted model backends over plain HTTP (urllib): SSE framing, step sequencing, errors, stop, the default
tool dialects and custom ones, and a backend for another API written from the exported names. No CLIs; what a
particular agent's dialect sends is tested with its provider."""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness_core.scripted.backends import (
    FINISHED_TEXT,
    SIDE_TEXT,
    ChatCompletionsBackend,
    FunctionCall,
    Handler,
    MessagesBackend,
    MessagesDialect,
    ResponsesBackend,
    ResponsesDialect,
    ResponsesToolCall,
    ScriptedBackend,
    ToolUse,
    Turn,
    apply_patch_text,
    split_chunks,
)
from harness_core.scripted.scenarios import (
    SCENARIOS,
    EditFile,
    Fail,
    ReadFile,
    RunCommand,
    Say,
    Scenario,
    Stall,
    TakeLong,
    WriteFile,
)

TOOLS = [{"type": "bash_20250124", "name": "bash"}]
EDITOR = "str_replace_based_edit_tool"


def post(url: str, body: dict[str, Any], timeout: float = 5) -> tuple[int, str, bytes]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.headers["Content-Type"], resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers["Content-Type"], err.read()


def frames(raw: bytes) -> list[dict[str, str]]:
    """The fields of each SSE frame (`event`, `data`)."""
    assert raw.endswith(b"\n\n")
    return [
        dict(line.split(": ", 1) for line in frame.split("\n"))
        for frame in raw.decode().split("\n\n")
        if frame.strip()
    ]


def sse(raw: bytes) -> list[dict[str, Any]]:
    """Parse named SSE frames; check each `event:` name matches the data's `type`."""
    events = []
    for fields in frames(raw):
        data = json.loads(fields["data"])
        assert fields["event"] == data["type"]
        events.append(data)
    return events


def responses_turn(backend: ResponsesBackend) -> list[dict[str, Any]]:
    status, ctype, raw = post(
        f"{backend.base_url}/responses", {"model": "gpt-5.5", "stream": True, "input": []}
    )
    assert (status, ctype) == (200, "text/event-stream")
    return sse(raw)


def items(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["item"] for e in events if e["type"] == "response.output_item.done"]


def messages_turn(backend: MessagesBackend, stream: bool = True, **extra: Any) -> Any:
    body = {"model": "claude-sonnet-4-5", "stream": stream, "tools": TOOLS, "messages": [], **extra}
    status, _, raw = post(f"{backend.url}/v1/messages?beta=true", body)
    assert status == 200
    return sse(raw) if stream else json.loads(raw)


# -- Responses ----------------------------------------------------------------------------------------


def test_responses_say_streams_deltas_then_the_item_then_completed() -> None:
    with ResponsesBackend(SCENARIOS["say"]) as backend:
        events = responses_turn(backend)
    types = [e["type"] for e in events]
    assert types[0] == "response.created" and types[-1] == "response.completed"
    deltas = [e["delta"] for e in events if e["type"] == "response.output_text.delta"]
    assert len(deltas) == 3 and "".join(deltas) == "Hello from the scripted model."
    assert types.index("response.output_text.delta") < types.index("response.output_item.done")
    (message,) = items(events)
    assert message["content"][0]["text"] == "Hello from the scripted model."
    completed = events[-1]["response"]
    assert completed["id"] and completed["usage"]["input_tokens"] == 100
    assert completed["usage"]["output_tokens"] == 20


def test_responses_tools_play_one_step_per_request_then_finish(tmp_path: Any) -> None:
    (tmp_path / "notes.txt").write_text("alpha\n")
    with ResponsesBackend(SCENARIOS["tools"], cwd=tmp_path) as backend:
        played = [items(responses_turn(backend))[0] for _ in range(6)]
        assert len(backend.requests) == 6 and backend.remaining == 0
    shell, read, edit, write, say, finished = played
    assert (shell["type"], shell["name"], json.loads(shell["arguments"])) == (
        "function_call",
        "exec_command",
        {"cmd": "echo harness-ok", "yield_time_ms": 3_600_000},  # the tool waits for the command to end
    )
    assert json.loads(read["arguments"]) == {"cmd": "cat notes.txt"}
    assert (edit["type"], edit["name"]) == ("custom_tool_call", "apply_patch")
    assert edit["input"] == "*** Begin Patch\n*** Update File: notes.txt\n@@\n-alpha\n+beta\n*** End Patch\n"
    assert write["input"] == "*** Begin Patch\n*** Add File: new.txt\n+fresh\n*** End Patch\n"
    assert len({i["call_id"] for i in (shell, read, edit, write)}) == 4
    assert say["content"][0]["text"] == "All four tools ran."
    assert finished["content"][0]["text"] == FINISHED_TEXT


def test_responses_usage_grows_per_request() -> None:
    with ResponsesBackend(SCENARIOS["say"]) as backend:
        usages = [responses_turn(backend)[-1]["response"]["usage"]["input_tokens"] for _ in range(3)]
    assert usages == [100, 110, 120]


def test_responses_think_attaches_to_the_next_step() -> None:
    with ResponsesBackend(SCENARIOS["think"]) as backend:
        events = responses_turn(backend)
    reasoning, message = items(events)
    assert reasoning["summary"][0]["text"] == "Let me consider the question."
    summary = [e["delta"] for e in events if e["type"] == "response.reasoning_summary_text.delta"]
    assert "".join(summary) == "Let me consider the question."
    assert message["content"][0]["text"] == "Thought it through."


@pytest.mark.parametrize(
    ("status", "code"), [(500, None), (401, "invalid_api_key"), (429, "rate_limit_exceeded")]
)
def test_responses_fail_answers_the_status_with_an_openai_error(status: int, code: str | None) -> None:
    with ResponsesBackend(Scenario("f", (Fail(status, "boom"),))) as backend:
        for _ in range(2):  # a trailing Fail keeps failing: retries fail too
            got, ctype, raw = post(f"{backend.base_url}/responses", {"stream": True})
            assert (got, ctype) == (status, "application/json")
            error = json.loads(raw)["error"]
            assert error["message"] == "boom" and error["code"] == code and error["type"]


def test_fail_then_say_recovers() -> None:
    with ResponsesBackend(Scenario("f", (Fail(500), Say("ok")))) as backend:
        assert post(f"{backend.base_url}/responses", {})[0] == 500
        assert items(responses_turn(backend))[0]["content"][0]["text"] == "ok"


def test_apply_patch_edit_of_part_of_a_line_uses_the_whole_line() -> None:
    step = EditFile("a.py", old="1", new="2")
    patch = apply_patch_text(step, "x = 1\ny = 3\n")
    assert patch == "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n"
    assert apply_patch_text(WriteFile("b", "one\ntwo")).count("\n+") == 2


def test_responses_default_dialect_quotes_a_path_for_cat() -> None:
    call = ResponsesDialect().tool_call(ReadFile("my notes.txt"), None)
    assert call == FunctionCall("exec_command", {"cmd": "cat 'my notes.txt'"})


def test_responses_name_the_requested_model_or_the_default() -> None:
    with ResponsesBackend(Scenario("two", (Say("a"), Say("b")))) as backend:
        _, _, raw = post(f"{backend.base_url}/responses", {"model": "my-model", "stream": True})
        named = sse(raw)
        unnamed = responses_turn_without_model(backend)
    assert {e["response"]["model"] for e in named if "response" in e} == {"my-model"}
    assert {e["response"]["model"] for e in unnamed if "response" in e} == {ResponsesBackend.default_model}


def responses_turn_without_model(backend: ResponsesBackend) -> list[dict[str, Any]]:
    _, _, raw = post(f"{backend.base_url}/responses", {"stream": True, "input": []})
    return sse(raw)


class ReadWithAFunction(ResponsesDialect):
    """An agent with its own `read_file` function tool; everything else as the default."""

    def read_file(self, step: ReadFile, cwd: Path | None) -> ResponsesToolCall:
        return FunctionCall("read_file", {"path": step.path, "cwd": str(cwd)})


def test_responses_custom_dialect_overrides_one_tool(tmp_path: Path) -> None:
    scenario = Scenario("r", (ReadFile("a.txt"), RunCommand("ls")))
    with ResponsesBackend(scenario, cwd=tmp_path, dialect=ReadWithAFunction()) as backend:
        read, run = (items(responses_turn(backend))[0] for _ in range(2))
    assert (read["type"], read["name"]) == ("function_call", "read_file")
    assert json.loads(read["arguments"]) == {"path": "a.txt", "cwd": str(tmp_path)}
    assert (run["name"], json.loads(run["arguments"])) == ("exec_command", {"cmd": "ls", "yield_time_ms": 3_600_000})


# -- Messages -----------------------------------------------------------------------------------------


def test_messages_tools_stream_tool_use_with_split_json_and_absolute_paths(tmp_path: Any) -> None:
    with MessagesBackend(SCENARIOS["tools"], cwd=tmp_path) as backend:
        turns = [messages_turn(backend) for _ in range(5)]
    calls = []
    for events in turns[:4]:
        types = [e["type"] for e in events]
        assert types[0] == "message_start" and types[-2:] == ["message_delta", "message_stop"]
        assert events[0]["message"]["id"].startswith("msg_")
        start = next(e for e in events if e["type"] == "content_block_start")["content_block"]
        parts = [e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta"]
        assert len(parts) >= 2 and start["input"] == {} and start["id"].startswith("toolu_")
        assert events[-2]["delta"]["stop_reason"] == "tool_use"
        calls.append((start["name"], json.loads("".join(parts))))
    notes = str(tmp_path / "notes.txt")
    assert calls == [
        ("bash", {"command": "echo harness-ok"}),
        (EDITOR, {"command": "view", "path": notes}),
        (EDITOR, {"command": "str_replace", "path": notes, "old_str": "alpha", "new_str": "beta"}),
        (EDITOR, {"command": "create", "path": str(tmp_path / "new.txt"), "file_text": "fresh\n"}),
    ]
    text = [e["delta"]["text"] for e in turns[4] if e["type"] == "content_block_delta"]
    assert "".join(text) == "All four tools ran." and turns[4][-2]["delta"]["stop_reason"] == "end_turn"


def test_messages_default_dialect_keeps_relative_paths_without_a_cwd() -> None:
    assert MessagesDialect().tool_use(ReadFile("a/b.txt"), None) == ToolUse(
        EDITOR, {"command": "view", "path": "a/b.txt"}
    )
    assert MessagesDialect().tool_use(ReadFile("/abs.txt"), "/ws").input["path"] == "/abs.txt"


def test_messages_think_streams_thinking_then_text() -> None:
    with MessagesBackend(SCENARIOS["think"]) as backend:
        events = messages_turn(backend)
    starts = [e["content_block"]["type"] for e in events if e["type"] == "content_block_start"]
    assert starts == ["thinking", "text"]
    deltas = [e["delta"] for e in events if e["type"] == "content_block_delta" and e["index"] == 0]
    assert "".join(d.get("thinking", "") for d in deltas) == "Let me consider the question."
    assert deltas[-1]["type"] == "signature_delta"


def test_messages_non_streaming_request_gets_a_json_message() -> None:
    with MessagesBackend(SCENARIOS["tools"], cwd="/ws") as backend:
        message = messages_turn(backend, stream=False)
    assert message["type"] == "message" and message["stop_reason"] == "tool_use"
    assert message["content"][0]["name"] == "bash" and message["model"] == "claude-sonnet-4-5"


def test_messages_count_tokens_is_a_side_request_and_every_other_call_a_turn() -> None:
    with MessagesBackend(SCENARIOS["say"]) as backend:
        status, _, raw = post(f"{backend.url}/v1/messages/count_tokens?beta=true", {"messages": []})
        assert status == 200 and json.loads(raw)["input_tokens"] > 0
        assert backend.remaining == 1 and backend.requests == []
        body = {"model": "m", "stream": False, "messages": [], "max_tokens": 50}  # no tools: still a turn
        status, _, raw = post(f"{backend.url}/v1/messages", body)
        assert status == 200 and json.loads(raw)["content"][0]["text"] == "Hello from the scripted model."
        assert backend.remaining == 0 and backend.requests == [body]
        assert [e.turn for e in backend.exchanges] == [False, True]


class TitledAgent(MessagesDialect):
    """An agent that asks for titles without tools and states its directory as `cwd=...` in its system prompt."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def is_turn(self, body: Mapping[str, Any]) -> bool:
        return "tools" in body

    def find_cwd(self, body: Mapping[str, Any]) -> str | None:
        self.asked.append(str(body.get("system")))
        system = str(body.get("system") or "")
        return system.removeprefix("cwd=") if system.startswith("cwd=") else None


def test_messages_dialect_decides_side_calls_and_learns_the_cwd() -> None:
    dialect = TitledAgent()
    scenario = Scenario("r", (ReadFile("a.txt"), ReadFile("b.txt")))
    with MessagesBackend(scenario, dialect=dialect) as backend:
        status, _, raw = post(f"{backend.url}/v1/messages", {"messages": [], "max_tokens": 20})
        assert status == 200 and json.loads(raw)["content"] == [{"type": "text", "text": SIDE_TEXT}]
        first = messages_turn(backend, stream=False, system="no directory here")
        second = messages_turn(backend, stream=False, system="cwd=/work/x")
        third = messages_turn(backend, stream=False, system="cwd=/elsewhere")
        assert backend.cwd == "/work/x" and len(backend.requests) == 3
    assert first["content"][0]["input"]["path"] == "a.txt"  # not known yet: relative
    assert second["content"][0]["input"]["path"] == "/work/x/b.txt"
    assert third["content"][0]["text"] == FINISHED_TEXT
    assert dialect.asked == ["no directory here", "cwd=/work/x"]  # not asked again once known


@pytest.mark.parametrize(
    ("status", "kind"),
    [(500, "api_error"), (401, "authentication_error"), (429, "rate_limit_error"), (529, "overloaded_error")],
)
def test_messages_fail_answers_an_anthropic_error(status: int, kind: str) -> None:
    with MessagesBackend(Scenario("f", (Fail(status, "nope"),))) as backend:
        got, _, raw = post(f"{backend.url}/v1/messages?beta=true", {"stream": True, "tools": TOOLS})
    assert got == status
    assert json.loads(raw) == {"type": "error", "error": {"type": kind, "message": "nope"}}


# -- a backend for another model API, from the exported names -----------------------------------------


class ChunkBackend(ScriptedBackend):
    """A Chat-Completions-shaped stream (unnamed `data:` frames ending in `[DONE]`), as a third party would
    write it: only names exported by `harness_core.scripted.backends`."""

    turn_path = "/v1/chat/completions"

    def answer_turn(self, http: Handler, turn: Turn, body: dict[str, Any]) -> None:
        step = turn.step
        if isinstance(step, Fail):
            http.send_json(step.status, {"error": {"message": step.message}})
            return
        text = step.text if isinstance(step, Say) else FINISHED_TEXT
        http.start_sse()
        for piece in split_chunks(text, 2):
            http.send_data({"id": f"c{turn.index}", "choices": [{"delta": {"content": piece}}]})
        http.send_event({"type": "note"}, name="ping")
        http.send_data("[DONE]")


def test_a_backend_for_another_api_uses_unnamed_frames() -> None:
    with ChunkBackend(Scenario("c", (Say("abcd"), Fail(429)))) as backend:
        status, ctype, raw = post(f"{backend.url}/v1/chat/completions", {"messages": []})
        assert (status, ctype) == (200, "text/event-stream")
        assert post(f"{backend.url}/v1/chat/completions", {"messages": []})[0] == 429
        assert post(f"{backend.url}/v1/other", {})[0] == 404  # not a turn: answered on the side
        assert [e.turn for e in backend.exchanges] == [True, True, False]
    got = frames(raw)
    assert [f.get("event") for f in got] == [None, None, "ping", None]
    assert [json.loads(f["data"])["choices"][0]["delta"]["content"] for f in got[:2]] == ["ab", "cd"]
    assert got[2]["data"] == '{"type":"note"}' and got[3] == {"data": "[DONE]"}


# -- lifecycle ----------------------------------------------------------------------------------------


def _read_first_line_then_rest(
    url: str, body: dict[str, Any], got: list[bytes], started: threading.Event
) -> None:
    req = urllib.request.Request(url, data=json.dumps(body).encode())
    with urllib.request.urlopen(req, timeout=30) as resp:
        got.append(resp.readline())
        started.set()
        got.append(resp.read())


@pytest.mark.parametrize("kind", ["responses", "messages"])
def test_stop_releases_a_stalled_stream_at_once(kind: str) -> None:
    backend = (ResponsesBackend if kind == "responses" else MessagesBackend)(Scenario("s", (Stall(),)))
    backend.start()
    path = "/v1/responses" if kind == "responses" else "/v1/messages"
    got: list[bytes] = []
    started = threading.Event()
    reader = threading.Thread(
        target=_read_first_line_then_rest,
        args=(backend.url + path, {"stream": True, "tools": TOOLS}, got, started),
    )
    reader.start()
    assert started.wait(5)
    assert got[0].startswith(b"event: ")  # headers and one event arrived, then nothing
    t0 = time.monotonic()
    backend.stop()
    reader.join(5)
    assert not reader.is_alive() and time.monotonic() - t0 < 2
    assert b"completed" not in got[1] and b"message_stop" not in got[1]


def test_stall_with_seconds_ends_the_stream_without_completing() -> None:
    with ResponsesBackend(Scenario("s", (Stall(0.2),))) as backend:
        events = responses_turn(backend)
    assert [e["type"] for e in events] == ["response.created"]


def test_a_trailing_stall_keeps_stalling_responses() -> None:
    with ResponsesBackend(Scenario("s", (Stall(0.1),))) as backend:
        for _ in range(3):  # a hung API stays hung: retries never reach FINISHED_TEXT
            assert [e["type"] for e in responses_turn(backend)] == ["response.created"]
        assert len(backend.requests) == 3


def test_a_trailing_stall_keeps_stalling_messages_streamed_and_not() -> None:
    # an agent may retry a stalled stream without streaming: that retry must hang too
    with MessagesBackend(Scenario("s", (Stall(0.2),))) as backend:
        assert [e["type"] for e in messages_turn(backend)] == ["message_start"]
        t0 = time.monotonic()
        with pytest.raises(OSError):  # no status line at all, then the connection closes
            messages_turn(backend, stream=False)
        assert time.monotonic() - t0 >= 0.2
        assert [e["type"] for e in messages_turn(backend)] == ["message_start"]
        assert len(backend.requests) == 3


def test_a_stall_that_is_not_last_is_played_once() -> None:
    with MessagesBackend(Scenario("s", (Stall(0.1), Say("recovered", chunks=1)))) as backend:
        assert [e["type"] for e in messages_turn(backend)] == ["message_start"]
        assert messages_turn(backend, stream=False)["content"][0]["text"] == "recovered"
        assert messages_turn(backend, stream=False)["content"][0]["text"] == FINISHED_TEXT


def test_stop_releases_a_stalled_non_streaming_request_at_once() -> None:
    backend = MessagesBackend(SCENARIOS["stall"]).start()
    errors: list[BaseException] = []

    def call() -> None:
        try:
            messages_turn(backend, stream=False)
        except OSError as err:
            errors.append(err)

    caller = threading.Thread(target=call)
    caller.start()
    deadline = time.monotonic() + 5
    while not backend.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    assert backend.requests
    t0 = time.monotonic()
    backend.stop()
    caller.join(5)
    assert not caller.is_alive() and time.monotonic() - t0 < 2 and errors


def test_take_long_delays_the_next_step_and_stop_interrupts_it() -> None:
    with ResponsesBackend(Scenario("t", (TakeLong(0.3), Say("late")))) as backend:
        t0 = time.monotonic()
        assert items(responses_turn(backend))[0]["content"][0]["text"] == "late"
        assert time.monotonic() - t0 >= 0.3
    backend = ResponsesBackend(Scenario("t", (TakeLong(60), Say("never")))).start()
    errors: list[BaseException] = []

    def call() -> None:
        try:
            post(f"{backend.base_url}/responses", {}, timeout=10)
        except OSError as err:  # the connection closes without an answer
            errors.append(err)

    caller = threading.Thread(target=call)
    caller.start()
    deadline = time.monotonic() + 5
    while not backend.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    t0 = time.monotonic()
    backend.stop()
    caller.join(5)
    assert not caller.is_alive() and time.monotonic() - t0 < 2 and errors


def test_slow_say_spaces_its_chunks() -> None:
    with ResponsesBackend(Scenario("slow", (Say("abcd", chunks=4, delay=0.1),))) as backend:
        t0 = time.monotonic()
        events = responses_turn(backend)
    assert time.monotonic() - t0 >= 0.3
    assert [e["delta"] for e in events if e["type"] == "response.output_text.delta"] == list("abcd")


def test_split_chunks_keeps_the_text() -> None:
    assert split_chunks("abcdefg", 3) == ["abc", "de", "fg"]
    assert split_chunks("ab", 5) == ["a", "b"]
    assert split_chunks("", 3) == [""]


def test_lifecycle_errors_and_idempotent_stop() -> None:
    backend = MessagesBackend(SCENARIOS["say"])
    backend.start()
    with pytest.raises(RuntimeError):
        backend.start()
    backend.stop()
    backend.stop()
    assert backend.stopped
    with pytest.raises(RuntimeError, match="stopped"):
        _ = backend.url
    with pytest.raises(RuntimeError, match="stopped"):
        backend.start()


def test_url_is_known_before_start_and_served_after() -> None:
    # offline setups build the CLI's environment (which names the URL) before the caller starts the backend
    backend = MessagesBackend(SCENARIOS["say"])
    url = backend.url
    assert url.startswith("http://127.0.0.1:") and backend.port > 0
    with backend:
        assert backend.url == url
        message = messages_turn(backend, stream=False)
    assert message["content"][0]["text"] == "Hello from the scripted model."


def test_a_bound_backend_that_never_started_stops_at_once() -> None:
    backend = ResponsesBackend(SCENARIOS["say"])
    _ = backend.port
    t0 = time.monotonic()
    backend.stop()
    assert time.monotonic() - t0 < 1 and backend.stopped


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
def test_usable_from_async_code(anyio_backend: str) -> None:
    async def main() -> dict[str, Any]:
        with MessagesBackend(SCENARIOS["say"]) as backend:
            with anyio.fail_after(10):
                return await anyio.to_thread.run_sync(lambda: messages_turn(backend, stream=False))

    message = anyio.run(main, backend=anyio_backend)
    assert message["content"] == [{"type": "text", "text": "Hello from the scripted model."}]


def test_chunked_request_bodies_are_read() -> None:
    with ResponsesBackend(SCENARIOS["say"]) as backend:
        conn = http.client.HTTPConnection("127.0.0.1", backend.port, timeout=5)
        body = [b'{"model": "gpt-5.5", ', b'"input": []}']
        conn.request("POST", "/v1/responses", body=iter(body), encode_chunked=True)
        resp = conn.getresponse()
        assert resp.status == 200 and sse(resp.read())[-1]["type"] == "response.completed"
        conn.close()
        assert backend.requests == [{"model": "gpt-5.5", "input": []}]


# -- when to retry: the headers of an error to be retried -------------------------------------------------


def _error_headers(url: str) -> dict[str, str]:
    req = urllib.request.Request(url, data=json.dumps({"stream": True}).encode(),
                                 headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(req, timeout=5)
    return {k.lower(): v for k, v in caught.value.headers.items()}


@pytest.mark.parametrize("status", [429, 500, 503, 401])
def test_an_error_to_be_retried_says_when_as_the_real_apis_do(status: int) -> None:
    """A 429 or a 5xx carries `retry-after` (whole seconds) and `retry-after-ms` (what the OpenAI and Anthropic SDKs
    and the agents built on them read first), so an agent that honours them retries at once instead of backing off
    for a minute; a 401 is not to be retried and says nothing of it."""
    scenario = Scenario("f", (Fail(status, "nope"),))
    for backend, path in ((ResponsesBackend(scenario), "/v1/responses"), (MessagesBackend(scenario), "/v1/messages"),
                          (ChatCompletionsBackend(scenario), "/v1/chat/completions")):
        with backend:
            headers = _error_headers(f"{backend.url}{path}")
        retried = {k: headers.get(k) for k in ("retry-after", "retry-after-ms")}
        assert retried == ({"retry-after": "1", "retry-after-ms": "50"} if status != 401 else
                           {"retry-after": None, "retry-after-ms": None}), (type(backend).__name__, headers)


def test_a_tool_the_request_does_not_offer_fails_every_retry_of_it() -> None:
    """An agent that sends a failed request again must fail the same way, not play the next step (trial 27,
    problem 9: a run "succeeded" with "The server said (no tool result)")."""
    with MessagesBackend(SCENARIOS["tools_echo"]) as backend:
        body = {"model": "m", "stream": False, "messages": [{"role": "user", "content": "go"}], "max_tokens": 50,
                "tools": TOOLS}
        for _ in range(3):
            status, _, raw = post(f"{backend.url}/v1/messages", body)
            message = json.loads(raw)["error"]["message"]
            assert status == 400 and "offers no MCP tool 'echo' of server 'everything'" in message
            assert "--mcp-server everything=COMMAND" in message and message.endswith("tools: bash")
        assert backend.remaining == 2  # the call and the answer after it: nothing was played
