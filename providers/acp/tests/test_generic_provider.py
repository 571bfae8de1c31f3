"""The generic `acp` provider on the fake agent: capabilities learned from `initialize` (and cached), refusals before
the run starts, an agent that never answers `initialize`, one that ignores `session/cancel`, permission requests
answered `cancelled` on interrupt, and the probe's errors."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from harness_core import (
    AgentRunSpec,
    ApprovalDecision,
    ApprovalRequested,
    CliNotFoundError,
    ProtocolError,
    RunStatus,
    UnsupportedFeatureError,
    open_run,
    run,
)
from harness_core.plugins import PluginHost

from harness_acp.generic import GenericAcpProvider, learned_capabilities
from harness_acp.options import GenericAcpOptions
from harness_acp.testing import write_fake_agent

pytestmark = pytest.mark.anyio


def _counting_agent(tmp_path: Path, *args: str) -> tuple[Path, Path]:
    """A fake agent that appends a line to a file each time it starts."""
    starts = tmp_path / "starts"
    agent = write_fake_agent(tmp_path / "bin", args=args)
    text = agent.read_text().replace("exec ", f"echo started >> {starts}\nexec ", 1)
    agent.write_text(text)
    return agent, starts


def test_capabilities_come_from_initialize() -> None:
    assert "session" in {c.value for c in learned_capabilities({"loadSession": True})}
    assert "session" in {c.value for c in learned_capabilities({"sessionCapabilities": {"resume": {}}})}
    assert "session" not in {c.value for c in learned_capabilities({"loadSession": False})}
    assert {"streaming", "interrupt", "approvals", "live_session"} <= {c.value for c in learned_capabilities(None)}


async def test_the_probe_learns_and_caches_by_the_binary(tmp_path: Path) -> None:
    agent, starts = _counting_agent(tmp_path, "--no-load")
    provider = GenericAcpProvider()
    options = GenericAcpOptions(command=f"{agent} --acp")
    first = await provider.probe(options)
    assert first.capabilities is not None and "session" not in {c.value for c in first.capabilities}
    assert first.version == "1.4.2"
    again = await provider.probe(options)
    assert again == first and starts.read_text().count("started") == 1, "the second probe must come from the cache"
    await anyio.sleep(0.01)
    agent.write_text(agent.read_text().replace("--no-load", ""))  # "upgraded": now it loads sessions
    upgraded = await provider.probe(options)
    assert upgraded.capabilities is not None and "session" in {c.value for c in upgraded.capabilities}
    assert starts.read_text().count("started") == 2


async def test_resume_on_an_agent_without_sessions_is_refused_before_the_run(tmp_path: Path, host: PluginHost) -> None:
    agent, starts = _counting_agent(tmp_path, "--no-load")
    spec = AgentRunSpec(prompt="hi", cwd=tmp_path, resume_session="abc",
                        provider_options={"command": str(agent)})
    with pytest.raises(UnsupportedFeatureError) as caught:
        await run(spec, "acp", host=host, run_log=False)
    assert "'session'" in str(caught.value) and "this agent does not offer it" in str(caught.value)
    assert starts.read_text().count("started") == 1, "only the probe may have started the agent"


async def test_a_missing_command_says_how_to_pass_one(tmp_path: Path, host: PluginHost) -> None:
    spec = AgentRunSpec(prompt="hi", cwd=tmp_path, provider_options={"command": "no-such-agent-xyz --acp"})
    with pytest.raises(CliNotFoundError) as caught:
        await run(spec, "acp", host=host, run_log=False)
    assert "no-such-agent-xyz" in str(caught.value) and "command=" in str(caught.value)


async def test_an_empty_command_is_an_invalid_option(tmp_path: Path, host: PluginHost) -> None:
    from harness_core import InvalidSpecError

    with pytest.raises(InvalidSpecError) as caught:
        await run(AgentRunSpec(prompt="hi", cwd=tmp_path, provider_options={"command": "  "}), "acp", host=host,
                  run_log=False)
    assert "command" in str(caught.value)


async def test_an_agent_that_never_answers_initialize_fails_in_bounded_time(tmp_path: Path, host: PluginHost) -> None:
    agent = write_fake_agent(tmp_path / "bin", args=("--never-initialize",))
    spec = AgentRunSpec(prompt="hi", cwd=tmp_path,
                        provider_options={"command": str(agent), "startup_timeout": 1.5})
    started = time.monotonic()
    with pytest.raises(ProtocolError) as caught:
        await run(spec, "acp", host=host, run_log=False)
    assert time.monotonic() - started < 15
    assert "did not answer initialize within 1.5s" in str(caught.value)
    assert "startup_timeout" in str(caught.value) and str(agent) in str(caught.value)


async def test_an_agent_that_ignores_cancel_is_stopped_within_the_bound(tmp_path: Path, host: PluginHost) -> None:
    agent = write_fake_agent(tmp_path / "bin", scenario="slow_text", args=("--ignore-cancel",))
    spec = AgentRunSpec(prompt="hi", cwd=tmp_path,
                        provider_options={"command": str(agent), "interrupt_timeout": 1.0})
    seen: list[Any] = []
    async with open_run(spec, "acp", host=host, run_log=False, on_event=lambda e: seen.append(e)) as live:
        async for event in live:
            if event.type == "text_delta":
                asked = time.monotonic()
                live.interrupt()
                break
        result = await live.wait()
    assert result.status is RunStatus.INTERRUPTED
    assert time.monotonic() - asked < 8
    notices = [e for e in seen if e.type == "notice" and e.code == "interrupt_unconfirmed"]
    assert notices and "did not answer the cancelled prompt within 1s" in notices[0].message


async def test_pending_permissions_are_answered_cancelled_on_interrupt(tmp_path: Path, host: PluginHost) -> None:
    """An approval is pending when the run is interrupted: Harness answers it `cancelled` (the fake checks every
    message against the schema), the prompt ends `cancelled`, the run `interrupted`, the workspace unchanged."""
    (tmp_path / "notes.txt").write_text("alpha\n")
    agent = write_fake_agent(tmp_path / "bin", scenario="tools")
    asked = anyio.Event()

    async def approver(request: ApprovalRequested) -> ApprovalDecision:
        asked.set()
        await anyio.sleep(3600)
        return ApprovalDecision.APPROVE

    spec = AgentRunSpec(prompt="hi", cwd=tmp_path, approval="untrusted", provider_options={"command": str(agent)})
    seen: list[Any] = []
    async with open_run(spec, "acp", host=host, runs_dir=tmp_path / "runs", record_wire=True,
                        approver=approver, on_event=lambda e: seen.append(e)) as live:
        with anyio.fail_after(30):
            await asked.wait()
        live.interrupt()
        result = await live.wait()
    assert result.status is RunStatus.INTERRUPTED, result.error
    wire = next((tmp_path / "runs").glob("*.wire.jsonl")).read_text()
    assert '\\"outcome\\":{\\"outcome\\":\\"cancelled\\"}' in wire, "the pending request must be answered cancelled"
    assert '\\"method\\":\\"session/cancel\\"' in wire
    resolved = [e for e in seen if e.type == "approval_resolved"]
    assert resolved and resolved[0].decision is ApprovalDecision.ABORT
    assert (tmp_path / "notes.txt").read_text() == "alpha\n"


async def test_read_only_needs_a_read_only_mode_of_the_agent(tmp_path: Path, host: PluginHost) -> None:
    """An unknown agent's read-only mode is found by its usual ids; one without any is refused before its prompt
    (Harness cannot know that it asks before it writes), and `-o mode=` names one."""
    (tmp_path / "notes.txt").write_text("alpha\n")
    plain = write_fake_agent(tmp_path / "plain", scenario="tools", args=("--modes", "normal=auto"))
    spec = AgentRunSpec(prompt="hi", cwd=tmp_path, sandbox="read-only", provider_options={"command": str(plain)})
    result = await run(spec, "acp", host=host, run_log=False)
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.code == "invalid_spec" and "-o mode=ID" in result.error.message
    assert (tmp_path / "notes.txt").read_text() == "alpha\n"
    planning = write_fake_agent(tmp_path / "planning", scenario="tools", args=("--modes", "normal=auto,plan=read-only"))
    result = await run(spec.model_copy(update={"provider_options": {"command": str(planning)}}), "acp", host=host,
                       run_log=False)
    assert result.status is RunStatus.SUCCESS, result.error
    assert (tmp_path / "notes.txt").read_text() == "alpha\n" and not (tmp_path / "new.txt").exists()


async def test_a_launched_agent_is_cached_by_the_program_it_runs(tmp_path: Path) -> None:
    """`python agent.py` is keyed on agent.py (an edit probes again); `npx -y pkg` on nothing (probed every time)."""
    import sys

    from harness_acp.generic import _identity

    script = tmp_path / "agent.py"
    script.write_text("")
    python = Path(sys.executable)
    assert _identity(python, [sys.executable, str(script), "--acp"]) == script
    assert _identity(Path("/usr/bin/npx"), ["npx", "-y", "@scope/agent@1.0.0", "--acp"]) is None
    assert _identity(Path("/opt/my-agent"), ["/opt/my-agent", "--acp"]) == Path("/opt/my-agent")


async def test_a_tool_update_sent_after_the_turns_answer_still_ends_its_call(tmp_path: Path,
                                                                             host: PluginHost) -> None:
    """An agent whose last tool update trails the prompt's answer (codex-acp's can, on a loaded machine): the call
    ends with its output, not "the turn ended before the tool reported a result"."""
    agent = write_fake_agent(tmp_path / "bin", scenario="print_secrets", args=("--late-tool-updates",))
    spec = AgentRunSpec(prompt="hi", cwd=tmp_path, approval="never", provider_options={"command": str(agent)})
    (tmp_path / "token.txt").write_text("x\n")
    seen: list[Any] = []
    with anyio.fail_after(30):
        result = await run(spec, "acp", host=host, runs_dir=tmp_path / "runs", on_event=seen.append)
    assert result.status is RunStatus.SUCCESS, result.error
    results = [e for e in seen if e.type == "tool_result"]
    assert results and all(r.display.status.value == "completed" for r in results), [r.output for r in results]
