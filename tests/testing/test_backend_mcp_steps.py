"""The scripted backends' tool steps in every model API: an MCP call found by name however the agent prefixes it,
the result it received quoted by `{tool_result}`, and the attachments a request carried reported exactly."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from harness_core.scripted.backends import (
    ChatCompletionsBackend,
    GeminiBackend,
    MessagesBackend,
    ResponsesBackend,
    http as backend_http,
)
from harness_core.scripted.inline import ScenarioSyntaxError, scenario_from_json, scenario_to_json
from harness_core.scripted.mcp_calls import find_mcp_tool
from harness_core.scripted.scenarios import SCENARIOS, CallMcpTool, ReportAttachments, Say, Scenario

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4  # 1032 bytes
PNG_B64 = base64.b64encode(PNG).decode()
PDF = b"%PDF-1.4\n" + b"x" * 91  # 100 bytes


def post(url: str, body: dict[str, Any]) -> bytes:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return bytes(response.read())


def frames(raw: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[5:]) for line in raw.decode().splitlines()
            if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]")]


def mcp_scenario() -> Scenario:
    return Scenario("t", (CallMcpTool("harness", "add", {"a": 2, "b": 3}), Say("The tool said {tool_result}.", 1)))


# --- finding the tool ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("names", "found"), [
    (["Bash", "mcp__harness__add", "mcp__other__add"], "mcp__harness__add"),
    (["shell", "harness__add"], "harness__add"),
    (["read_file", "mcp_harness_add"], "mcp_harness_add"),
    (["run_shell_command", "add"], "add"),  # a bare name, when no name carries the server
    (["add", "my-harness__add", "harness__add"], "harness__add"),
])
def test_the_tool_is_found_whatever_the_agent_prefixes_it_with(names: list[str], found: str) -> None:
    assert find_mcp_tool(names, "harness", "add") == found


def test_a_missing_or_ambiguous_tool_is_a_clear_error() -> None:
    with pytest.raises(LookupError, match=r"no MCP tool 'add' of server 'harness'; .*the request.s tools: Bash, Read$"):
        find_mcp_tool(["Bash", "Read"], "harness", "add")
    with pytest.raises(LookupError, match=r"ambiguous in the request.s tools: mcp__harness__add, harness\.add"):
        find_mcp_tool(["mcp__harness__add", "harness.add"], "harness", "add")
    with pytest.raises(LookupError, match="no MCP tool"):
        find_mcp_tool(["mcp__harness__adder", "readd"], "harness", "add")


def test_a_missing_tool_names_the_flag_that_gives_it_and_what_else_hides_it() -> None:
    with pytest.raises(LookupError) as missing:
        find_mcp_tool(["Bash"], "harness", "add")
    said = str(missing.value)
    assert "with `--tools` with a module that has a @tool named 'add'" in said and "--mcp-server" not in said
    assert "if given, the agent did not list it" in said  # `--tools` given, the tool deferred
    with pytest.raises(LookupError, match=r"with `--mcp-server ev=COMMAND`; if given") as other:
        find_mcp_tool(["Bash"], "ev", "echo")
    assert "--tools" not in str(other.value)


def test_a_tool_the_filter_left_out_says_so_rather_than_to_give_it() -> None:
    """Trial 27, problem 8: with `--disallowed-tools mcp:harness.add` the refusal said "give the agent the tool
    with `--tools`", which the user had done."""
    with pytest.raises(LookupError) as hidden:
        find_mcp_tool(["Bash"], "harness", "add", left_out="disallowed_tools 'mcp:harness.add'")
    said = str(hidden.value)
    assert "the run's tool filter leaves it out (disallowed_tools 'mcp:harness.add')" in said
    assert "give the agent" not in said and said.endswith("the request's tools: Bash")


# --- every API ----------------------------------------------------------------------------------------------


