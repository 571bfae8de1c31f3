"""The real pinned CLIs run whole turns offline against the scripted backends (no Harness provider involved).

Skipped unless the binaries are installed under `.tools` (or `$HARNESS_TOOLS_DIR`). Every child runs in its
own session and is killed as a group when its deadline passes.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from harness_core.offline.backends import MessagesBackend, ResponsesBackend
from harness_core.offline.scenarios import SCENARIOS, Scenario

TOOLS = Path(os.environ.get("HARNESS_TOOLS_DIR") or Path(__file__).resolve().parents[2] / ".tools")
_NATIVE = "codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
CODEX = TOOLS / _NATIVE if (TOOLS / _NATIVE).exists() else TOOLS / "bin" / "codex"
CLAUDE = TOOLS / "bin" / "claude"

_INSTALL = "run scripts/install-clis.sh or set HARNESS_TOOLS_DIR"
needs_codex = pytest.mark.skipif(not CODEX.exists(), reason=f"codex not installed under {TOOLS} ({_INSTALL})")
needs_claude = pytest.mark.skipif(not CLAUDE.exists(), reason=f"claude not installed under {TOOLS} ({_INSTALL})")
pytestmark = pytest.mark.real_cli

DEADLINE = 60.0


def _kill_group(proc: subprocess.Popen[Any]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(5)


def run(
    cmd: Sequence[str], env: Mapping[str, str], cwd: Path
) -> tuple[int, list[dict[str, Any]], str, float]:
    """Run a CLI to completion under a deadline; returns (exit code, JSON stdout lines, stderr, seconds)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(
        list(cmd),
        cwd=cwd,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        pytest.fail(f"{cmd[0]} did not finish within {DEADLINE}s")
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return proc.returncode, lines, err, time.monotonic() - t0


def workspace(tmp_path: Path, scenario: Scenario) -> tuple[Path, Path]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    for name, content in scenario.files.items():
        (ws / name).write_text(content)
    return ws, home


# -- Codex ----------------------------------------------------------------------------------------------


def codex_exec(backend: ResponsesBackend, ws: Path, home: Path) -> list[str]:
    return [
        str(CODEX),
        "exec",
        "--json",
        "--skip-git-repo-check",
        "-C",
        str(ws),
        "-s",
        "workspace-write",
        *backend.codex_args(),
        "play the scenario",
    ]


def codex_env(backend: ResponsesBackend, home: Path) -> dict[str, str]:
    return {"CODEX_HOME": str(home), **backend.codex_env()}


def completed(lines: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e["item"] for e in lines if e["type"] == "item.completed" and e["item"]["type"] == kind]


@needs_codex
def test_codex_exec_runs_the_tools_scenario_for_real(tmp_path: Path) -> None:
    scenario = SCENARIOS["tools"]
    ws, home = workspace(tmp_path, scenario)
    with ResponsesBackend(scenario, cwd=ws) as backend:
        code, lines, err, _ = run(codex_exec(backend, ws, home), codex_env(backend, home), ws)
        assert code == 0, err
        assert len(backend.requests) == 5 and backend.remaining == 0
    assert (ws / "notes.txt").read_text() == "beta\n"
    assert (ws / "new.txt").read_text() == "fresh\n"
    commands = completed(lines, "command_execution")
    assert "echo harness-ok" in commands[0]["command"] and "harness-ok" in commands[0]["aggregated_output"]
    assert "cat notes.txt" in commands[1]["command"] and "alpha" in commands[1]["aggregated_output"]
    kinds = [c["kind"] for item in completed(lines, "file_change") for c in item["changes"]]
    assert kinds == ["update", "add"]
    assert completed(lines, "agent_message")[-1]["text"] == "All four tools ran."
    assert lines[-1]["type"] == "turn.completed" and lines[-1]["usage"]["output_tokens"] == 100
    # each call came back to the model with its output
    outputs = [i for i in backend.requests[-1]["input"] if str(i.get("type", "")).endswith("call_output")]
    assert len(outputs) == 4


@needs_codex
def test_codex_exec_reasoning(tmp_path: Path) -> None:
    ws, home = workspace(tmp_path, SCENARIOS["think"])
    with ResponsesBackend(SCENARIOS["think"]) as backend:
        code, lines, err, _ = run(codex_exec(backend, ws, home), codex_env(backend, home), ws)
    assert code == 0, err
    assert completed(lines, "reasoning")[0]["text"] == "Let me consider the question."
    assert completed(lines, "agent_message")[0]["text"] == "Thought it through."


@needs_codex
@pytest.mark.parametrize(("name", "needle"), [("fail_500", ""), ("fail_401", "401")])
def test_codex_exec_fails_fast_on_api_errors(tmp_path: Path, name: str, needle: str) -> None:
    ws, home = workspace(tmp_path, SCENARIOS[name])
    with ResponsesBackend(SCENARIOS[name]) as backend:
        code, lines, _, seconds = run(codex_exec(backend, ws, home), codex_env(backend, home), ws)
        assert len(backend.requests) == 1  # retries are off
    assert code == 1 and seconds < 15
    assert lines[-1]["type"] == "turn.failed" and needle in lines[-1]["error"]["message"]


class AppServer:
    """Just enough of a JSON-RPC client over the app-server's stdio for one turn."""

    def __init__(self, backend: ResponsesBackend, home: Path) -> None:
        cmd = [str(CODEX), "app-server", "--listen", "stdio://", *backend.codex_args()]
        self.proc = subprocess.Popen(
            cmd,
            env={**os.environ, **codex_env(backend, home)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        self.next_id = 0

    def send(self, method: str, params: dict[str, Any] | None = None, request: bool = True) -> int:
        msg: dict[str, Any] = {"method": method}
        if params is not None:
            msg["params"] = params
        if request:
            self.next_id += 1
            msg["id"] = self.next_id
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        return self.next_id

    def messages(self) -> Iterator[dict[str, Any]]:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            yield json.loads(line)

    def until(self, pred: Any) -> list[dict[str, Any]]:
        seen = []
        for msg in self.messages():
            seen.append(msg)
            if pred(msg):
                return seen
        raise AssertionError(f"app-server closed stdout; last messages: {seen[-5:]}")

    def close(self) -> None:
        _kill_group(self.proc)


@needs_codex
def test_codex_app_server_streams_deltas_from_the_backend(tmp_path: Path) -> None:
    scenario = Scenario("think_say", (*SCENARIOS["think"].steps,))
    ws, home = workspace(tmp_path, scenario)
    with ResponsesBackend(scenario) as backend:
        server = AppServer(backend, home)
        timer = _deadline(server.proc)
        try:
            rid = server.send("initialize", {"clientInfo": {"name": "t", "title": "t", "version": "0"}})
            server.until(lambda m: m.get("id") == rid)
            server.send("initialized", request=False)
            rid = server.send("thread/start", {"cwd": str(ws), "approvalPolicy": "never"})
            thread = server.until(lambda m: m.get("id") == rid)[-1]["result"]["thread"]["id"]
            t0 = time.monotonic()
            server.send("turn/start", {"threadId": thread, "input": [{"type": "text", "text": "hi"}]})
            seen = server.until(lambda m: m.get("method") == "turn/completed")
            seconds = time.monotonic() - t0
        finally:
            timer.cancel()
            server.close()
    methods = [m.get("method") for m in seen]
    deltas = [m["params"]["delta"] for m in seen if m.get("method") == "item/agentMessage/delta"]
    assert "".join(deltas) == "Thought it through." and len(deltas) == 3
    assert "item/reasoning/summaryTextDelta" in methods
    assert seen[-1]["params"]["turn"]["status"] == "completed" and seconds < 15


def _deadline(proc: subprocess.Popen[str]) -> threading.Timer:
    timer = threading.Timer(DEADLINE, lambda: _kill_group(proc))
    timer.daemon = True
    timer.start()
    return timer


# -- Claude Code ----------------------------------------------------------------------------------------


def claude_cmd(*extra: str) -> list[str]:
    return [
        str(CLAUDE),
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
        "--model",
        "claude-sonnet-4-5",
        "--permission-mode",
        "bypassPermissions",
        "--setting-sources",
        "",
        *extra,
        "play the scenario",
    ]


def claude_env(backend: MessagesBackend, home: Path) -> dict[str, str]:
    return {**backend.claude_env(home), "IS_SANDBOX": "1"}


def blocks(lines: list[dict[str, Any]], role: str, kind: str) -> list[dict[str, Any]]:
    return [
        b
        for e in lines
        if e.get("type") == role
        for b in (e["message"]["content"] if isinstance(e["message"]["content"], list) else [])
        if b.get("type") == kind
    ]


@needs_claude
def test_claude_runs_the_tools_scenario_for_real(tmp_path: Path) -> None:
    scenario = SCENARIOS["tools"]
    ws, home = workspace(tmp_path, scenario)
    with MessagesBackend(scenario) as backend:  # the cwd comes from Claude's own prompt
        code, lines, err, _ = run(claude_cmd(), claude_env(backend, home), ws)
        assert code == 0, err
        assert len(backend.requests) == 5 and backend.remaining == 0
    assert (ws / "notes.txt").read_text() == "beta\n"
    assert (ws / "new.txt").read_text() == "fresh\n"
    uses = blocks(lines, "assistant", "tool_use")
    assert [u["name"] for u in uses] == ["Bash", "Read", "Edit", "Write"]
    assert uses[1]["input"]["file_path"] == str(ws / "notes.txt")
    results = blocks(lines, "user", "tool_result")
    assert [r["tool_use_id"] for r in results] == [u["id"] for u in uses]
    assert not any(r.get("is_error") for r in results) and "harness-ok" in results[0]["content"]
    assert any(e.get("type") == "stream_event" for e in lines)
    result = lines[-1]
    assert result["type"] == "result" and not result["is_error"] and result["result"] == "All four tools ran."


@needs_claude
def test_claude_thinking(tmp_path: Path) -> None:
    ws, home = workspace(tmp_path, SCENARIOS["think"])
    with MessagesBackend(SCENARIOS["think"]) as backend:
        code, lines, err, _ = run(claude_cmd(), claude_env(backend, home), ws)
    assert code == 0, err
    assert blocks(lines, "assistant", "thinking")[0]["thinking"] == "Let me consider the question."
    events = [e["event"] for e in lines if e.get("type") == "stream_event"]
    assert any(e.get("delta", {}).get("type") == "thinking_delta" for e in events)
    assert lines[-1]["result"] == "Thought it through."


@needs_claude
@pytest.mark.parametrize(("name", "status"), [("fail_500", 500), ("fail_401", 401)])
def test_claude_fails_fast_on_api_errors(tmp_path: Path, name: str, status: int) -> None:
    ws, home = workspace(tmp_path, SCENARIOS[name])
    with MessagesBackend(SCENARIOS[name]) as backend:
        code, lines, _, seconds = run(claude_cmd(), claude_env(backend, home), ws)
        assert len(backend.requests) == 1  # CLAUDE_CODE_MAX_RETRIES=0
    result = lines[-1]
    assert code == 1 and seconds < 15
    assert result["is_error"] and result["api_error_status"] == status


# -- stall + stop ---------------------------------------------------------------------------------------


def _stall_then_stop(backend: Any, cmd: list[str], env: dict[str, str], ws: Path) -> tuple[float, int | None]:
    proc = subprocess.Popen(
        cmd,
        cwd=ws,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + DEADLINE
        while not backend.requests:
            assert time.monotonic() < deadline and proc.poll() is None, "the CLI never called the backend"
            time.sleep(0.02)
        time.sleep(0.2)  # let the stream open
        t0 = time.monotonic()
        backend.stop()
        stop_seconds = time.monotonic() - t0
        try:
            code: int | None = proc.wait(20)
        except subprocess.TimeoutExpired:
            code = None
        return stop_seconds, code
    finally:
        if proc.poll() is None:
            _kill_group(proc)


@needs_codex
def test_codex_stall_then_stop_does_not_hang(tmp_path: Path) -> None:
    ws, home = workspace(tmp_path, SCENARIOS["stall"])
    backend = ResponsesBackend(SCENARIOS["stall"]).start()
    stop_seconds, code = _stall_then_stop(
        backend, codex_exec(backend, ws, home), codex_env(backend, home), ws
    )
    assert stop_seconds < 2
    assert code == 1  # the stream broke and retries are off


@needs_claude
def test_claude_stall_then_stop_does_not_hang(tmp_path: Path) -> None:
    ws, home = workspace(tmp_path, SCENARIOS["stall"])
    backend = MessagesBackend(SCENARIOS["stall"]).start()
    stop_seconds, code = _stall_then_stop(backend, claude_cmd(), claude_env(backend, home), ws)
    assert stop_seconds < 2
    assert code == 1


@needs_claude
def test_claude_retry_of_a_stalled_stream_stalls_too(tmp_path: Path) -> None:
    # Claude Code abandons a stream idle past CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS and retries it once without
    # streaming; a trailing Stall must hang that retry too, or the stall scenario would end in success.
    ws, home = workspace(tmp_path, SCENARIOS["stall"])
    backend = MessagesBackend(SCENARIOS["stall"]).start()
    env = {**claude_env(backend, home), "CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS": "10000"}
    proc = subprocess.Popen(
        claude_cmd(),
        cwd=ws,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while len(backend.requests) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [r.get("stream") for r in backend.requests] == [True, False]
        time.sleep(0.5)
        assert proc.poll() is None, "the non-streaming retry was answered"
        backend.stop()
        out, _ = proc.communicate(timeout=20)
    finally:
        backend.stop()
        if proc.poll() is None:
            _kill_group(proc)
    results = [json.loads(line) for line in out.splitlines() if '"type":"result"' in line.replace(" ", "")]
    assert proc.returncode == 1 and results and results[-1]["is_error"], results
