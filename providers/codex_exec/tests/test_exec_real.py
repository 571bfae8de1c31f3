"""End to end with the real pinned codex (0.169.0) against the scripted Responses backend, offline.

Skipped when the binary is not installed (`scripts/install-clis.sh`). Each test gets its own workspace and
state directory (CODEX_HOME and HOME), set up by the provider's own `offline_setup` (the one `harness run
--offline` uses); the backend listens on 127.0.0.1 only.
"""

from __future__ import annotations

import json
import os
import signal
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from exec_helpers import MISSING_CODEX, real_codex
from harness_codex_common import offline_setup

from harness_core import AgentRunSpec, HarnessEvent, RunStatus, open_run
from harness_core.offline import SCENARIOS, Scenario, seed_workspace
from harness_core.plugins import PluginHost
from harness_core.scripted.backends import ScriptedBackend
from harness_core.scripted.scenarios import Say

CODEX = real_codex()

pytestmark = [
    pytest.mark.real_cli,
    pytest.mark.anyio,
    pytest.mark.skipif(CODEX is None, reason=MISSING_CODEX),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextmanager
def _offline(tmp_path: Path, scenario: Scenario, **kwargs: Any) -> Iterator[tuple[ScriptedBackend, AgentRunSpec]]:
    """The scripted backend playing `scenario` (serving while in the block) and a spec for the real codex
    against it, in `tmp_path/ws` with its state in `tmp_path/state` (the same for two runs of one test)."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    seed_workspace(scenario, ws)
    setup = offline_setup(scenario, ws, tmp_path / "state")
    assert CODEX is not None and setup.backend is not None
    spec = AgentRunSpec(
        prompt="do the scripted work",
        cwd=ws,
        env=setup.env,
        provider_options={**setup.provider_options, "codex_bin": CODEX},
        **kwargs,
    )
    with setup.backend as backend:
        yield backend, spec


async def _run(host: PluginHost, spec: AgentRunSpec, on_event: Any = None) -> tuple[Any, list[HarnessEvent]]:
    events: list[HarnessEvent] = []
    with anyio.fail_after(60):
        async with open_run(spec, "codex-exec", host=host, run_log=False) as live:
            async for event in live:
                events.append(event)
                if on_event is not None:
                    on_event(live, event)
            return await live.wait(), events


async def _left_running(ws: Path, settle: float = 3.0) -> list[str]:
    """What still runs in the workspace once short-lived helpers had `settle` seconds to end on their own.

    The login profile here (pyenv) forks tiny helpers such as `sleep 0.1` that may outlive codex by a moment;
    a process with no event to wait on can only be polled, so this polls under a deadline.
    """
    found = _running_in(ws)
    with anyio.move_on_after(settle):
        while found:
            await anyio.sleep(0.05)
            found = _running_in(ws)
    return found


def _running_in(ws: Path) -> list[str]:
    """Processes whose working directory is the workspace (codex and anything it ran)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(os.readlink(entry / "cwd")) == ws:
                    found.append(f"{entry.name}: {(entry / 'cmdline').read_bytes()!r}")
            except OSError:
                continue
    return found


async def test_command_read_edit_write_and_message(host: PluginHost, tmp_path: Path) -> None:
    with _offline(tmp_path, SCENARIOS["tools"]) as (_, spec):
        result, events = await _run(host, spec)
    assert result.status is RunStatus.SUCCESS, result.error
    assert result.final_text == "All four tools ran."
    ws = spec.cwd
    uses = [(e.display.kind.value, e.display.title, e.display.path) for e in events if e.type == "tool_use"]
    assert uses == [
        ("shell", "Running command", None),
        ("read", "Reading file", str(ws / "notes.txt")),
        ("edit", "Editing file", str(ws / "notes.txt")),
        ("write", "Writing file", str(ws / "new.txt")),
    ]
    assert (ws / "notes.txt").read_text() == "beta\n" and (ws / "new.txt").read_text() == "fresh\n"
    run_started = events[0]
    assert run_started.type == "run_started" and run_started.cli_version == "0.169.0"
    assert result.usage.input_tokens > 0 and not await _left_running(ws)


async def test_resume_continues_the_thread(host: PluginHost, tmp_path: Path) -> None:
    with _offline(tmp_path, SCENARIOS["say"], system_prompt="Be brief.") as (backend, spec):
        first, _ = await _run(host, spec)
        first_request = str(backend.exchanges[0].body)
    again = Scenario("again", (Say("Resumed and done."),))
    with _offline(tmp_path, again, resume_session=first.session_id) as (_, spec):
        second, events = await _run(host, spec)
    assert second.status is RunStatus.SUCCESS and second.final_text == "Resumed and done."
    assert second.session_id == first.session_id
    started = next(e for e in events if e.type == "session_started")
    usage = next(e for e in events if e.type == "context_usage")
    assert started.resumed is True and usage.cumulative is False
    assert 0 < second.usage.input_tokens < first.usage.input_tokens + second.usage.input_tokens
    assert "Be brief." in first_request  # system_prompt → -c developer_instructions


@pytest.mark.parametrize(
    ("name", "code"), [("fail_401", "auth_failed"), ("fail_429", "rate_limited"), ("fail_500", "model_error")]
)
async def test_backend_failure_is_classified(host: PluginHost, tmp_path: Path, name: str, code: str) -> None:
    with _offline(tmp_path, SCENARIOS[name]) as (_, spec):
        result, events = await _run(host, spec)
    assert result.status is RunStatus.FAILED and result.error is not None and result.error.code == code
    assert [e.error.code for e in events if e.type == "error"] == [code]


async def test_interrupt_mid_command_leaves_nothing_running(host: PluginHost, tmp_path: Path) -> None:
    scenario = SCENARIOS["slow_command"]

    def stop_on_tool(live: Any, event: HarnessEvent) -> None:
        if event.type == "tool_use":
            live.interrupt()

    with _offline(tmp_path, scenario) as (_, spec):
        started = anyio.current_time()
        result, _ = await _run(host, spec, stop_on_tool)
    assert result.status is RunStatus.INTERRUPTED and result.session_id is not None
    assert anyio.current_time() - started < 15
    assert not await _left_running(spec.cwd)


async def test_codex_killed_mid_turn(host: PluginHost, tmp_path: Path) -> None:
    scenario = SCENARIOS["slow_command"]
    ws = tmp_path / "ws"

    def kill_codex(live: Any, event: HarnessEvent) -> None:
        if event.type != "tool_use":
            return
        for entry in Path("/proc").iterdir():
            try:
                if (
                    entry.name.isdigit()
                    and (entry / "comm").read_text().strip() == "codex"
                    and Path(os.readlink(entry / "cwd")) == ws
                ):
                    os.kill(int(entry.name), signal.SIGKILL)
            except OSError:
                continue

    with _offline(tmp_path, scenario) as (_, spec):
        result, _ = await _run(host, spec, kill_codex)
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.code == "process_exited" and result.error.details["exit_code"] == -9
    assert not await _left_running(ws)


async def test_read_only_sandbox_shows_the_refused_edit_and_write(host: PluginHost, tmp_path: Path) -> None:
    with _offline(tmp_path, SCENARIOS["tools"], sandbox="read-only") as (_, spec):
        result, events = await _run(host, spec)
    assert result.status is RunStatus.SUCCESS
    shown = [(e.display.kind.value, e.display.status.value) for e in events if e.type == "tool_result"]
    assert shown == [("shell", "completed"), ("read", "completed"), ("edit", "declined"), ("write", "declined")]
    assert (tmp_path / "ws" / "notes.txt").read_text() == "alpha\n"


async def test_resume_of_an_unknown_thread_is_session_not_found(host: PluginHost, tmp_path: Path) -> None:
    thread = "0199a213-81c0-7800-8aa1-bbab2a035a53"
    with _offline(tmp_path, SCENARIOS["say"], resume_session=thread) as (_, spec):
        result, _ = await _run(host, spec)
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.code == "session_not_found" and thread in result.error.message


async def test_endless_reconnecting_to_a_closed_port_fails_at_once_with_max_reconnects_0(
    host: PluginHost, tmp_path: Path
) -> None:
    """Codex's default "waiting for network" mode would retry forever; `max_reconnects=0` ends the run at
    the first reconnect notice, and codex is stopped."""
    with socket.socket() as sock:  # a port nobody listens on (bound, then closed)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}/v1"
    ws, home = tmp_path / "ws", tmp_path / "codex-home"
    ws.mkdir()
    home.mkdir()
    assert CODEX is not None
    spec = AgentRunSpec(
        prompt="hello",
        cwd=ws,
        env={"HARNESS_MOCK_API_KEY": "x", "HOME": str(tmp_path)},
        provider_options={
            "codex_bin": CODEX,
            "codex_home": str(home),
            "disable": ["plugins"],  # unbounded_connection_retries stays on, as for a user
            "max_reconnects": 0,
            "config": {
                "model_provider": '"mock"',
                "model": '"gpt-5.5"',
                "model_providers.mock": f'{{name="mock", base_url="{base_url}", wire_api="responses", '
                'env_key="HARNESS_MOCK_API_KEY"}',
            },
        },
    )
    with anyio.fail_after(30):
        result, events = await _run(host, spec)
    assert [e.type for e in events if e.type in ("notice", "error")] == ["notice", "error"]
    assert result.status is RunStatus.FAILED and result.error is not None and result.error.code == "model_error"
    assert result.error.message.startswith(f"the agent could not reach its model API at {base_url} after 1 attempt ")
    assert await _left_running(ws) == []


def _rollouts(home: Path) -> str:
    """Every rollout file codex kept under `home` (its CODEX_HOME), as one text."""
    return "".join(path.read_text() for path in sorted(home.rglob("rollout-*.jsonl")))


async def test_the_prompt_goes_on_stdin_never_in_the_command_line(host: PluginHost, tmp_path: Path) -> None:
    """`/proc/PID/cmdline` is readable by every local user: codex gets the prompt on stdin (`-`)."""
    prompt = "the private prompt 5b1e\n  on two lines"
    seen: list[str] = []

    def look(_live: Any, event: HarnessEvent) -> None:
        if event.type == "session_started":  # codex is playing the turn: its command line is there to read
            seen.extend(_running_in(spec.cwd))

    with _offline(tmp_path, SCENARIOS["say"]) as (backend, spec):
        spec = spec.model_copy(update={"prompt": prompt})
        result, _ = await _run(host, spec, look)
        bodies = [str(body) for body in backend.requests]
    assert result.status is RunStatus.SUCCESS, result.error
    assert seen and not any("private prompt" in line for line in seen), seen
    assert any("the private prompt 5b1e\\n  on two lines" in body for body in bodies)  # whole, as given
    home = Path(spec.provider_options["codex_home"])
    assert json.dumps(prompt)[1:-1] in _rollouts(home)