def test_messages_calls_the_listed_tool_and_quotes_its_result() -> None:
    with MessagesBackend(mcp_scenario()) as backend:
        tools = [{"name": "Bash", "input_schema": {}}, {"name": "mcp__harness__add", "input_schema": {}}]
        first = [{"role": "user", "content": [{"type": "text", "text": "add"}]}]
        answer = json.loads(post(f"{backend.url}/v1/messages", {"model": "m", "messages": first, "tools": tools}))
        call = next(b for b in answer["content"] if b["type"] == "tool_use")
        assert (call["name"], call["input"]) == ("mcp__harness__add", {"a": 2, "b": 3})
        second = [*first, {"role": "assistant", "content": [call]}, {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call["id"], "content": [{"type": "text", "text": "5"}]}]}]
        answer = json.loads(post(f"{backend.url}/v1/messages", {"model": "m", "messages": second, "tools": tools}))
        assert answer["content"][-1]["text"] == "The tool said 5."
        assert backend.tool_results == ["5"]


def test_responses_calls_the_listed_tool_and_quotes_its_result() -> None:
    with ResponsesBackend(mcp_scenario()) as backend:
        tools = [{"type": "function", "name": "exec_command"}, {"type": "function", "name": "mcp__harness__add"}]
        user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "add"}]}
        events = frames(post(f"{backend.base_url}/responses", {"model": "m", "input": [user], "tools": tools}))
        item = next(e["item"] for e in events if e["type"] == "response.output_item.done")
        assert (item["name"], json.loads(item["arguments"])) == ("mcp__harness__add", {"a": 2, "b": 3})
        output = {"type": "function_call_output", "call_id": item["call_id"], "output": "5"}
        events = frames(post(f"{backend.base_url}/responses",
                             {"model": "m", "input": [user, item, output], "tools": tools}))
        assert next(e["text"] for e in events if e["type"] == "response.output_text.done") == "The tool said 5."


def test_responses_calls_a_tool_of_a_namespace_back_by_name_and_namespace() -> None:
    """An agent may list a run's MCP server as a namespace `mcp__SERVER` of plain-named tools (recorded from the
    real CLI offline) and takes the call back as `name` with its `namespace`."""
    with ResponsesBackend(mcp_scenario()) as backend:
        tools = [{"type": "function", "name": "exec_command"},
                 {"type": "namespace", "name": "multi_agent_v1", "tools": [{"type": "function", "name": "add"}]},
                 {"type": "namespace", "name": "mcp__harness", "description": "d",
                  "tools": [{"type": "function", "name": "add", "parameters": {"type": "object"}}]}]
        user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "add"}]}
        events = frames(post(f"{backend.base_url}/responses", {"model": "m", "input": [user], "tools": tools}))
        item = next(e["item"] for e in events if e["type"] == "response.output_item.done")
        assert (item["namespace"], item["name"], json.loads(item["arguments"])) == ("mcp__harness", "add",
                                                                                    {"a": 2, "b": 3})


def test_chat_calls_the_listed_tool_and_quotes_its_result() -> None:
    with ChatCompletionsBackend(mcp_scenario()) as backend:
        tools = [{"type": "function", "function": {"name": "run_shell_command"}},
                 {"type": "function", "function": {"name": "mcp__harness__add"}}]
        first = [{"role": "user", "content": "add"}]
        reply = json.loads(post(f"{backend.base_url}/chat/completions", {"model": "m", "messages": first,
                                                                         "tools": tools}))
        call = reply["choices"][0]["message"]["tool_calls"][0]
        assert (call["function"]["name"], json.loads(call["function"]["arguments"])) == ("mcp__harness__add",
                                                                                        {"a": 2, "b": 3})
        second = [*first, {"role": "assistant", "tool_calls": [call]},
                  {"role": "tool", "tool_call_id": call["id"], "content": "5"}]
        reply = json.loads(post(f"{backend.base_url}/chat/completions", {"model": "m", "messages": second,
                                                                         "tools": tools}))
        assert reply["choices"][0]["message"]["content"] == "The tool said 5."


