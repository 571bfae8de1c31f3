"""The provider end to end through the runner, against the fake claude CLI (fast, no Node, no model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_helpers import run_spec
from harness_core import (
    AgentRunSpec,
    ApprovalDecision,
    ApprovalPolicy,
    CliNotFoundError,
    CliVersionUnsupportedError,
    InvalidSpecError,
    SandboxMode,
    ToolKind,
    ToolStatus,
    open_run,
)
from harness_core.plugins import PluginHost
from harness_core.provider import REDACTED

from harness_claude.argv import build_argv, build_env, redacted_argv
from harness_claude.options import ClaudeOptions
from harness_claude.testing import write_fake_claude

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leftovers")]


def spec_for(tmp_path: Path, fake: Path, prompt: str, **kw: object) -> AgentRunSpec:
    opts = {"claude_bin": str(fake), **kw.pop("options", {})}  # type: ignore[dict-item]
    return AgentRunSpec(prompt=prompt, cwd=tmp_path, provider_options=opts, **kw)  # type: ignore[arg-type]


async def test_tools_turn(tmp_path: Path, fake_bin: Path, host: PluginHost) -> None:
    out = await run_spec(spec_for(tmp_path, fake_bin, "SCENARIO:tools"), host)
    assert out.result.status.value == "success" and out.result.final_text == "All four tools ran."
    kinds = [(e.display.kind, e.display.path) for e in out.of("tool_use")]
    assert kinds == [
        (ToolKind.SHELL, None),
        (ToolKind.READ, "notes.txt"),
        (ToolKind.EDIT, "notes.txt"),
        (ToolKind.WRITE, "new.txt"),
    ]
    assert [e.display.status for e in out.of("tool_result")] == [ToolStatus.COMPLETED] * 4
    assert "".join(e.text for e in out.of("text_delta")) == "All four tools ran."
    assert out.of("session_started")[0].session_id == out.result.session_id
    assert out.result.usage.output_tokens > 0 and out.result.usage.cost_usd


async def test_thinking(tmp_path: Path, fake_bin: Path, host: PluginHost) -> None:
    out = await run_spec(spec_for(tmp_path, fake_bin, "SCENARIO:think"), host)
    assert [e.text for e in out.of("reasoning_delta")] == ["Let me consider the question."]


@pytest.mark.parametrize(
    ("name", "code"), [("fail_500", "model_error"), ("fail_401", "auth_failed"), ("fail_429", "rate_limited")]
)
async def test_api_errors(tmp_path: Path, fake_bin: Path, host: PluginHost, name: str, code: str) -> None:
    out = await run_spec(spec_for(tmp_path, fake_bin, f"SCENARIO:{name}"), host)
    assert out.result.status.value == "failed" and out.result.error is not None
    assert out.result.error.code == code


@pytest.mark.parametrize("decision", [ApprovalDecision.APPROVE, ApprovalDecision.DENY])
async def test_approvals(
    tmp_path: Path, fake_bin: Path, host: PluginHost, decision: ApprovalDecision
) -> None:
    spec = spec_for(tmp_path, fake_bin, "SCENARIO:tools", approval=ApprovalPolicy.UNTRUSTED)
    seen = []
    out = await run_spec(spec, host, approver=lambda r: seen.append(r) or decision)
    assert [r.display.kind for r in seen] == [ToolKind.SHELL, ToolKind.EDIT, ToolKind.WRITE]
    resolved = out.of("approval_resolved")
    assert len(resolved) == 3 and all(e.decision is decision for e in resolved)
    want = ToolStatus.COMPLETED if decision is ApprovalDecision.APPROVE else ToolStatus.DECLINED
    assert out.of("tool_result")[0].display.status is want
    assert out.result.status.value == "success"


async def test_abort_decision_interrupts(tmp_path: Path, fake_bin: Path, host: PluginHost) -> None:
    spec = spec_for(tmp_path, fake_bin, "SCENARIO:tools", approval=ApprovalPolicy.UNTRUSTED)
    out = await run_spec(spec, host, approver=lambda r: ApprovalDecision.ABORT)
    assert out.result.status.value == "interrupted"


async def test_interrupt_while_streaming(tmp_path: Path, fake_bin: Path, host: PluginHost) -> None:
    out = await run_spec(
        spec_for(tmp_path, fake_bin, "SCENARIO:slow_text"), host, interrupt_on="text_delta", timeout=10
    )
    assert out.result.status.value == "interrupted"
    assert out.result.final_text and "a slow answer".startswith(out.result.final_text[:6])


async def test_interrupt_while_tool_runs(tmp_path: Path, fake_bin: Path, host: PluginHost) -> None:
    out = await run_spec(
        spec_for(tmp_path, fake_bin, "SCENARIO:slow_command"), host, interrupt_on="tool_use", timeout=10
    )
    assert out.result.status.value == "interrupted"
    assert out.of("tool_result")[0].display.status is ToolStatus.INTERRUPTED


async def test_resume_keeps_session(tmp_path: Path, fake_bin: Path, host: PluginHost) -> None:
    session = "0f6c1d2e-3a4b-4c5d-8e9f-0a1b2c3d4e5f"
    out = await run_spec(spec_for(tmp_path, fake_bin, "SCENARIO:say", resume_session=session), host)
    assert out.result.session_id == session and out.of("session_started")[0].resumed


async def test_resume_of_a_value_that_is_no_session_id_is_session_not_found(
    tmp_path: Path, fake_bin: Path, host: PluginHost
) -> None:
    out = await run_spec(spec_for(tmp_path, fake_bin, "SCENARIO:say", resume_session="sess-1"), host)
    err = out.result.error
    assert out.result.status.value == "failed" and err is not None and err.code == "session_not_found", err
    assert "'sess-1'" in err.message and "`harness runs`" in err.message


async def test_read_only_denies_writers(tmp_path: Path, fake_bin: Path, host: PluginHost) -> None:
    out = await run_spec(spec_for(tmp_path, fake_bin, "SCENARIO:tools", sandbox=SandboxMode.READ_ONLY), host)
    statuses = {e.name: e.display.status for e in out.of("tool_result")}
    assert statuses == {
        "Bash": ToolStatus.DECLINED,  # refused by policy (--tools), not a failure of the tool
        "Read": ToolStatus.COMPLETED,
        "Edit": ToolStatus.DECLINED,
        "Write": ToolStatus.DECLINED,
    }


async def test_process_death_is_process_exited(tmp_path: Path, host: PluginHost) -> None:
    (tmp_path / "bin").mkdir()
    crashing = write_fake_claude(tmp_path / "bin", crash=True)
    out = await run_spec(spec_for(tmp_path, crashing, "SCENARIO:slow_text"), host, timeout=10)
    err = out.result.error
    assert out.result.status.value == "failed" and err is not None and err.code == "process_exited"
    assert "simulated crash" in err.message and err.details["exit_code"] == 3
    first_line = err.message.splitlines()[0]  # the next step, before the stderr tail
    assert "--record-wire" in first_line and "-vv" in first_line and "`harness doctor`" in first_line


async def test_missing_and_old_cli(tmp_path: Path, host: PluginHost) -> None:
    with pytest.raises(CliNotFoundError, match="claude_bin"):
        async with open_run(spec_for(tmp_path, tmp_path / "nope", "hi"), "claude", host=host, run_log=False):
            pass
    (tmp_path / "old").mkdir()
    old = write_fake_claude(tmp_path / "old", version="2.0.1")
    with pytest.raises(CliVersionUnsupportedError, match=r"2\.1\.328"):
        async with open_run(spec_for(tmp_path, old, "hi"), "claude", host=host, run_log=False):
            pass


async def test_scenario_comes_from_the_writer_env_or_prompt(
    tmp_path: Path, host: PluginHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One scenario variable for every fake: the prompt's `SCENARIO:` wins, then `$HARNESS_FAKE_SCENARIO`, then
    the scenario baked into the wrapper."""
    baked = write_fake_claude(tmp_path, scenario="think")
    out = await run_spec(spec_for(tmp_path, baked, "no marker"), host)
    assert out.result.final_text == "Thought it through."
    out = await run_spec(spec_for(tmp_path, baked, "SCENARIO:say"), host)
    assert out.result.final_text == "Hello from the scripted model."
    monkeypatch.setenv("HARNESS_FAKE_SCENARIO", "tools")
    out = await run_spec(spec_for(tmp_path, baked, "no marker"), host)
    assert out.result.final_text == "All four tools ran."


