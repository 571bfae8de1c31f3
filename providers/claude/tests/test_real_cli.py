"""End to end with the real pinned Claude Code against a scripted Anthropic Messages backend on 127.0.0.1.

The backend and the environment come from the provider's own `offline_setup` (what `harness run --offline`
uses): fully isolated (own HOME / CLAUDE_CONFIG_DIR / CLAUDE_CODE_TMPDIR, nonessential traffic off); the
options are each test's own (retries off, settings files loaded as a user's run would).
Marked `real_cli`; skipped with a reason when the binary is missing (install it with scripts/install-clis.sh),
which fails instead under HARNESS_REQUIRE_REAL_CLIS=1. asyncio only: trio is covered by the fake tests.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_helpers import CLAUDE, Outcome, children_of, needs_real_claude, run_spec
from harness_core import AgentRunSpec, ApprovalDecision, ApprovalPolicy, SandboxMode, ToolKind, ToolStatus, open_run
from harness_core.plugins import PluginHost
from harness_core.scripted.backends import ScriptedBackend
from harness_core.scripted.scenarios import SCENARIOS, RunCommand, Say, Scenario, WriteFile

from harness_claude.argv import build_argv
from harness_claude.options import ClaudeOptions
from harness_claude.permissions import READ_ONLY_TOOLS
from harness_claude.provider import ClaudeProvider

pytestmark = [*needs_real_claude, pytest.mark.anyio, pytest.mark.usefixtures("no_leftovers")]
TOUCH = Scenario("touch", (RunCommand("touch touched.txt"), Say("after permission")))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def offline(tmp_path: Path, scenario: Scenario) -> tuple[ScriptedBackend, dict[str, str], Path]:
    """The provider's offline setup for `scenario` — a bound scripted Messages backend (enter it to serve) and
    the environment pointing Claude Code at it — and the workspace, with the scenario's files. The state dir
    is the same for every call in one test, so a second run can resume the first's session."""
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir(exist_ok=True)
    state.mkdir(exist_ok=True)
    for rel, content in scenario.files.items():
        (ws / rel).write_text(content)
    setup = ClaudeProvider().offline_setup(scenario, ws, state)
    assert setup.backend is not None
    return setup.backend, setup.env, ws


async def play(tmp_path: Path, host: PluginHost, scenario: Scenario, **kw: Any) -> tuple[Outcome, Path]:
    run_kw = {k: kw.pop(k) for k in ("approver", "interrupt_on", "timeout") if k in kw}
    options = {"claude_bin": CLAUDE, "max_retries": 0, **kw.pop("options", {})}
    backend, env, ws = offline(tmp_path, scenario)
    with backend:
        spec = AgentRunSpec(prompt=f"SCENARIO:{scenario.name}", cwd=ws, env=env, provider_options=options, **kw)
        return await run_spec(spec, host, **run_kw), ws


async def test_tools_turn(tmp_path: Path, host: PluginHost) -> None:
    out, ws = await play(tmp_path, host, SCENARIOS["tools"])
    assert out.result.status.value == "success" and out.result.final_text == "All four tools ran."
    assert [e.display.kind for e in out.of("tool_use")] == [
        ToolKind.SHELL,
        ToolKind.READ,
        ToolKind.EDIT,
        ToolKind.WRITE,
    ]
    assert [e.display.status for e in out.of("tool_result")] == [ToolStatus.COMPLETED] * 4
    assert out.of("tool_result")[0].display.exit_code == 0
    assert (ws / "notes.txt").read_text() == "beta\n" and (ws / "new.txt").read_text() == "fresh\n"
    assert "".join(e.text for e in out.of("text_delta")) == "All four tools ran."
    assert out.result.usage.output_tokens > 0


async def test_thinking(tmp_path: Path, host: PluginHost) -> None:
    out, _ = await play(tmp_path, host, SCENARIOS["think"])
    assert "".join(e.text for e in out.of("reasoning_delta")) == "Let me consider the question."


@pytest.mark.parametrize("decision", [ApprovalDecision.APPROVE, ApprovalDecision.DENY])
async def test_approvals(tmp_path: Path, host: PluginHost, decision: ApprovalDecision) -> None:
    out, ws = await play(
        tmp_path, host, TOUCH, approval=ApprovalPolicy.UNTRUSTED, approver=lambda _r: decision
    )
    assert [e.decision for e in out.of("approval_resolved")] == [decision]
    assert (ws / "touched.txt").exists() is (decision is ApprovalDecision.APPROVE)
    want = ToolStatus.COMPLETED if decision is ApprovalDecision.APPROVE else ToolStatus.DECLINED
    assert out.of("tool_result")[0].display.status is want and out.result.status.value == "success"


async def test_approval_never_denies_automatically(tmp_path: Path, host: PluginHost) -> None:
    """`--permission-prompts none`: a write mode `default` would ask about is denied, nobody is asked."""
    scenario = Scenario("write_denied", (WriteFile("denied.txt", "x\n"), Say("could not write")))
    out, ws = await play(tmp_path, host, scenario, options={"permission_mode": "default"})
    assert [e.display.status for e in out.of("tool_result")] == [ToolStatus.DECLINED]
    assert not out.of("approval_requested") and not (ws / "denied.txt").exists()
    assert out.result.status.value == "success"


