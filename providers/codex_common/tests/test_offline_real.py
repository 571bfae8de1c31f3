"""The real pinned codex runs whole turns offline against the scripted Responses backend, driven by hand with
`offline_args`/`offline_env` (no Harness provider involved): `codex exec --json` and `codex app-server`.

Marked `real_cli`; skipped, saying how to install codex, when it is missing (a failure instead under
HARNESS_REQUIRE_REAL_CLIS=1). Every child runs in its own session and is killed as a group when its deadline
passes.
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
from harness_core import CliNotFoundError
from harness_core.provider import locate_cli
from harness_core.scripted.backends import ResponsesBackend
from harness_core.scripted.scenarios import SCENARIOS, Scenario

from harness_codex_common import INSTALL_HINT, NATIVE_GLOBS, offline_args, offline_env

TOOLS = Path(os.environ.get("HARNESS_TOOLS_DIR") or Path(__file__).resolve().parents[3] / ".tools")
DEADLINE = 60.0


def _real_codex() -> Path | None:
    """$HARNESS_CODEX_BIN, else `bin/codex` under $HARNESS_TOOLS_DIR (default: the repo's .tools), else codex on
    PATH; resolved to the native binary behind npm's node wrapper, as the providers do."""
    wrapper = TOOLS / "bin" / "codex"
    explicit = os.environ.get("HARNESS_CODEX_BIN") or (str(wrapper) if wrapper.exists() else None)
    try:
        return locate_cli(
            "codex", explicit, install_hint=INSTALL_HINT, option_name="codex_bin", native_globs=NATIVE_GLOBS
        )
    except CliNotFoundError:
        return None


CODEX = _real_codex()
pytestmark = [
    pytest.mark.real_cli,
    pytest.mark.skipif(
        CODEX is None,
        reason=f"real codex not found under {TOOLS}/bin or on PATH (install it with scripts/install-clis.sh, or "
        "set HARNESS_TOOLS_DIR or HARNESS_CODEX_BIN); with HARNESS_REQUIRE_REAL_CLIS=1 this skip is a failure",
    ),
]


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


def codex_exec(backend: ResponsesBackend, ws: Path) -> list[str]:
    return [
        str(CODEX),
        "exec",
        "--json",
        "--skip-git-repo-check",
        "-C",
        str(ws),
        "-s",
        "workspace-write",
        *offline_args(backend),
        "play the scenario",
    ]


def codex_env(home: Path) -> dict[str, str]:
    """codex's environment, with a TMPDIR of its own beside the workspace, as the providers give it (with
    bubblewrap on the host codex's sandbox mounts a fresh directory over its TMPDIR: tox's, which holds the test's
    workspace, would hide it)."""
    tmp = home.parent / "codex-tmp"
    tmp.mkdir(mode=0o700, exist_ok=True)
    return {"CODEX_HOME": str(home), "TMPDIR": str(tmp), **offline_env()}


def completed(lines: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e["item"] for e in lines if e["type"] == "item.completed" and e["item"]["type"] == kind]


def test_codex_exec_runs_the_tools_scenario_for_real(tmp_path: Path) -> None:
    scenario = SCENARIOS["tools"]
    ws, home = workspace(tmp_path, scenario)
    with ResponsesBackend(scenario, cwd=ws) as backend:
        code, lines, err, _ = run(codex_exec(backend, ws), codex_env(home), ws)
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


def test_codex_exec_reasoning(tmp_path: Path) -> None:
    ws, home = workspace(tmp_path, SCENARIOS["think"])
    with ResponsesBackend(SCENARIOS["think"]) as backend:
        code, lines, err, _ = run(codex_exec(backend, ws), codex_env(home), ws)
    assert code == 0, err
    assert completed(lines, "reasoning")[0]["text"] == "Let me consider the question."
    assert completed(lines, "agent_message")[0]["text"] == "Thought it through."


@pytest.mark.parametrize(("name", "needle"), [("fail_500", ""), ("fail_401", "401")])
def test_codex_exec_fails_fast_on_api_errors(tmp_path: Path, name: str, needle: str) -> None:
    ws, home = workspace(tmp_path, SCENARIOS[name])
    with ResponsesBackend(SCENARIOS[name]) as backend:
        code, lines, _, seconds = run(codex_exec(backend, ws), codex_env(home), ws)
        assert len(backend.requests) == 1  # retries are off
    assert code == 1 and seconds < 15
    assert lines[-1]["type"] == "turn.failed" and needle in lines[-1]["error"]["message"]


class AppServer:
    """Just enough of a JSON-RPC client over the app-server's stdio for one turn."""

    def __init__(self, backend: ResponsesBackend, home: Path) -> None:
        cmd = [str(CODEX), "app-server", "--listen", "stdio://", *offline_args(backend)]
        self.proc = subprocess.Popen(
            cmd,
            env={**os.environ, **codex_env(home)},
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


def _deadline(proc: subprocess.Popen[str]) -> threading.Timer:
    timer = threading.Timer(DEADLINE, lambda: _kill_group(proc))
    timer.daemon = True
    timer.start()
    return timer


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


def test_codex_stall_then_stop_does_not_hang(tmp_path: Path) -> None:
    ws, home = workspace(tmp_path, SCENARIOS["stall"])
    backend = ResponsesBackend(SCENARIOS["stall"]).start()
    proc = subprocess.Popen(
        codex_exec(backend, ws),
        cwd=ws,
        env={**os.environ, **codex_env(home)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + DEADLINE
        while not backend.requests:  # a child process has no event to wait on: poll under a deadline
            assert time.monotonic() < deadline and proc.poll() is None, "codex never called the backend"
            time.sleep(0.02)
        time.sleep(0.2)  # let the stream open
        t0 = time.monotonic()
        backend.stop()
        assert time.monotonic() - t0 < 2
        assert proc.wait(20) == 1  # the stream broke and retries are off
    finally:
        backend.stop()
        if proc.poll() is None:
            _kill_group(proc)
