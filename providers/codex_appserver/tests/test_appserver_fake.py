"""The provider against the fake app-server (no Node, no binaries), through the real runner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from harness_core import (
    AgentRunSpec,
    ApprovalDecision,
    ApprovalRequested,
    CliNotFoundError,
    CliVersionUnsupportedError,
    HarnessEvent,
    ToolKind,
    open_run,
    run,
)
from harness_core.plugins import PluginHost

from harness_codex_appserver.argv import build_argv
from harness_codex_appserver.options import CodexAppServerOptions
from harness_codex_appserver.testing import write_fake_codex

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _spec(ws: Path, home: Path, codex: Path, **kw: Any) -> AgentRunSpec:
    opts = {"codex_bin": str(codex), "codex_home": str(home), **kw.pop("options", {})}
    return AgentRunSpec(prompt="do the thing", cwd=ws, provider_options=opts, **kw)


async def _collect(spec: AgentRunSpec, host: PluginHost, **kw: Any) -> list[HarnessEvent]:
    events: list[HarnessEvent] = []
    with anyio.fail_after(20):
        async with open_run(spec, "codex-appserver", host=host, run_log=False, **kw) as live:
            async for event in live:
                events.append(event)
    return events


def _types(events: list[HarnessEvent]) -> list[str]:
    return [e.type for e in events]


async def test_tools_turn_maps_every_tool(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    codex = write_fake_codex(tmp_path, scenario="tools")
    events = await _collect(_spec(workspace, codex_home, codex), host)
    assert _types(events)[0] == "run_started" and _types(events)[-1] == "done"
    assert [e.seq for e in events] == list(range(len(events)))
    results = [e for e in events if e.type == "tool_result"]
    assert [(r.display.kind, r.display.status.value) for r in results] == [
        (ToolKind.SHELL, "completed"),
        (ToolKind.READ, "completed"),
        (ToolKind.EDIT, "completed"),
        (ToolKind.WRITE, "completed"),
    ]
    shell, read = results[0].display, results[1].display
    assert shell.command == "echo harness-ok" and shell.exit_code == 0 and shell.title == "Running command"
    assert read.title == "Reading file" and read.path == str(workspace / "notes.txt")
    assert results[3].display.title == "Writing file"
    done = events[-1]
    assert done.type == "done"
    assert done.result.status.value == "success"
    assert done.result.final_text == "All four tools ran."
    session = next(e for e in events if e.type == "session_started")
    assert done.result.session_id == session.session_id
    assert done.result.usage.input_tokens == 50  # five model calls of 10 input tokens each, this run only
    assert "".join(e.text for e in events if e.type == "text_delta") == "All four tools ran."
    assert any(e.type == "tool_summary" and e.kind == "output" and "harness-ok" in e.text for e in events)


async def test_reasoning_is_streamed(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    events = await _collect(_spec(workspace, codex_home, write_fake_codex(tmp_path, scenario="think")), host)
    assert [e.text for e in events if e.type == "reasoning_delta"] == ["Let me consider the question."]


@pytest.mark.parametrize(
    ("scenario", "code"),
    [("fail_500", "model_error"), ("fail_401", "auth_failed"), ("fail_429", "rate_limited")],
)
async def test_backend_failures_are_classified(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost, scenario: str, code: str
) -> None:
    events = await _collect(_spec(workspace, codex_home, write_fake_codex(tmp_path, scenario=scenario)), host)
    errors = [e for e in events if e.type == "error"]
    assert [e.error.code for e in errors] == [code]
    result = events[-1].result  # type: ignore[union-attr]
    assert result.status.value == "failed" and result.error is not None and result.error.code == code


@pytest.mark.parametrize(
    ("decision", "status", "tool_status"),
    [
        (ApprovalDecision.APPROVE, "success", "completed"),
        (ApprovalDecision.DENY, "success", "declined"),
        (ApprovalDecision.ABORT, "interrupted", "declined"),
    ],
)
async def test_approvals(
    tmp_path: Path,
    workspace: Path,
    codex_home: Path,
    host: PluginHost,
    decision: ApprovalDecision,
    status: str,
    tool_status: str,
) -> None:
    asked: list[ApprovalRequested] = []

    def approver(request: ApprovalRequested) -> ApprovalDecision:
        asked.append(request)
        return decision

    spec = _spec(workspace, codex_home, write_fake_codex(tmp_path, scenario="tools"), approval="untrusted")
    events = await _collect(spec, host, approver=approver)
    first = asked[0]
    assert first.display.kind is ToolKind.SHELL and first.display.command == "echo harness-ok"
    assert first.tool_id == "call_1"
    resolved = [e for e in events if e.type == "approval_resolved"]
    assert resolved and resolved[0].decision is decision
    results = [e for e in events if e.type == "tool_result"]
    assert results[0].display.status.value == tool_status
    assert events[-1].result.status.value == status  # type: ignore[union-attr]
    if decision is ApprovalDecision.APPROVE:  # every command and patch was asked about
        assert [a.display.kind for a in asked] == [
            ToolKind.SHELL,
            ToolKind.READ,
            ToolKind.EDIT,
            ToolKind.WRITE,
        ]
        assert asked[2].display.path == str(workspace / "notes.txt")


@pytest.mark.parametrize(("scenario", "trigger"), [("slow_command", "tool_use"), ("slow_text", "text_delta")])
async def test_interrupt(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost, scenario: str, trigger: str
) -> None:
    spec = _spec(workspace, codex_home, write_fake_codex(tmp_path, scenario=scenario))
    events: list[HarnessEvent] = []
    with anyio.fail_after(10):
        async with open_run(spec, "codex-appserver", host=host, run_log=False) as live:
            async for event in live:
                events.append(event)
                if event.type == trigger:
                    live.interrupt()
    result = events[-1].result  # type: ignore[union-attr]
    assert result.status.value == "interrupted"
    assert result.error is not None and result.error.details.get("stopped_by") == "provider"  # not a hard stop
    if scenario == "slow_command":  # the running command got its result: cut short by the interrupt
        assert [e.display.status.value for e in events if e.type == "tool_result"] == ["interrupted"]
    # the fake's rollout ends the turn as codex's does: aborted, never completed
    assert _rollout_ends(codex_home) == [["task_started", "turn_aborted"]]


def _rollout_ends(home: Path) -> list[list[str]]:
    """Each rollout file's turn records (`task_started`, `task_complete`, `turn_aborted`), in order."""
    return [[r["payload"]["type"] for r in map(json.loads, path.read_text().splitlines())
             if r.get("type") == "event_msg"] for path in sorted((home / "sessions").glob("rollout-*.jsonl"))]