async def test_bad_option_lists_valid_ones(tmp_path: Path, fake_bin: Path, host: PluginHost) -> None:
    with pytest.raises(InvalidSpecError, match="stream_idle_timeout_ms"):
        spec = spec_for(tmp_path, fake_bin, "hi", options={"stream_idle_timeout_ms": 5})
        async with open_run(spec, "claude", host=host, run_log=False):
            pass


async def test_approval_never_denies_what_would_prompt(tmp_path: Path, fake_bin: Path, host: PluginHost) -> None:
    """`--permission-prompts none`: a write the permission mode does not allow is denied, never asked."""
    spec = spec_for(tmp_path, fake_bin, "SCENARIO:tools", options={"permission_mode": "default"})
    asked: list[object] = []
    out = await run_spec(spec, host, approver=lambda r: asked.append(r) or ApprovalDecision.APPROVE)
    statuses = {e.name: e.display.status for e in out.of("tool_result")}
    assert statuses["Write"] is ToolStatus.DECLINED and statuses["Edit"] is ToolStatus.DECLINED
    assert statuses["Bash"] is ToolStatus.COMPLETED  # workspace-write + never allows Bash
    assert not asked and not out.of("approval_requested") and out.result.status.value == "success"


async def test_an_abandoned_approval_is_resolved_once_by_the_runner(
    tmp_path: Path, fake_bin: Path, host: PluginHost, caplog: pytest.LogCaptureFixture,
    recwarn: pytest.WarningsRecorder,
) -> None:
    """Like codex-appserver: an approval the turn ended on (interrupted while it waits) is ABORT, decided by the
    runner, which writes its one resolution; the provider writes none, so none is dropped as a duplicate."""

    async def never_answers(request: Any) -> ApprovalDecision:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    caplog.set_level("DEBUG", logger="harness")
    spec = spec_for(tmp_path, fake_bin, "SCENARIO:tools", approval=ApprovalPolicy.UNTRUSTED)
    out = await run_spec(spec, host, approver=never_answers, interrupt_on="approval_requested")  # type: ignore[arg-type]
    (requested,) = out.of("approval_requested")
    resolved = out.of("approval_resolved")
    assert [(r.request_id, r.decision, r.decided_by) for r in resolved] == [
        (requested.request_id, ApprovalDecision.ABORT, "runner")]
    assert not [r for r in caplog.records if "duplicate approval_resolved" in r.getMessage()]
    assert not [w for w in recwarn if "emitted approval_resolved" in str(w.message)]
    assert out.result.status.value == "interrupted"


