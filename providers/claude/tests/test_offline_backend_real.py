"""The real pinned Claude Code runs whole turns offline against the scripted Messages backend in Claude Code's
dialect (`harness_claude.offline.ClaudeCodeBackend`), run by hand: no Harness provider involved.

Marked `real_cli`; skipped, saying how to install the CLI, when it is missing (a failure instead under
HARNESS_REQUIRE_REAL_CLIS=1). Every child runs in its own session and is killed as a group when its deadline
passes.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from harness_core.scripted.scenarios import SCENARIOS, Scenario

from harness_claude.offline import ClaudeCodeBackend

TOOLS = Path(os.environ.get("HARNESS_TOOLS_DIR") or Path(__file__).resolve().parents[3] / ".tools")
CLAUDE = os.environ.get("HARNESS_CLAUDE_BIN") or shutil.which("claude") or str(TOOLS / "bin" / "claude")
"""The real claude CLI: $HARNESS_CLAUDE_BIN, else `claude` on PATH, else `bin/claude` under $HARNESS_TOOLS_DIR
(default: the repo's `.tools`)."""
pytestmark = [
    pytest.mark.real_cli,
    pytest.mark.skipif(
        not os.access(CLAUDE, os.X_OK),
        reason=f"real claude CLI not found at {CLAUDE} (install it with scripts/install-clis.sh, or set "
        "HARNESS_TOOLS_DIR or HARNESS_CLAUDE_BIN); with HARNESS_REQUIRE_REAL_CLIS=1 this skip is a failure",
    ),
]
DEADLINE = 60.0


def _kill_group(proc: subprocess.Popen[Any]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(5)


def run(cmd: Sequence[str], env: Mapping[str, str], cwd: Path) -> tuple[int, list[dict[str, Any]], str, float]:
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


def claude_cmd(*extra: str) -> list[str]:
    return [
        CLAUDE,
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


def claude_env(backend: ClaudeCodeBackend, home: Path) -> dict[str, str]:
    return {**backend.claude_env(home), "IS_SANDBOX": "1"}


def blocks(lines: list[dict[str, Any]], role: str, kind: str) -> list[dict[str, Any]]:
    return [
        b
        for e in lines
        if e.get("type") == role
        for b in (e["message"]["content"] if isinstance(e["message"]["content"], list) else [])
        if b.get("type") == kind
    ]


def test_claude_runs_the_tools_scenario_for_real(tmp_path: Path) -> None:
    scenario = SCENARIOS["tools"]
    ws, home = workspace(tmp_path, scenario)
    with ClaudeCodeBackend(scenario) as backend:  # the cwd comes from Claude Code's own prompt
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


def test_claude_thinking(tmp_path: Path) -> None:
    ws, home = workspace(tmp_path, SCENARIOS["think"])
    with ClaudeCodeBackend(SCENARIOS["think"]) as backend:
        code, lines, err, _ = run(claude_cmd(), claude_env(backend, home), ws)
    assert code == 0, err
    assert blocks(lines, "assistant", "thinking")[0]["thinking"] == "Let me consider the question."
    events = [e["event"] for e in lines if e.get("type") == "stream_event"]
    assert any(e.get("delta", {}).get("type") == "thinking_delta" for e in events)
    assert lines[-1]["result"] == "Thought it through."


@pytest.mark.parametrize(("name", "status"), [("fail_500", 500), ("fail_401", 401)])
def test_claude_fails_fast_on_api_errors(tmp_path: Path, name: str, status: int) -> None:
    ws, home = workspace(tmp_path, SCENARIOS[name])
    with ClaudeCodeBackend(SCENARIOS[name]) as backend:
        code, lines, _, seconds = run(claude_cmd(), claude_env(backend, home), ws)
        assert len(backend.requests) == 1  # CLAUDE_CODE_MAX_RETRIES=0
    result = lines[-1]
    assert code == 1 and seconds < 15
    assert result["is_error"] and result["api_error_status"] == status


def _spawn(env: Mapping[str, str], ws: Path, stdout: int = subprocess.DEVNULL) -> subprocess.Popen[str]:
    return subprocess.Popen(
        claude_cmd(),
        cwd=ws,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )


def test_claude_stall_then_stop_does_not_hang(tmp_path: Path) -> None:
    ws, home = workspace(tmp_path, SCENARIOS["stall"])
    backend = ClaudeCodeBackend(SCENARIOS["stall"]).start()
    proc = _spawn(claude_env(backend, home), ws)
    try:
        deadline = time.monotonic() + DEADLINE
        while not backend.requests:  # a child process has no event to wait on: poll under a deadline
            assert time.monotonic() < deadline and proc.poll() is None, "claude never called the backend"
            time.sleep(0.02)
        time.sleep(0.2)  # let the stream open
        t0 = time.monotonic()
        backend.stop()
        assert time.monotonic() - t0 < 2
        assert proc.wait(20) == 1
    finally:
        backend.stop()
        if proc.poll() is None:
            _kill_group(proc)


def test_claude_retry_of_a_stalled_stream_stalls_too(tmp_path: Path) -> None:
    # Claude Code abandons a stream idle past CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS and retries it once without
    # streaming; a trailing Stall must hang that retry too, or the stall scenario would end in success.
    ws, home = workspace(tmp_path, SCENARIOS["stall"])
    backend = ClaudeCodeBackend(SCENARIOS["stall"]).start()
    env = {**claude_env(backend, home), "CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS": "10000"}
    proc = _spawn(env, ws, stdout=subprocess.PIPE)
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