async def test_the_fakes_rollout_records_a_finished_turn(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    """As codex does, the turn's `task_started` and `task_complete` (the provider reads the finished turn there:
    without them it waits its full second at the end of every turn); an ephemeral thread has no file."""
    events = await _collect(_spec(workspace, codex_home, write_fake_codex(tmp_path, scenario="say")), host)
    assert events[-1].result.status.value == "success"  # type: ignore[union-attr]
    assert _rollout_ends(codex_home) == [["task_started", "task_complete"]]


async def test_a_withdrawn_approval_is_resolved_once_by_the_runner(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost, caplog: pytest.LogCaptureFixture,
    recwarn: pytest.WarningsRecorder,
) -> None:
    """An interrupt while an approval waits: Codex ends the turn and withdraws the request. The provider withdraws
    it through the runner, which writes its one `approval_resolved`; nobody offers a second one."""
    async def never_answers(request: ApprovalRequested) -> ApprovalDecision:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    caplog.set_level("DEBUG", logger="harness")
    spec = _spec(workspace, codex_home, write_fake_codex(tmp_path, scenario="tools"), approval="untrusted")
    events: list[HarnessEvent] = []
    with anyio.fail_after(20):
        async with open_run(spec, "codex-appserver", host=host, run_log=False, approver=never_answers) as live:
            async for event in live:
                events.append(event)
                if event.type == "approval_requested":
                    live.interrupt()
    (requested,) = [e for e in events if e.type == "approval_requested"]
    resolved = [e for e in events if e.type == "approval_resolved"]
    assert [(r.request_id, r.decision, r.decided_by) for r in resolved] == [
        (requested.request_id, ApprovalDecision.ABORT, "runner")]
    assert resolved[0].reason in ("the run ended before a decision was made", "codex withdrew the request")
    assert not [r for r in caplog.records if "duplicate approval_resolved" in r.getMessage()]
    assert not [w for w in recwarn if "emitted approval_resolved" in str(w.message)]  # the provider wrote none
    assert events[-1].result.status.value == "interrupted"  # type: ignore[union-attr]


async def test_the_run_env_chooses_the_fake_scenario_over_the_wrappers_default(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    codex = write_fake_codex(tmp_path, scenario="say")
    spec = _spec(workspace, codex_home, codex, env={"HARNESS_FAKE_SCENARIO": "think"})
    events = await _collect(spec, host)
    assert [e.text for e in events if e.type == "reasoning_delta"] == ["Let me consider the question."]
    default = await _collect(_spec(workspace, codex_home, codex), host)
    assert not [e for e in default if e.type == "reasoning_delta"]
    assert default[-1].result.final_text  # type: ignore[union-attr]


async def test_resume_in_second_run(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    codex = write_fake_codex(tmp_path, scenario="say")
    first = await _collect(_spec(workspace, codex_home, codex), host)
    session_id = first[-1].result.session_id  # type: ignore[union-attr]
    assert session_id
    second = await _collect(_spec(workspace, codex_home, codex, resume_session=session_id), host)
    started = next(e for e in second if e.type == "session_started")
    assert started.session_id == session_id and started.resumed
    result = second[-1].result  # type: ignore[union-attr]
    assert result.status.value == "success" and result.session_id == session_id
    assert result.usage.input_tokens == 10  # this run's call only, not the thread's total of 20


async def test_resume_unknown_session_says_what_to_check(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    spec = _spec(
        workspace,
        codex_home,
        write_fake_codex(tmp_path, scenario="say"),
        resume_session="00000000-0000-0000-0000-000000000000",
    )
    events = await _collect(spec, host)
    result = events[-1].result  # type: ignore[union-attr]
    assert result.status.value == "failed" and result.error is not None
    assert result.error.code == "session_not_found" and "CODEX_HOME" in result.error.message
    assert "00000000-0000-0000-0000-000000000000" in result.error.message and "harness runs" in result.error.message


async def test_process_dies_mid_turn(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    codex = write_fake_codex(tmp_path, scenario="tools", crash=True)
    events = await _collect(_spec(workspace, codex_home, codex), host)
    result = events[-1].result  # type: ignore[union-attr]
    assert result.status.value == "failed" and result.error is not None
    assert result.error.code == "process_exited"
    assert "simulated crash" in result.error.message
    assert result.error.details["exit_code"] == 101


async def test_too_old_cli_is_refused_before_spawning(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    codex = write_fake_codex(tmp_path, scenario="say", version="0.100.0")
    with pytest.raises(CliVersionUnsupportedError) as info:
        await run(_spec(workspace, codex_home, codex), "codex-appserver", host=host, run_log=False)
    assert "0.100.0" in info.value.message and "0.169.0" in info.value.message


async def test_missing_cli_says_how_to_install(
    tmp_path: Path, workspace: Path, codex_home: Path, host: PluginHost
) -> None:
    with pytest.raises(CliNotFoundError) as info:
        await run(
            _spec(workspace, codex_home, tmp_path / "nope"), "codex-appserver", host=host, run_log=False
        )
    assert "npm install" in info.value.message and "codex_bin" in info.value.message


def test_options_become_flags() -> None:
    opts = CodexAppServerOptions.model_validate(
        {
            "config.model": "gpt-5.5",
            "config": {"sandbox_workspace_write.network_access": True},
            "enable": "a,b",
            "disable": ["plugins"],
        }
    )
    assert build_argv("codex", opts) == [
        "codex",
        "app-server",
        "--listen",
        "stdio://",
        "-c",
        "sandbox_workspace_write.network_access=true",
        "-c",
        "model=gpt-5.5",
        "--enable",
        "a",
        "--enable",
        "b",
        "--disable",
        "plugins",
    ]


def test_registered_through_entry_point() -> None:
    host = PluginHost.create()
    assert "codex-appserver" in host.names()
    assert host.get("codex-appserver").distribution == "harness-codex-appserver"