def test_argv_log_redacts_secrets_and_prompts(tmp_path: Path) -> None:
    secret = '{"env": {"ANTHROPIC_API_KEY": "sk-secret"}}'
    spec = AgentRunSpec(prompt="p", cwd=tmp_path, system_prompt="private instructions")
    opts = ClaudeOptions(extra_args=("--settings", secret, "--mcp-config=cfg-secret", "--verbose"))
    shown = redacted_argv(build_argv("claude", spec, opts, is_root=False))
    text = " ".join(shown)
    assert "sk-secret" not in text and "private instructions" not in text and "cfg-secret" not in text
    assert shown[shown.index("--settings") + 1] == REDACTED and f"--mcp-config={REDACTED}" in shown
    assert shown[shown.index("--append-system-prompt") + 1] == REDACTED
    assert "--permission-mode" in shown and shown[-1] == "--verbose"


def test_argv_log_hides_the_specs_env_values(tmp_path: Path) -> None:
    """A secret passed in `spec.env` that also appears on the command line (in `extra_args`) is not logged."""
    shown = redacted_argv(["claude", "--model", "m", "--name=hunter2-token"], ("hunter2-token",))
    assert "hunter2-token" not in " ".join(shown) and shown[:3] == ["claude", "--model", "m"]


def test_spec_env_beats_default_idle_timeout(tmp_path: Path) -> None:
    spec = AgentRunSpec(prompt="p", cwd=tmp_path, env={"CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS": "90000"})
    assert build_env(spec, ClaudeOptions(), is_root=False, base={})["CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS"] == "90000"
    explicit = ClaudeOptions(stream_idle_timeout_ms=20_000)
    assert build_env(spec, explicit, is_root=False, base={})["CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS"] == "20000"
    assert build_env(AgentRunSpec(prompt="p", cwd=tmp_path), ClaudeOptions(), is_root=False, base={})[
        "CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS"
    ] == "60000"


def test_argv_log_keeps_continue_flag_neighbour(tmp_path: Path) -> None:
    assert redacted_argv(["claude", "-c", "--verbose"]) == ["claude", "-c", "--verbose"]


async def test_run_started_hides_the_values_of_secret_flags_in_extra_args(
    tmp_path: Path, fake_bin: Path, host: PluginHost
) -> None:
    """`-o extra_args=--settings,{"env":{...}}`: the runner knows from `ProviderInfo.secret_flags` that the
    value carries secrets, so `run_started` (and so the run log) shows `***` for it."""
    secret = '{"env":{"X":"hunter2-value"}}'
    args = ("--settings", secret, "--mcp-config=hunter2-cfg", "--verbose")
    out = await run_spec(spec_for(tmp_path, fake_bin, "SCENARIO:say", options={"extra_args": args}), host)
    (started,) = out.of("run_started")
    shown = started.spec["provider_options"]["extra_args"]  # type: ignore[attr-defined]
    assert shown == ["--settings", REDACTED, f"--mcp-config={REDACTED}", "--verbose"]
    assert "hunter2" not in started.model_dump_json()