@pytest.mark.parametrize(("name", "on"), [("slow_text", "text_delta"), ("slow_command", "tool_use")])
async def test_interrupt(tmp_path: Path, host: PluginHost, name: str, on: str) -> None:
    out, _ = await play(tmp_path, host, SCENARIOS[name], interrupt_on=on, timeout=20)
    error = out.result.error
    assert out.result.status.value == "interrupted"
    assert error is not None and error.code == "interrupted" and error.details.get("stopped_by") == "provider"
    # an interrupt is an interrupt: the stream Claude Code abandons on our request is not reported as a stall
    assert out.of("error") == [], [e.error for e in out.of("error")]


@pytest.mark.parametrize("session", ["3f1c2a9e-0000-4000-8000-000000000000", "not-a-session"])
async def test_resume_of_an_unknown_session_is_session_not_found(
    tmp_path: Path, host: PluginHost, session: str
) -> None:
    out, _ = await play(tmp_path, host, SCENARIOS["say"], resume_session=session)
    err = out.result.error
    assert out.result.status.value == "failed" and err is not None and err.code == "session_not_found", err
    assert session in err.message and "harness runs" in err.message


async def test_resume(tmp_path: Path, host: PluginHost) -> None:
    first, _ = await play(tmp_path, host, Scenario("one", (Say("first"),)))
    sid = first.result.session_id
    second, _ = await play(tmp_path, host, Scenario("two", (Say("second"),)), resume_session=sid)
    assert second.result.status.value == "success" and second.result.session_id == sid
    assert second.of("session_started")[0].resumed


@pytest.mark.parametrize(("name", "code"), [("fail_500", "model_error"), ("fail_401", "auth_failed")])
async def test_api_errors(tmp_path: Path, host: PluginHost, name: str, code: str) -> None:
    out, _ = await play(tmp_path, host, SCENARIOS[name])
    assert out.result.status.value == "failed" and out.result.error and out.result.error.code == code


async def test_stalled_stream_ends_with_a_clear_error(tmp_path: Path, host: PluginHost) -> None:
    # Claude abandons the stream after 10 s and retries without streaming; the backend stalls the retry too
    out, _ = await play(
        tmp_path,
        host,
        SCENARIOS["stall"],
        idle_timeout=12,
        options={"stream_idle_timeout_ms": 10_000},
        timeout=60,
    )
    assert out.result.status.value == "failed" and out.result.error is not None
    assert out.result.error.code == "idle_timeout", out.result.error.message
    assert any(e.error.code == "idle_timeout" for e in out.of("error"))


async def test_killed_cli_is_process_exited(tmp_path: Path, host: PluginHost) -> None:
    backend, env, ws = offline(tmp_path, SCENARIOS["slow_text"])
    out = Outcome()
    with backend:
        spec = AgentRunSpec(prompt="SCENARIO:slow_text", cwd=ws, env=env, provider_options={"claude_bin": CLAUDE})
        with anyio.fail_after(30):
            async with open_run(spec, "claude", host=host, run_log=False) as live:
                async for event in live:
                    out.events.append(event)
                    if event.type == "text_delta" and len(out.of("text_delta")) == 1:
                        for pid in children_of(os.getpid()):
                            os.kill(pid, signal.SIGKILL)
    err = out.result.error
    assert out.result.status.value == "failed" and err is not None and err.code == "process_exited"


async def test_max_turns_says_which_option_to_raise(tmp_path: Path, host: PluginHost) -> None:
    out, _ = await play(tmp_path, host, SCENARIOS["tools"], options={"max_turns": 1})
    err = out.result.error
    assert out.result.status.value == "failed" and err is not None and err.code == "model_error"
    assert "-o max_turns=N above 1" in err.message, err.message


@pytest.mark.parametrize("approval", [ApprovalPolicy.NEVER, ApprovalPolicy.ON_REQUEST])
async def test_read_only_offers_only_the_allow_list(
    tmp_path: Path, host: PluginHost, approval: ApprovalPolicy
) -> None:
    """The command line the provider builds for read-only, run by the real CLI: `system/init.tools` may hold
    nothing outside READ_ONLY_TOOLS (a new tool that runs commands or writes must not slip in)."""
    scenario = Scenario("ro", (RunCommand("touch escaped.txt"), Say("done")))
    backend, env, ws = offline(tmp_path, scenario)
    with backend:
        spec = AgentRunSpec(prompt="SCENARIO:ro", cwd=ws, sandbox=SandboxMode.READ_ONLY, approval=approval)
        argv = build_argv(CLAUDE, spec, ClaudeOptions(setting_sources=""), is_root=os.geteuid() == 0)
        user = {"type": "user", "message": {"role": "user", "content": spec.prompt}}
        with anyio.fail_after(60):
            proc = await anyio.run_process(
                argv,
                input=(json.dumps(user) + "\n").encode(),
                cwd=ws,
                env={**os.environ, **env},
                check=False,
            )
    lines = [json.loads(x) for x in proc.stdout.decode().splitlines() if x.startswith("{")]
    init = next(m for m in lines if m.get("type") == "system" and m.get("subtype") == "init")
    extra = sorted(set(init["tools"]) - set(READ_ONLY_TOOLS))
    assert not extra, f"read-only offers tools outside the allow-list: {extra}"
    assert "Read" in init["tools"]
    assert not (ws / "escaped.txt").exists()
