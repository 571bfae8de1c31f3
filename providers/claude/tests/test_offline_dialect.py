"""Claude Code's dialect of the scripted Messages backend, over plain HTTP (no CLI): its Bash/Read/Write/Edit
tool calls with absolute paths, the working directory it states in its prompt, and which of its calls are
turns. The real CLI playing them is `test_offline_backend_real.py`."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from harness_core.scripted.backends import FINISHED_TEXT, SIDE_TEXT, MessagesBackend
from harness_core.scripted.scenarios import SCENARIOS, ReadFile, Scenario

from harness_claude.offline import CLAUDE_CODE_TOOLS, ClaudeCodeBackend

TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]


def post(url: str, body: dict[str, Any]) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def tool_uses(raw: bytes) -> tuple[str, dict[str, Any]]:
    """The one tool call of a streamed message: its name and its input, joined from the JSON deltas."""
    events = [json.loads(line[len("data: ") :]) for line in raw.decode().splitlines() if line.startswith("data: ")]
    start = next(e for e in events if e["type"] == "content_block_start")["content_block"]
    parts = [e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta"]
    assert start["type"] == "tool_use" and len(parts) >= 2
    return start["name"], json.loads("".join(parts))


def turn(backend: MessagesBackend, **extra: Any) -> bytes:
    body = {"model": "claude-sonnet-4-5", "stream": True, "tools": TOOLS, "messages": [], **extra}
    status, raw = post(f"{backend.url}/v1/messages?beta=true", body)
    assert status == 200
    return raw


def test_claude_code_tools_with_absolute_paths(tmp_path: Path) -> None:
    with ClaudeCodeBackend(SCENARIOS["tools"], cwd=tmp_path) as backend:
        calls = [tool_uses(turn(backend)) for _ in range(4)]
    assert calls == [
        ("Bash", {"command": "echo harness-ok", "description": "Run a scripted command"}),
        ("Read", {"file_path": str(tmp_path / "notes.txt")}),
        ("Edit", {"file_path": str(tmp_path / "notes.txt"), "old_string": "alpha", "new_string": "beta"}),
        ("Write", {"file_path": str(tmp_path / "new.txt"), "content": "fresh\n"}),
    ]


def test_the_cwd_comes_from_claude_codes_own_prompt() -> None:
    reminder = "<system-reminder>\n - Primary working directory: /w/y\n - Is a git repository: false"
    first = {"role": "user", "content": [{"type": "text", "text": reminder}]}
    with ClaudeCodeBackend(Scenario("r", (ReadFile("a.txt"),))) as backend:
        assert tool_uses(turn(backend, messages=[first])) == ("Read", {"file_path": "/w/y/a.txt"})
        assert backend.cwd == "/w/y"


def test_find_cwd_reads_bare_system_prompt_and_environment_reminder() -> None:
    find_cwd = CLAUDE_CODE_TOOLS.find_cwd
    assert find_cwd({"system": [{"type": "text", "text": "CWD: /w/x\nDate: today"}]}) == "/w/x"
    reminder = "<system-reminder>\n - Primary working directory: /w/y\n - Is a git repository: false"
    assert find_cwd({"messages": [{"role": "user", "content": [{"type": "text", "text": reminder}]}]}) == "/w/y"
    assert find_cwd({"messages": [{"role": "user", "content": "Working directory: /w/z"}]}) == "/w/z"
    assert find_cwd({"messages": []}) is None


def test_side_requests_do_not_consume_steps() -> None:
    with ClaudeCodeBackend(SCENARIOS["say"]) as backend:
        status, raw = post(f"{backend.url}/v1/messages/count_tokens?beta=true", {"messages": []})
        assert status == 200 and json.loads(raw)["input_tokens"] > 0
        status, raw = post(f"{backend.url}/v1/messages?beta=true", {"messages": [], "max_tokens": 50})
        assert status == 200 and json.loads(raw)["content"] == [{"type": "text", "text": SIDE_TEXT}]
        assert backend.remaining == 1 and backend.requests == []
        raw = turn(backend)
        assert backend.remaining == 0 and len(backend.requests) == 1
        assert [e.turn for e in backend.exchanges] == [False, False, True]
    deltas = [json.loads(line[len("data: ") :]) for line in raw.decode().splitlines() if line.startswith("data: ")]
    text = "".join(e["delta"]["text"] for e in deltas if e["type"] == "content_block_delta")
    assert text == "Hello from the scripted model."


def test_a_turn_without_tools_still_plays_the_scenario() -> None:
    # `claude --tools ""` sends `"tools": []`: it is still the agent loop, not a side request
    with ClaudeCodeBackend(SCENARIOS["say"]) as backend:
        body = {"model": "m", "stream": False, "tools": [], "messages": []}
        status, raw = post(f"{backend.url}/v1/messages?beta=true", body)
        assert status == 200 and json.loads(raw)["content"][0]["text"] == "Hello from the scripted model."
        status, raw = post(f"{backend.url}/v1/messages", {"model": "m", "thinking": {}, "messages": []})
        assert status == 200 and json.loads(raw)["content"][0]["text"] == FINISHED_TEXT
        assert len(backend.requests) == 2  # both were turns


def test_claude_env_points_claude_code_here_with_an_isolated_home(tmp_path: Path) -> None:
    backend = ClaudeCodeBackend(SCENARIOS["say"])
    try:
        env = backend.claude_env(tmp_path)
    finally:
        backend.stop()
    assert env["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:") and env["ANTHROPIC_API_KEY"]
    assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1" and env["CLAUDE_CODE_MAX_RETRIES"] == "0"
    assert env["HOME"] == str(tmp_path) and env["CLAUDE_CONFIG_DIR"] == str(tmp_path / ".claude")
    assert env["CLAUDE_CODE_TMPDIR"] == str(tmp_path / "tmp")