def test_gemini_calls_the_listed_tool_and_quotes_its_result() -> None:
    with GeminiBackend(mcp_scenario()) as backend:
        tools = [{"functionDeclarations": [{"name": "run_shell_command"}, {"name": "add"}]}]
        first = [{"role": "user", "parts": [{"text": "add"}]}]
        url = f"{backend.url}/v1beta/models/gemini-x:generateContent"
        reply = json.loads(post(url, {"contents": first, "tools": tools}))
        call = reply["candidates"][0]["content"]["parts"][-1]["functionCall"]
        assert call == {"name": "add", "args": {"a": 2, "b": 3}}
        second = [*first, {"role": "model", "parts": [{"functionCall": call}]},
                  {"role": "user", "parts": [{"functionResponse": {"name": "add", "response": {"output": "5"}}}]}]
        reply = json.loads(post(url, {"contents": second, "tools": tools}))
        assert reply["candidates"][0]["content"]["parts"][-1]["text"] == "The tool said 5."


def test_gemini_quotes_a_function_responses_error_when_it_has_no_output() -> None:
    """The Gemini API's `functionResponse.response` carries `output`, or `error` for a call that failed or was
    refused (as an agent sends an MCP tool's error, with the tool's own text inside)."""
    error = ("MCP tool 'add' reported tool error for function call: {\"name\":\"add\"} with response: "
             '[{"text":"add raised ValueError: no"}]')
    with GeminiBackend(mcp_scenario()) as backend:
        tools = [{"functionDeclarations": [{"name": "mcp_harness_add"}]}]
        first = [{"role": "user", "parts": [{"text": "add"}]}]
        url = f"{backend.url}/v1beta/models/gemini-x:generateContent"
        call = json.loads(post(url, {"contents": first, "tools": tools}))["candidates"][0]["content"]["parts"][-1]
        second = [*first, {"role": "model", "parts": [call]}, {"role": "user", "parts": [
            {"functionResponse": {"name": "mcp_harness_add", "response": {"error": error}}}]}]
        reply = json.loads(post(url, {"contents": second, "tools": tools}))
        assert reply["candidates"][0]["content"]["parts"][-1]["text"] == f"The tool said {error}."
        assert backend.tool_results == [error]


def test_a_tool_the_request_does_not_offer_fails_the_turn_with_the_reason() -> None:
    with MessagesBackend(mcp_scenario()) as backend:
        body = {"model": "m", "messages": [{"role": "user", "content": "add"}], "tools": [{"name": "Bash"}]}
        with pytest.raises(urllib.error.HTTPError) as failed:
            post(f"{backend.url}/v1/messages", body)
        assert failed.value.code == 400 and b"no MCP tool 'add' of server 'harness'" in failed.value.read()


# --- attachments --------------------------------------------------------------------------------------------

REPORT = Scenario("r", (ReportAttachments(),))
EXPECTED = f"image/png {len(PNG)} bytes\napplication/pdf {len(PDF)} bytes"


def test_messages_reports_image_and_document_blocks() -> None:
    with MessagesBackend(REPORT) as backend:
        content = [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}},
                   {"type": "document", "source": {"type": "base64", "media_type": "application/pdf",
                                                   "data": base64.b64encode(PDF).decode()}},
                   {"type": "text", "text": "what is this?"}]
        answer = json.loads(post(f"{backend.url}/v1/messages",
                                 {"model": "m", "messages": [{"role": "user", "content": content}]}))
        assert answer["content"][-1]["text"] == EXPECTED


def test_responses_reports_input_image_and_file_parts() -> None:
    with ResponsesBackend(REPORT) as backend:
        content = [{"type": "input_image", "image_url": f"data:image/png;base64,{PNG_B64}"},
                   {"type": "input_file", "filename": "a.pdf",
                    "file_data": f"data:application/pdf;base64,{base64.b64encode(PDF).decode()}"},
                   {"type": "input_text", "text": "what is this?"}]
        events = frames(post(f"{backend.base_url}/responses",
                             {"model": "m", "input": [{"type": "message", "role": "user", "content": content}]}))
        assert next(e["text"] for e in events if e["type"] == "response.output_text.done") == EXPECTED


def test_chat_reports_image_url_and_file_parts() -> None:
    with ChatCompletionsBackend(REPORT) as backend:
        content = [{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}},
                   {"type": "file", "file": {"file_data": f"data:application/pdf;base64,"
                                                          f"{base64.b64encode(PDF).decode()}"}},
                   {"type": "text", "text": "what is this?"}]
        reply = json.loads(post(f"{backend.base_url}/chat/completions",
                                {"model": "m", "messages": [{"role": "user", "content": content}]}))
        assert reply["choices"][0]["message"]["content"] == EXPECTED


