"""The scripted Messages backend plays an MCP tool call against what Claude Code really sends: recorded offline
(`recorded/mcp-echo-requests.json`, Claude Code 2.1.328 with the npm `server-everything` over `--mcp-config`; long
texts cut). Claude Code defers MCP tools: the first request only names `mcp__everything__echo` in a system text and
offers `ToolSearch`; the backend loads the tool with `select:NAME`, then calls it, then quotes its result."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

from harness_core.scripted.scenarios import CallMcpTool, Say, Scenario

from harness_claude.offline import offline_setup

RECORDED = Path(__file__).parent / "recorded" / "mcp-echo-requests.json"


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    data = json.dumps({**body, "stream": False}).encode()
    request = urllib.request.Request(url, data, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        answer: dict[str, Any] = json.loads(response.read())
    return answer


def test_the_backend_loads_the_deferred_tool_calls_it_and_quotes_its_result(tmp_path: Path) -> None:
    requests = json.loads(RECORDED.read_text())
    scenario = Scenario("echo", (CallMcpTool("everything", "echo", {"message": "hi"}), Say("got {tool_result}")))
    with offline_setup(scenario, tmp_path / "ws", tmp_path / "state").backend as backend:
        answers = [_post(f"{backend.url}/v1/messages", body) for body in requests]
    calls = [next(b for b in a["content"] if b["type"] == "tool_use") for a in answers[:2]]
    assert (calls[0]["name"], calls[0]["input"]) == ("ToolSearch", {"query": "select:mcp__everything__echo",
                                                                     "max_results": 1})
    assert (calls[1]["name"], calls[1]["input"]) == ("mcp__everything__echo", {"message": "hi"})
    assert answers[2]["content"][-1]["text"] == "got Echo: hi"
    assert backend.tool_results == ["Echo: hi"]
