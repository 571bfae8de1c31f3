"""End-to-end: the real pinned codex app-server, offline against the scripted Responses backend.

Skipped when the real binary is not installed (scripts/install-clis.sh). Each test has its own workspace and
state directory (CODEX_HOME and HOME, from the provider's `offline_setup`); the autouse leak check asserts
no process is left behind.
"""

from __future__ import annotations

import os
import signal
import socket
from pathlib import Path
from typing import Any

import anyio
import pytest
from appserver_helpers import MISSING_CODEX, children, real_codex, run_real
from harness_core import AgentRunSpec, ApprovalDecision, ApprovalRequested, HarnessEvent, ToolKind, open_run
from harness_core.offline import SCENARIOS
from harness_core.plugins import PluginHost
from harness_core.scripted.scenarios import RunCommand, Say, Scenario

CODEX = real_codex()
pytestmark = [
    pytest.mark.real_cli,
    pytest.mark.anyio,
    pytest.mark.skipif(CODEX is None, reason=MISSING_CODEX),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "state"


async def _run(name: str, ws: Path, state: Path, host: PluginHost, **kw: Any) -> list[HarnessEvent]:
    assert CODEX is not None
    with anyio.fail_after(60):
        events, _ = await run_real(SCENARIOS[name], ws, state, CODEX, host, **kw)
    return events


async def test_command_read_edit_write_and_message(
    workspace: Path, state: Path, host: PluginHost
) -> None:
    events = await _run("tools", workspace, state, host)
    results = [e for e in events if e.type == "tool_result"]
    assert [(r.display.kind, r.display.title) for r in results] == [
        (ToolKind.SHELL, "Running command"),
        (ToolKind.READ, "Reading file"),
        (ToolKind.EDIT, "Editing file"),
        (ToolKind.WRITE, "Writing file"),
    ]
    assert results[0].display.exit_code == 0 and "harness-ok" in (results[0].display.summary or "")
    assert results[1].display.path == str(workspace / "notes.txt")
    assert (workspace / "notes.txt").read_text() == "beta\n" and (
        workspace / "new.txt"
    ).read_text() == "fresh\n"
    assert "".join(e.text for e in events if e.type == "text_delta") == "All four tools ran."
    result = events[-1].result  # type: ignore[union-attr]
    assert result.status.value == "success" and result.final_text == "All four tools ran."
    assert result.session_id and result.usage.input_tokens > 0


async def test_a_command_longer_than_codexs_default_wait_runs_to_its_end(
    workspace: Path, state: Path, host: PluginHost
) -> None:
    """Codex hands the model a command's output after 10 s by default: the scripted model asks it to wait, so a
    scenario's slow command (`slow_command`, for trying Ctrl-C) runs to its end instead of ending the turn."""
    assert CODEX is not None
    scenario = Scenario("slow", (RunCommand("echo waiting; sleep 13", output="waiting\n"), Say("done sleeping")))
    with anyio.fail_after(60):
        events, _ = await run_real(scenario, workspace, state, CODEX, host)
    (result,) = [e for e in events if e.type == "tool_result"]
    assert result.display.exit_code == 0 and not result.is_error, result
    assert events[-1].result.status.value == "success"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("decision", "status"),
    [
        (ApprovalDecision.APPROVE, "success"),
        (ApprovalDecision.DENY, "success"),
        (ApprovalDecision.ABORT, "interrupted"),
    ],
)
async def test_approvals(
    workspace: Path, state: Path, host: PluginHost, decision: ApprovalDecision, status: str
) -> None:
    asked: list[ApprovalRequested] = []

    def approver(request: ApprovalRequested) -> ApprovalDecision:
        asked.append(request)
        return decision

    events = await _run("tools", workspace, state, host, approver=approver, approval="untrusted")
    assert asked and asked[0].display.command == "echo harness-ok"
    assert events[-1].result.status.value == status  # type: ignore[union-attr]
    changed = (workspace / "notes.txt").read_text() == "beta\n"
    assert changed is (decision is ApprovalDecision.APPROVE)
    if decision is ApprovalDecision.APPROVE:
        assert [a.display.kind for a in asked] == [
            ToolKind.SHELL,
            ToolKind.READ,
            ToolKind.EDIT,
            ToolKind.WRITE,
        ]


@pytest.mark.parametrize(("scenario", "trigger"), [("slow_command", "tool_use"), ("slow_text", "text_delta")])
async def test_interrupt(
    workspace: Path, state: Path, host: PluginHost, scenario: str, trigger: str
) -> None:
    def on_event(event: HarnessEvent, live: Any) -> None:
        if event.type == trigger:
            live.interrupt()

    with anyio.fail_after(30):
        events = await _run(scenario, workspace, state, host, on_event=on_event)
    result = events[-1].result  # type: ignore[union-attr]
    assert result.status.value == "interrupted" and result.error is not None
    assert result.error.code == "interrupted" and result.error.details.get("stopped_by") == "provider"