def test_gemini_reports_inline_data_and_says_when_there_is_none() -> None:
    with GeminiBackend(Scenario("r", (ReportAttachments(), ReportAttachments()))) as backend:
        url = f"{backend.url}/v1beta/models/gemini-x:generateContent"
        parts = [{"inlineData": {"mimeType": "image/png", "data": PNG_B64}},
                 {"inlineData": {"mimeType": "application/pdf", "data": base64.b64encode(PDF).decode()}},
                 {"text": "what is this?"}]
        reply = json.loads(post(url, {"contents": [{"role": "user", "parts": parts}]}))
        assert reply["candidates"][0]["content"]["parts"][-1]["text"] == EXPECTED
        reply = json.loads(post(url, {"contents": [{"role": "user", "parts": [{"text": "and now?"}]}]}))
        assert reply["candidates"][0]["content"]["parts"][-1]["text"] == "no attachments"


# --- scenarios ----------------------------------------------------------------------------------------------


def test_the_named_tool_scenarios_exist() -> None:
    assert isinstance(SCENARIOS["tools_mcp"].steps[0], CallMcpTool)
    assert SCENARIOS["tools_mcp"].steps[0] == CallMcpTool("harness", "add", {"a": 2, "b": 3}, output="5")
    echo = SCENARIOS["tools_echo"].steps[0]
    assert isinstance(echo, CallMcpTool) and (echo.server, echo.tool) == ("everything", "echo")


def test_inline_scenarios_take_mcp_and_report_steps_and_round_trip() -> None:
    value = {"steps": [{"mcp": {"server": "harness", "tool": "add", "args": {"a": 2, "b": 3}}},
                       {"say": "got {tool_result}"}, {"report_attachments": True}]}
    scenario = scenario_from_json(value)
    assert scenario.steps[0] == CallMcpTool("harness", "add", {"a": 2, "b": 3})
    assert isinstance(scenario.steps[2], ReportAttachments)
    assert scenario_to_json(scenario)["steps"] == value["steps"]
    with pytest.raises(ScenarioSyntaxError, match="name the `server` and the `tool`"):
        scenario_from_json({"steps": [{"mcp": {"tool": "add"}}, {"say": "x"}]})
    with pytest.raises(ScenarioSyntaxError, match="`args` must be an object"):
        scenario_from_json({"steps": [{"mcp": {"server": "s", "tool": "t", "args": [1]}}, {"say": "x"}]})


# --- deferred tools: loaded through the agent's own tool search -------------------------------------------------


def test_responses_loads_a_deferred_namespace_with_a_client_tool_search_then_calls_into_it() -> None:
    tools = [{"type": "function", "name": "exec_command"}, {"type": "tool_search", "execution": "client"}]
    listed = {"type": "message", "role": "developer", "content": [
        {"type": "input_text", "text": "<tools>\nDeferred tool namespaces:\n- mcp__harness: Python tools\n</tools>"}]}
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "add"}]}
    with ResponsesBackend(mcp_scenario()) as backend:
        url = f"{backend.base_url}/responses"
        search = next(e["item"] for e in frames(post(url, {"input": [listed, user], "tools": tools}))
                      if e["type"] == "response.output_item.done")
        assert (search["type"], search["execution"]) == ("tool_search_call", "client")
        assert search["arguments"] == {"query": "mcp__harness add", "limit": 1}
        loaded = {"type": "tool_search_output", "call_id": search["call_id"], "execution": "client",
                  "tools": [{"type": "namespace", "name": "mcp__harness",
                             "tools": [{"type": "function", "name": "add"}]}]}
        call = next(e["item"] for e in frames(post(url, {"input": [listed, user, search, loaded], "tools": tools}))
                    if e["type"] == "response.output_item.done")
        assert (call["type"], call["namespace"], call["name"]) == ("function_call", "mcp__harness", "add")
        assert json.loads(call["arguments"]) == {"a": 2, "b": 3}
        output = {"type": "function_call_output", "call_id": call["call_id"], "output": "5"}
        events = frames(post(url, {"input": [listed, user, search, loaded, call, output], "tools": tools}))
        assert next(e["text"] for e in events if e["type"] == "response.output_text.done") == "The tool said 5."
        assert backend.tool_results == ["5"]


