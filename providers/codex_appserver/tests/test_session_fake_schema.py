"""The session side of the wire cannot drift either: what the provider sends for a live turn (`turn/start` with
every override, `turn/steer`) validates against the real codex's JSON Schema of those params, and what the fake
answers in a session (several turns on a thread, a steer, `model/list`) against the schema of the server's
messages. Marked `real_cli` (the schema comes from the installed real codex); see `test_appserver_fake_schema`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from harness_core import AgentRunSpec, SandboxMode
from harness_core.scripted.scenarios import RunCommand, Say, Scenario
from test_appserver_fake_schema import _Client, schema_dir, validate_server_message

from harness_codex_appserver.params import Sticky, turn_params
from harness_codex_appserver.testing import steps_env, write_fake_codex
from harness_codex_appserver.testing.shapes import model_entry

jsonschema = pytest.importorskip("jsonschema")
pytestmark = pytest.mark.real_cli
__all__ = ["schema_dir"]  # the fixture, shared

SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}


def _check(schema_dir: Path, name: str, params: dict[str, Any]) -> None:
    schema = json.loads((schema_dir / "v2" / f"{name}.json").read_text())
    errors = list(jsonschema.Draft7Validator(schema).iter_errors(params))
    assert not errors, f"{name}: {errors[0].message[:300]}"


def test_live_turn_params_match_the_real_schema(schema_dir: Path, tmp_path: Path) -> None:
    sticky = Sticky(model="gpt-5.5", sandbox_mode=SandboxMode.WORKSPACE_WRITE,
                    sandbox={"type": "workspaceWrite", "writableRoots": [], "networkAccess": False}, effort=None,
                    catalogue={"gpt-5.5": model_entry()})
    spec = AgentRunSpec(prompt="go", cwd=tmp_path, model="gpt-other", effort="high", sandbox="read-only",
                        approval="untrusted", output_schema=SCHEMA)
    params, _ = turn_params("thread-1", spec, sticky, live=True)
    assert set(params) == {"threadId", "input", "model", "effort", "approvalPolicy", "sandboxPolicy", "outputSchema"}
    _check(schema_dir, "TurnStartParams", params)
    back, _ = turn_params("thread-1", AgentRunSpec(prompt="again", cwd=tmp_path), sticky, live=True)
    assert (back["model"], back["effort"], back["sandboxPolicy"]["type"]) == ("gpt-5.5", "medium", "workspaceWrite")
    _check(schema_dir, "TurnStartParams", back)
    steer = {"threadId": "thread-1", "input": [{"type": "text", "text": "left", "text_elements": []}],
             "expectedTurnId": "turn-1"}
    _check(schema_dir, "TurnSteerParams", steer)


def test_fake_session_messages_match_the_real_schema(schema_dir: Path, tmp_path: Path) -> None:
    codex = write_fake_codex(tmp_path)
    slow = Scenario("slow", (RunCommand("echo waiting; sleep 1", output="waiting\n"), Say("ok")))
    client = _client_with_env(codex, tmp_path, steps_env(slow))  # slow: the steer lands mid-turn
    try:
        client.request("initialize", {"clientInfo": {"name": "t", "version": "1"}})
        client.send({"jsonrpc": "2.0", "method": "initialized"})
        started = client.request("thread/start", {"cwd": str(tmp_path), "approvalPolicy": "never",
                                                  "sandbox": "workspace-write"})
        thread_id = started["result"]["thread"]["id"]
        listed = client.request("model/list", {"includeHidden": True})
        assert [m["id"] for m in listed["result"]["data"]] == ["gpt-5.5"]
        turn = client.request("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "one"}],
                                             "model": "gpt-5.5", "effort": "high", "outputSchema": SCHEMA,
                                             "sandboxPolicy": {"type": "readOnly"}, "approvalPolicy": "never"})
        turn_id = turn["result"]["turn"]["id"]
        steered = client.request("turn/steer", {"threadId": thread_id, "expectedTurnId": turn_id,
                                                "input": [{"type": "text", "text": "left"}]})
        assert steered["result"] == {"turnId": turn_id}
        client.until(lambda m: m.get("method") == "turn/completed")
        late = client.request("turn/steer", {"threadId": thread_id, "expectedTurnId": turn_id,
                                             "input": [{"type": "text", "text": "late"}]})
        assert "no active turn" in late["error"]["message"]
        client.request("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "two"}]})
        client.until(lambda m: m.get("method") == "turn/completed")
    finally:
        client.close()
    for msg in client.seen:
        validate_server_message(schema_dir, msg, client.methods)
    users = [m["params"]["item"]["content"][0]["text"] for m in client.seen
             if m.get("method") == "item/completed" and m["params"]["item"]["type"] == "userMessage"]
    assert users == ["one", "left", "two"]


def _client_with_env(codex: Path, home: Path, env: dict[str, str]) -> _Client:
    client = _Client.__new__(_Client)  # `_Client`, with the fake's environment added
    client.proc = subprocess.Popen([str(codex), "app-server", "--listen", "stdio://"], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, text=True,
                                   env={"CODEX_HOME": str(home), "PATH": "/usr/bin:/bin", **env})
    client.methods, client.seen, client.next = {}, [], 1
    return client