async def test_resume_in_second_run(tmp_path: Path, state: Path, host: PluginHost) -> None:
    first_ws, second_ws = tmp_path / "a", tmp_path / "b"
    first_ws.mkdir()
    second_ws.mkdir()
    first = await _run("say", first_ws, state, host)
    session = first[-1].result.session_id  # type: ignore[union-attr]
    second = await _run("think", second_ws, state, host, resume_session=session)
    started = next(e for e in second if e.type == "session_started")
    assert started.resumed and started.session_id == session
    result = second[-1].result  # type: ignore[union-attr]
    assert result.status.value == "success" and result.final_text == "Thought it through."
    before = first[-1].result.usage  # type: ignore[union-attr]
    assert 0 < result.usage.output_tokens <= before.output_tokens + 20  # this run only, not the thread total


@pytest.mark.parametrize(("scenario", "code"), [("fail_500", "model_error"), ("fail_401", "auth_failed")])
async def test_backend_failures_classified(
    workspace: Path, state: Path, host: PluginHost, scenario: str, code: str
) -> None:
    events = await _run(scenario, workspace, state, host)
    assert [e.error.code for e in events if e.type == "error"] == [code]
    result = events[-1].result  # type: ignore[union-attr]
    assert result.status.value == "failed" and result.error.code == code


async def test_stalled_backend_caught_by_idle_timeout(
    workspace: Path, state: Path, host: PluginHost
) -> None:
    events = await _run("stall", workspace, state, host, idle_timeout=2.0)
    result = events[-1].result  # type: ignore[union-attr]
    assert result.status.value == "failed" and result.error.code == "idle_timeout"


async def test_app_server_killed_mid_turn(workspace: Path, state: Path, host: PluginHost) -> None:
    def on_event(event: HarnessEvent, live: Any) -> None:
        if event.type == "tool_use":
            for pid in children():
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as fh:
                        argv = fh.read().split(b"\0")
                except OSError:
                    continue
                if len(argv) > 1 and argv[0].endswith(b"codex") and argv[1] == b"app-server":
                    os.kill(pid, signal.SIGKILL)

    with anyio.fail_after(30):
        events = await _run("slow_command", workspace, state, host, on_event=on_event)
    result = events[-1].result  # type: ignore[union-attr]
    assert result.status.value == "failed" and result.error.code == "process_exited"
    assert "SIGKILL" in result.error.message


async def test_read_only_sandbox_shows_the_refused_edit_and_write(
    workspace: Path, state: Path, host: PluginHost
) -> None:
    events = await _run("tools", workspace, state, host, sandbox="read-only")
    results = [(e.display.kind, e.display.status.value) for e in events if e.type == "tool_result"]
    assert results == [
        (ToolKind.SHELL, "completed"),
        (ToolKind.READ, "completed"),
        (ToolKind.EDIT, "declined"),
        (ToolKind.WRITE, "declined"),
    ]
    assert (workspace / "notes.txt").read_text() == "alpha\n" and not (workspace / "new.txt").exists()


async def test_resume_of_an_unknown_thread_is_session_not_found(
    workspace: Path, state: Path, host: PluginHost
) -> None:
    events = await _run("say", workspace, state, host, resume_session="0199a213-81c0-7800-8aa1-bbab2a035a53")
    result = events[-1].result  # type: ignore[union-attr]
    assert result.status.value == "failed" and result.error.code == "session_not_found"
    assert "0199a213-81c0-7800-8aa1-bbab2a035a53" in result.error.message and "harness runs" in result.error.message


async def test_endless_reconnecting_to_a_closed_port_fails_after_max_reconnects(
    workspace: Path, state: Path, host: PluginHost
) -> None:
    """Codex's default "waiting for network" mode retries forever (5, 10, 20 s ... apart); the provider ends
    the run once the notices pass `max_reconnects` (1 here: about 10 s)."""
    assert CODEX is not None
    with socket.socket() as sock:  # a port nobody listens on (bound, then closed)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}/v1"
    home = state / "codex-home"
    home.mkdir(parents=True)
    spec = AgentRunSpec(
        prompt="hello",
        cwd=workspace,
        env={"HARNESS_MOCK_API_KEY": "x", "HOME": str(workspace)},
        provider_options={
            "codex_bin": str(CODEX),
            "codex_home": str(home),
            "disable": ["plugins"],  # unbounded_connection_retries stays on, as for a user
            "max_reconnects": 1,
            "config": {
                "model_provider": '"mock"',
                "model": '"gpt-5.5"',
                "model_providers.mock": f'{{name="mock", base_url="{base_url}", wire_api="responses", '
                'env_key="HARNESS_MOCK_API_KEY"}',
            },
        },
    )
    events: list[HarnessEvent] = []
    with anyio.fail_after(45):
        async with open_run(spec, "codex-appserver", host=host, run_log=False) as live:
            events = [event async for event in live]
    notices = [e for e in events if e.type == "notice" and e.code != "cli_warning"]  # (e.g. no bubblewrap here)
    assert [n.code for n in notices] == ["reconnecting", "reconnecting"]
    assert [e.error.code for e in events if e.type == "error"] == ["model_error"]  # no error per retry
    result = events[-1].result  # type: ignore[union-attr]
    assert result.status.value == "failed" and result.error.code == "model_error"
    assert result.error.message.startswith(f"the agent could not reach its model API at {base_url} after 2 attempts")