def test_a_deferred_tool_without_a_search_tool_is_a_clear_error() -> None:
    listed = {"type": "message", "role": "developer", "content": [
        {"type": "input_text", "text": "Deferred tool namespaces:\n- mcp__harness: Python tools\n"}]}
    with ResponsesBackend(mcp_scenario()) as backend:
        with pytest.raises(urllib.error.HTTPError) as failed:
            post(f"{backend.base_url}/responses", {"input": [listed], "tools": [{"type": "function", "name": "x"}]})
        assert failed.value.code == 400


# --- a tool the request neither offers nor names: looked up by keywords ------------------------------------------

LOOKUP_TOOLS = [{"type": "function", "function": {"name": name}} for name in ("read_file", "tool_search", "tool_call")]


def _chat(url: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    reply = json.loads(post(f"{url}/chat/completions", {"model": "m", "messages": messages, "tools": LOOKUP_TOOLS}))
    message: dict[str, Any] = reply["choices"][0]["message"]
    return message


def _answered(messages: list[dict[str, Any]], message: dict[str, Any], result: str) -> list[dict[str, Any]]:
    call = message["tool_calls"][0]
    return [*messages, {"role": "assistant", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call["id"], "content": [{"type": "text", "text": result}]}]


def test_chat_looks_up_a_tool_not_yet_listed_until_the_search_shows_it_then_calls_it_through_the_bridge() -> None:
    """An agent that connects its MCP servers in the background neither offers nor lists their tools in
    its first request: the model searches by keywords, again while the search finds nothing, then calls what the
    search showed through the bridge tool."""
    schema = json.dumps({"name": "mcp__harness__add", "description": "Add", "parametersJsonSchema": {}})
    with ChatCompletionsBackend(mcp_scenario()) as backend:
        messages: list[dict[str, Any]] = [{"role": "user", "content": "add"}]
        search = _chat(backend.base_url, messages)["tool_calls"][0]["function"]
        assert (search["name"], json.loads(search["arguments"])) == ("tool_search", {"query": "harness add"})
        messages = _answered(messages, {"tool_calls": [{"id": "call_0000", "type": "function", "function": search}]},
                             "No tools found matching 'harness add'.")
        again = _chat(backend.base_url, messages)["tool_calls"][0]["function"]
        assert (again["name"], json.loads(again["arguments"])) == ("tool_search", {"query": "harness add"})
        messages = _answered(messages, {"tool_calls": [{"id": "call_0001", "type": "function", "function": again}]},
                             f"<functions>\n<function>{schema}</function>\n</functions>")
        call = _chat(backend.base_url, messages)["tool_calls"][0]["function"]
        assert (call["name"], json.loads(call["arguments"])) == (
            "tool_call", {"name": "mcp__harness__add", "arguments": {"a": 2, "b": 3}})
        messages = _answered(messages, {"tool_calls": [{"id": "call_0002", "type": "function", "function": call}]},
                             "5")
        assert _chat(backend.base_url, messages)["content"] == "The tool said 5."
        assert backend.tool_results == ["5"]


def test_a_lookup_that_never_finds_the_tool_fails_the_turn_saying_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend_http, "LOOKUPS", 2)
    monkeypatch.setattr(backend_http, "LOOKUP_PAUSE", 0.0)
    with ChatCompletionsBackend(mcp_scenario()) as backend:
        messages: list[dict[str, Any]] = [{"role": "user", "content": "add"}]
        for _ in range(2):
            search = _chat(backend.base_url, messages)
            assert search["tool_calls"][0]["function"]["name"] == "tool_search"
            messages = _answered(messages, search, "No tools found matching 'harness add'.")
        with pytest.raises(urllib.error.HTTPError) as failed:
            _chat(backend.base_url, messages)
        said = failed.value.read().decode()
        assert failed.value.code == 400 and "the agent's tool search did not find it either (2 searches" in said
