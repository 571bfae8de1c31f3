"""The scripted Gemini and Chat Completions backends play an MCP tool call against what the Gemini CLI and Qwen Code
really send: recorded offline (`recorded/*-mcp-echo-requests.json`, Gemini CLI 0.61.0 and Qwen Code 0.24.4 with the
npm `server-everything` in their `mcpServers` settings; long texts cut). Gemini offers the tool as
`mcp_everything_echo` and wraps its output in `<untrusted_context>`; Qwen Code defers it behind `tool_search` and
calls it through `tool_call`."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

from harness_core.scripted.scenarios import CallMcpTool, Say, Scenario

from harness_acp.offline_gemini import offline_setup as gemini_setup
from harness_acp.offline_qwen import offline_setup as qwen_setup

RECORDED = Path(__file__).parent / "recorded"
SCENARIO = Scenario("echo", (CallMcpTool("everything", "echo", {"message": "hi"}), Say("got {tool_result}")))


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        answer: dict[str, Any] = json.loads(response.read())
    return answer


def test_gemini_calls_the_prefixed_tool_and_quotes_its_result_without_the_envelope(tmp_path: Path) -> None:
    requests = json.loads((RECORDED / "gemini-mcp-echo-requests.json").read_text())
    with gemini_setup(SCENARIO, tmp_path / "ws", tmp_path / "state").backend as backend:
        answers = [_post(f"{backend.url}/v1beta/models/{body.pop('model')}:generateContent", body)
                   for body in requests]
    call = answers[0]["candidates"][0]["content"]["parts"][-1]["functionCall"]
    assert call == {"name": "mcp_everything_echo", "args": {"message": "hi"}}
    assert answers[1]["candidates"][0]["content"]["parts"][-1]["text"] == "got Echo: hi"


def test_qwen_searches_the_deferred_tool_then_calls_it_through_its_bridge(tmp_path: Path) -> None:
    requests = json.loads((RECORDED / "qwen-mcp-echo-requests.json").read_text())
    with qwen_setup(SCENARIO, tmp_path / "ws", tmp_path / "state").backend as backend:
        answers = [_post(f"{backend.base_url}/chat/completions", {**body, "stream": False}) for body in requests]
    calls = [a["choices"][0]["message"]["tool_calls"][0]["function"] for a in answers[:2]]
    assert (calls[0]["name"], json.loads(calls[0]["arguments"])) == (
        "tool_search", {"query": "select:mcp__everything__echo", "max_results": 1})
    assert (calls[1]["name"], json.loads(calls[1]["arguments"])) == (
        "tool_call", {"name": "mcp__everything__echo", "arguments": {"message": "hi"}})
    assert answers[2]["choices"][0]["message"]["content"] == "got Echo: hi"
