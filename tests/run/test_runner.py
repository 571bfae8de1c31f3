"""The runner's guarantees, with the in-process scripted provider, under asyncio and trio."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, ClassVar

import anyio
import anyio.lowlevel
import pytest

import harness_core.testing.scripted as scripted
from harness_core import open_run, run
from harness_core._run.run_files import check_writable
from harness_core.capabilities import Capability, ProviderInfo
from harness_core.errors import (
    InvalidSpecError,
    ProviderNotFoundError,
    UnsupportedFeatureError,
)
from harness_core.events import (
    ApprovalDecision,
    ApprovalRequested,
    ContextUsage,
    Done,
    ErrorInfo,
    HarnessEvent,
    HarnessResult,
    HarnessToolDetails,
    RunStarted,
    RunStatus,
    ToolKind,
    ToolResult,
    ToolStatus,
    ToolUse,
    Usage,
)
from harness_core.hookspecs import hookimpl
from harness_core.plugins import PluginHost
from harness_core.provider import ProviderOptions, RunContext
from harness_core.scripted.scenarios import SCENARIOS
from harness_core.spec import AgentRunSpec
from harness_core.store import read_events

pytestmark = pytest.mark.anyio


def spec_for(scenario: str, **fields: Any) -> AgentRunSpec:
    options = {"scenario": scenario, **fields.pop("options", {})}
    return AgentRunSpec(prompt="do the task", provider_options=options, **fields)


async def collect(spec: AgentRunSpec, host: PluginHost, runs_dir: Path, provider: str | None = None,
                  **kw: Any) -> tuple[list[HarnessEvent], Any]:
    events: list[HarnessEvent] = []
    with anyio.fail_after(20):
        async with open_run(spec, provider or next(iter(host.providers)), host=host, runs_dir=runs_dir, **kw) as live:
            async for event in live:
                events.append(event)
    return events, live


def assert_invariants(events: list[HarnessEvent], log: Path) -> None:
    assert isinstance(events[0], RunStarted)
    assert [e.seq for e in events] == list(range(len(events)))
    assert sum(isinstance(e, Done) for e in events) == 1 and isinstance(events[-1], Done)
    assert len({e.run_id for e in events}) == 1
    logged = list(read_events(log))
    assert logged == events
    assert log.read_bytes().count(b"\n") == len(events)


@pytest.mark.parametrize("name", ["say", "tools", "think", "fail_500", "fail_401", "fail_429"])
async def test_invariants_hold_for_every_scenario(name: str, host: PluginHost, runs_dir: Path) -> None:
    events, live = await collect(spec_for(name), host, runs_dir)
    assert_invariants(events, live.log_path)
    expected = SCENARIOS[name].expected
    result = events[-1].result  # type: ignore[union-attr]
    assert result.status.value == expected.status
    assert result.run_id == live.run_id and result.provider == "scripted"
    if expected.final_text is not None:
        assert result.final_text == expected.final_text
        assert "".join(e.text for e in events if e.type == "text_delta") == expected.final_text
    if expected.error_code is not None:
        assert result.error is not None and result.error.code == expected.error_code
        assert [e.error.code for e in events if e.type == "error"] == [expected.error_code]
    tools = [e for e in events if isinstance(e, ToolResult)]
    assert [t.display.kind.value for t in tools] == [t.kind for t in expected.tools]


async def test_provider_that_raises_still_ends_with_done(host: PluginHost, runs_dir: Path) -> None:
    events, live = await collect(spec_for("tools", options={"crash": True}), host, runs_dir)
    assert_invariants(events, live.log_path)
    result = live.result
    assert result.status is RunStatus.FAILED
    assert result.error.code == "provider_error" and "scripted crash" in result.error.message


async def test_idle_timeout_fails_a_stalled_run(host: PluginHost, runs_dir: Path) -> None:
    events, live = await collect(spec_for("stall", idle_timeout=0.2), host, runs_dir)
    assert_invariants(events, live.log_path)
    assert live.result.status is RunStatus.FAILED
    assert live.result.error.code == "idle_timeout"
    assert "--idle-timeout" in live.result.error.message


async def test_interrupt_is_clean_when_the_provider_cooperates(host: PluginHost, runs_dir: Path) -> None:
    events: list[HarnessEvent] = []
    with anyio.fail_after(10):
        async with open_run(spec_for("slow_text"), "scripted", host=host, runs_dir=runs_dir) as live:
            async for event in live:
                events.append(event)
                if event.type == "text_delta":
                    live.interrupt()
    assert_invariants(events, live.log_path)
    assert live.result.status is RunStatus.INTERRUPTED
    error = live.result.error  # the same code every time; who ended it is in the details
    assert error is not None and error.code == "interrupted" and error.details["stopped_by"] == "provider"
    assert not [e for e in events if e.type == "error"], "an interrupt the provider honoured is not an error"


async def test_interrupt_stops_hard_after_the_grace_period(host: PluginHost, runs_dir: Path) -> None:
    events: list[HarnessEvent] = []
    spec = spec_for("slow_text", options={"ignore_interrupt": True})
    with anyio.fail_after(10):
        async with open_run(spec, "scripted", host=host, runs_dir=runs_dir, interrupt_grace=0.2) as live:
            async for event in live:
                events.append(event)
                if event.type == "text_delta":
                    live.interrupt()
    assert_invariants(events, live.log_path)
    assert live.result.status is RunStatus.INTERRUPTED
    assert live.result.error.code == "interrupted" and live.result.error.details["stopped_by"] == "runner"


async def test_consumer_leaving_early_still_completes_the_log(host: PluginHost, runs_dir: Path) -> None:
    with anyio.fail_after(10):
        async with open_run(spec_for("slow_text"), "scripted", host=host, runs_dir=runs_dir) as live:
            async for event in live:
                if event.type == "text_delta":
                    break
    logged = list(read_events(live.log_path))
    assert isinstance(logged[-1], Done) and logged[-1].result.status is RunStatus.INTERRUPTED
    assert [e.seq for e in logged] == list(range(len(logged)))


async def test_a_cancelled_caller_interrupts_the_provider_before_stopping_it(host: PluginHost,
                                                                            runs_dir: Path) -> None:
    """Cancelling the caller's scope is an interrupt first: the provider gets its chance to end cleanly."""
    with anyio.move_on_after(0.3):
        async with open_run(spec_for("slow_text"), "scripted", host=host, runs_dir=runs_dir) as live:
            async for _ in live:
                pass
    logged = list(read_events(live.log_path))
    assert isinstance(logged[-1], Done)
    assert logged[-1].result.status is RunStatus.INTERRUPTED
    error = logged[-1].result.error  # the scripted provider saw the interrupt and stopped cleanly
    assert error is not None and error.code == "interrupted" and error.details["stopped_by"] == "provider"


@pytest.mark.parametrize(
    ("decision", "status", "tool_status"),
    [
        (ApprovalDecision.APPROVE, RunStatus.SUCCESS, ToolStatus.COMPLETED),
        (ApprovalDecision.DENY, RunStatus.SUCCESS, ToolStatus.DECLINED),
        (ApprovalDecision.ABORT, RunStatus.INTERRUPTED, ToolStatus.DECLINED),
    ],
)
async def test_approvals_through_a_callback(decision: ApprovalDecision, status: RunStatus,
                                            tool_status: ToolStatus, host: PluginHost, runs_dir: Path) -> None:
    asked: list[ApprovalRequested] = []

    async def approver(request: ApprovalRequested) -> ApprovalDecision:
        asked.append(request)
        await anyio.lowlevel.checkpoint()
        return decision

    events, live = await collect(spec_for("tools", approval="untrusted"), host, runs_dir, approver=approver)
    assert_invariants(events, live.log_path)
    assert live.result.status is status
    resolved = [e for e in events if e.type == "approval_resolved"]
    assert resolved and all(e.decision is decision and e.decided_by == "callback" for e in resolved)
    first_tool = next(e for e in events if isinstance(e, ToolResult))
    assert first_tool.display.status is tool_status
    assert asked[0].display.command == "echo harness-ok"


async def test_approvals_through_the_hook_then_the_default(runs_dir: Path) -> None:
    class Policy:
        @hookimpl
        def harness_approve(self, request: ApprovalRequested, spec: AgentRunSpec) -> ApprovalDecision | None:
            return ApprovalDecision.APPROVE if request.display.kind.value == "shell" else None

    host = PluginHost.create(entry_points=False, plugins=[("scripted", scripted), ("policy", Policy())])
    events, _ = await collect(spec_for("tools", approval="untrusted"), host, runs_dir)
    resolved = [(e.decision, e.decided_by) for e in events if e.type == "approval_resolved"]
    assert resolved[0] == (ApprovalDecision.APPROVE, "hook")
    assert all(r == (ApprovalDecision.DENY, "default") for r in resolved[1:])
    default = next(e for e in events if e.type == "approval_resolved" and e.decided_by == "default")
    assert "--approval never" in default.reason


async def test_a_raising_approver_denies_instead_of_crashing(host: PluginHost, runs_dir: Path) -> None:
    def approver(request: ApprovalRequested) -> ApprovalDecision:
        raise RuntimeError("boom")

    events, live = await collect(spec_for("tools", approval="untrusted"), host, runs_dir, approver=approver)
    assert live.result.status is RunStatus.SUCCESS
    assert all(e.decision is ApprovalDecision.DENY for e in events if e.type == "approval_resolved")


class _Limited(scripted.ScriptedProvider):
    info: ClassVar[ProviderInfo] = ProviderInfo(name="limited", version="1", capabilities=frozenset())
    spawned: ClassVar[int] = 0

    async def probe(self, options: ProviderOptions) -> Any:
        type(self).spawned += 1
        return await super().probe(options)


class _LimitedPlugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(_Limited)


@pytest.mark.parametrize(
    ("fields", "feature"),
    [
        ({"requires": ["interrupt"]}, "interrupt"),
        ({"resume_session": "abc"}, "session"),
        ({"approval": "on-request"}, "approvals"),
    ],
)
async def test_unsupported_capability_is_refused_before_anything_starts(
    fields: dict[str, Any], feature: str, runs_dir: Path
) -> None:
    host = PluginHost.create(entry_points=False, plugins=[("scripted", scripted), ("limited", _LimitedPlugin())])
    _Limited.spawned = 0
    with pytest.raises(UnsupportedFeatureError) as caught:
        await run(AgentRunSpec(prompt="x", **fields), "limited", host=host, runs_dir=runs_dir)
    message = str(caught.value)
    assert "'limited'" in message and repr(feature) in message and "scripted" in message
    assert _Limited.spawned == 0
    assert not runs_dir.exists()  # noqa: ASYNC240 - a one-off check, not I/O worth offloading


async def test_unknown_provider_and_bad_options(host: PluginHost, runs_dir: Path) -> None:
    with pytest.raises(ProviderNotFoundError, match="installed providers: scripted"):
        await run(AgentRunSpec(prompt="x"), "nope", host=host, runs_dir=runs_dir)
    with pytest.raises(InvalidSpecError, match="Valid options: cost_usd, crash, ignore_interrupt, scenario"):
        await run(AgentRunSpec(prompt="x", provider_options={"colour": "red"}), "scripted", host=host,
                  runs_dir=runs_dir)


async def test_observer_hook_sees_every_event_and_cannot_break_the_run(runs_dir: Path) -> None:
    seen: list[str] = []

    class Observer:
        @hookimpl
        def harness_on_event(self, event: HarnessEvent) -> None:
            seen.append(event.type)
            raise RuntimeError("observer bug")

    host = PluginHost.create(entry_points=False, plugins=[("scripted", scripted), ("obs", Observer())])
    events, live = await collect(spec_for("say"), host, runs_dir)
    assert seen == [e.type for e in events]
    assert live.result.status is RunStatus.SUCCESS


async def test_a_slow_consumer_holds_the_provider_back(host: PluginHost, runs_dir: Path) -> None:
    """Backpressure: with a buffer of 2, the provider is never more than a few events ahead."""
    produced: list[int] = []

    class Counting(scripted.ScriptedProvider):
        async def run(self, spec: AgentRunSpec, options: ProviderOptions, ctx: RunContext) -> Any:
            from harness_core.events import HarnessResult, TextDelta

            for i in range(50):
                await ctx.emit(TextDelta(text=str(i)))
                produced.append(i)
            return HarnessResult(status=RunStatus.SUCCESS)

    class Plugin:
        @hookimpl
        def harness_register_providers(self, register: Any) -> None:
            Counting.info = ProviderInfo(name="counting", version="1")
            register(Counting)

    host = PluginHost.create(entry_points=False, plugins=[("counting", Plugin())])
    lead = 0
    with anyio.fail_after(10):
        async with open_run(AgentRunSpec(prompt="x"), "counting", host=host, runs_dir=runs_dir, buffer=2) as live:
            consumed = 0
            async for event in live:
                if event.type == "text_delta":
                    consumed += 1
                    lead = max(lead, len(produced) - consumed)
                    await anyio.sleep(0.001)
    assert consumed == 50
    assert lead <= 4


async def test_secrets_are_redacted_in_run_started(host: PluginHost, runs_dir: Path) -> None:
    spec = spec_for("say", env={"OPENAI_API_KEY": "sk-live", "PLAIN": "visible-but-redacted"},
                    options={})
    spec = spec.model_copy(update={"provider_options": {"scenario": "say"}})
    events, live = await collect(spec, host, runs_dir)
    text = live.log_path.read_text()
    assert "sk-live" not in text and "visible-but-redacted" not in text
    assert events[0].spec["env"] == {"OPENAI_API_KEY": "***", "PLAIN": "***"}


async def test_wire_recording_writes_a_second_log(host: PluginHost, runs_dir: Path) -> None:
    class Wired(scripted.ScriptedProvider):
        async def run(self, spec: AgentRunSpec, options: ProviderOptions, ctx: RunContext) -> Any:
            ctx.record_wire("in", b'{"hello": 1}')
            return await super().run(spec, options, ctx)

    class Plugin:
        @hookimpl
        def harness_register_providers(self, register: Any) -> None:
            Wired.info = ProviderInfo(name="wired", version="1")
            register(Wired)

    host2 = PluginHost.create(entry_points=False, plugins=[("wired", Plugin())])
    async with open_run(spec_for("say"), "wired", host=host2, runs_dir=runs_dir, record_wire=True) as live:
        await live.wait()
    wire = live.log_path.with_name(f"{live.run_id}.wire.jsonl")
    assert '"dir": "in"' in wire.read_text()
    assert oct(wire.stat().st_mode & 0o777) == "0o600"


async def test_a_tool_cut_short_still_gets_its_result(host: PluginHost, runs_dir: Path) -> None:
    events: list[HarnessEvent] = []
    with anyio.fail_after(10):
        async with open_run(spec_for("slow_command"), "scripted", host=host, runs_dir=runs_dir) as live:
            async for event in live:
                events.append(event)
                if event.type == "tool_use":
                    live.interrupt()
    assert_invariants(events, live.log_path)
    results = [e for e in events if isinstance(e, ToolResult)]
    assert len(results) == 1 and results[0].display.status is ToolStatus.INTERRUPTED
    assert events.index(results[0]) < len(events) - 1


async def test_a_tool_stopped_by_a_budget_is_cut_short_whatever_the_agent_says(runs_dir: Path) -> None:
    """The budget stops the run while a command runs; the agent then reports the command `completed` (as an
    agent CLI may report a command it cancelled): it reads `interrupted`, and so does a tool it never finished."""
    async def over_budget(spec: AgentRunSpec, ctx: RunContext) -> Any:
        shell = HarnessToolDetails(kind=ToolKind.SHELL, title="Running command", command="sleep 30")
        await ctx.emit(ToolUse(tool_id="a", name="shell", display=shell))
        await ctx.emit(ToolUse(tool_id="b", name="shell", display=shell))
        await ctx.emit(ContextUsage(usage=Usage(output_tokens=100)))
        with anyio.fail_after(10):
            await ctx.interrupt_requested.wait()
        done = shell.model_copy(update={"status": ToolStatus.COMPLETED, "summary": "Command cancelled by user."})
        await ctx.emit(ToolResult(tool_id="a", name="shell", display=done, output="Command cancelled by user."))
        return HarnessResult(status=RunStatus.INTERRUPTED)

    host = _provider("budgeted", over_budget)
    events, live = await collect(AgentRunSpec(prompt="x", max_output_tokens=10), host, runs_dir)
    assert_invariants(events, live.log_path)
    assert live.result.error is not None and live.result.error.code == "budget_exceeded"
    statuses = {e.tool_id: e.display.status for e in events if isinstance(e, ToolResult)}
    assert statuses == {"a": ToolStatus.INTERRUPTED, "b": ToolStatus.INTERRUPTED}
    assert next(e for e in events if isinstance(e, ToolResult)).output == "Command cancelled by user."


def _provider(name: str, body: Any) -> PluginHost:
    """A one-off provider whose `run` is `body(spec, ctx)`."""

    class OneOff(scripted.ScriptedProvider):
        info: ClassVar[ProviderInfo] = ProviderInfo(name=name, version="1", capabilities=frozenset(Capability))

        async def run(self, spec: AgentRunSpec, options: ProviderOptions, ctx: RunContext) -> Any:
            return await body(spec, ctx)

    class Plugin:
        @hookimpl
        def harness_register_providers(self, register: Any) -> None:
            register(OneOff)

    return PluginHost.create(entry_points=False, plugins=[(name, Plugin())])


async def test_a_raising_on_event_callback_costs_nothing(host: PluginHost, runs_dir: Path) -> None:
    def on_event(event: HarnessEvent) -> None:
        raise RuntimeError("callback bug")

    events, live = await collect(spec_for("tools"), host, runs_dir, on_event=on_event)
    assert_invariants(events, live.log_path)
    assert live.result.status is RunStatus.SUCCESS


async def test_a_slow_consumer_is_not_an_idle_agent(runs_dir: Path) -> None:
    from harness_core.events import HarnessResult, TextDelta

    async def chatty(spec: AgentRunSpec, ctx: RunContext) -> Any:
        for i in range(6):
            await ctx.emit(TextDelta(text=str(i)))
        return HarnessResult(status=RunStatus.SUCCESS)

    host = _provider("chatty", chatty)
    spec = AgentRunSpec(prompt="x", idle_timeout=0.2)
    with anyio.fail_after(10):
        async with open_run(spec, "chatty", host=host, runs_dir=runs_dir, buffer=1) as live:
            async for _ in live:
                await anyio.sleep(0.3)  # slower than the idle timeout, on every event
    assert live.result.status is RunStatus.SUCCESS, live.result.error


async def test_the_log_is_on_disk_while_the_stream_never_pauses(runs_dir: Path) -> None:
    from harness_core.events import HarnessResult, TextDelta

    release = anyio.Event()

    async def burst_then_wait(spec: AgentRunSpec, ctx: RunContext) -> Any:
        for i in range(3):
            await ctx.emit(TextDelta(text=str(i)))
        await release.wait()
        return HarnessResult(status=RunStatus.SUCCESS)

    host = _provider("bursty", burst_then_wait)
    with anyio.fail_after(10):
        async with open_run(AgentRunSpec(prompt="x"), "bursty", host=host, runs_dir=runs_dir) as live:
            # the consumer does not read at all: only the periodic flush can put the lines on disk
            lines = 0
            while lines < 4:
                await anyio.sleep(0.02)
                lines = live.log_path.read_bytes().count(b"\n")
            release.set()
            await live.wait()


async def test_a_cancelled_approval_is_settled_exactly_once(runs_dir: Path) -> None:
    from harness_core.events import HarnessResult, HarnessToolDetails

    async def asks_then_gives_up(spec: AgentRunSpec, ctx: RunContext) -> Any:
        request = ApprovalRequested(request_id="0", display=HarnessToolDetails(title="Running command"))
        with anyio.move_on_after(0.1):
            await ctx.request_approval(request)
        return HarnessResult(status=RunStatus.INTERRUPTED)

    async def never_answers(request: ApprovalRequested) -> ApprovalDecision:
        await anyio.sleep(60)
        return ApprovalDecision.APPROVE

    host = _provider("asker", asks_then_gives_up)
    spec = AgentRunSpec(prompt="x", approval="on-request")
    events, _ = await collect(spec, host, runs_dir, approver=never_answers)
    resolved = [e for e in events if e.type == "approval_resolved"]
    assert [(r.decision, r.decided_by) for r in resolved] == [(ApprovalDecision.ABORT, "runner")]


async def test_a_withdrawn_approval_is_written_once_by_the_runner_with_the_providers_reason(
        runs_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A provider withdraws a waiting request (its CLI withdrew it) through `ctx.withdraw_approval`, then stops
    waiting: the run has one `approval_resolved`, written by the broker, and no second one was ever offered."""
    from harness_core.events import HarnessResult, HarnessToolDetails

    async def asks_then_withdraws(spec: AgentRunSpec, ctx: RunContext) -> Any:
        request = ApprovalRequested(request_id="7", display=HarnessToolDetails(title="Running command"))
        async with anyio.create_task_group() as tg:
            tg.start_soon(ctx.request_approval, request)
            await asked.wait()
            await ctx.withdraw_approval("7", "the agent withdrew the request")
            tg.cancel_scope.cancel()  # then the provider stops waiting, as its wire tells it to
        await ctx.withdraw_approval("7", "twice: a no-op")
        return HarnessResult(status=RunStatus.SUCCESS)

    asked = anyio.Event()

    async def never_answers(request: ApprovalRequested) -> ApprovalDecision:
        asked.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    caplog.set_level("DEBUG", logger="harness")
    spec = AgentRunSpec(prompt="x", approval="on-request")
    events, live = await collect(spec, _provider("withdrawer", asks_then_withdraws), runs_dir, approver=never_answers)
    (requested,) = [e for e in events if e.type == "approval_requested"]
    resolved = [e for e in events if e.type == "approval_resolved"]
    assert [(r.request_id, r.decision, r.decided_by, r.reason) for r in resolved] == [
        (requested.request_id, ApprovalDecision.ABORT, "runner", "the agent withdrew the request")]
    assert not [r for r in caplog.records if "duplicate approval_resolved" in r.getMessage()]
    assert_invariants(events, live.log_path)


async def test_a_failed_result_always_shows_an_error_event(runs_dir: Path) -> None:
    from harness_core.events import ErrorInfo, HarnessResult

    async def fails_quietly(spec: AgentRunSpec, ctx: RunContext) -> Any:
        return HarnessResult(status=RunStatus.FAILED, error=ErrorInfo(code="model_error", message="boom"))

    events, _ = await collect(AgentRunSpec(prompt="x"), _provider("quiet", fails_quietly), runs_dir)
    assert [e.error.code for e in events if e.type == "error"] == ["model_error"]
    assert events[-1].type == "done"


async def test_reemitting_one_event_object_keeps_stream_and_log_identical(runs_dir: Path) -> None:
    from harness_core.events import HarnessResult, TextDelta

    newline = TextDelta(text="\n")

    async def reuses(spec: AgentRunSpec, ctx: RunContext) -> Any:
        for _ in range(3):
            await ctx.emit(newline)
        return HarnessResult(status=RunStatus.SUCCESS)

    events, live = await collect(AgentRunSpec(prompt="x"), _provider("reuser", reuses), runs_dir)
    assert_invariants(events, live.log_path)


async def test_a_policy_plugin_returning_nonsense_denies(runs_dir: Path) -> None:
    class Broken:
        @hookimpl
        def harness_approve(self, request: ApprovalRequested, spec: AgentRunSpec) -> Any:
            return True

    host = PluginHost.create(entry_points=False, plugins=[("scripted", scripted), ("broken", Broken())])
    events, live = await collect(spec_for("tools", approval="untrusted"), host, runs_dir)
    assert live.result.status is RunStatus.SUCCESS
    resolved = [e for e in events if e.type == "approval_resolved"]
    assert resolved and all(r.decision is ApprovalDecision.DENY and "plugin failed" in r.reason for r in resolved)


def test_a_runs_dir_on_a_read_only_file_system_says_so(tmp_path: Path) -> None:
    """Not "permission denied": the user's own directory on a file system mounted read-only."""
    root = tmp_path / "ro"
    root.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700,ro", "tmpfs", str(root)],
            capture_output=True).returncode != 0:
        pytest.skip("mounting a read-only file system needs root")
    try:
        with pytest.raises(InvalidSpecError, match=r"cannot write run logs in .*: a read-only file system; pass"):
            check_writable(root)
    finally:
        subprocess.run(["umount", "-l", str(root)], capture_output=True)


async def test_an_unwritable_runs_dir_is_a_clear_error(host: PluginHost, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(InvalidSpecError, match="cannot write run logs"):
        await run(spec_for("say"), "scripted", host=host, runs_dir=blocker / "runs")


async def test_stop_ends_the_run_at_once(host: PluginHost, runs_dir: Path) -> None:
    spec = spec_for("slow_text", options={"ignore_interrupt": True})
    with anyio.fail_after(5):
        async with open_run(spec, "scripted", host=host, runs_dir=runs_dir, interrupt_grace=30) as live:
            async for event in live:
                if event.type == "text_delta":
                    live.stop()
    assert live.result.status is RunStatus.INTERRUPTED


async def test_an_exception_in_the_callers_block_propagates_unchanged(host: PluginHost, runs_dir: Path) -> None:
    class Boom(Exception):
        pass

    with pytest.raises(Boom):
        async with open_run(spec_for("slow_text"), "scripted", host=host, runs_dir=runs_dir) as live:
            async for event in live:
                if event.type == "text_delta":
                    raise Boom
    logged = list(read_events(live.log_path))
    assert isinstance(logged[-1], Done) and logged[-1].result.status is RunStatus.INTERRUPTED


async def test_stop_before_the_run_started_still_stops_it(host: PluginHost, runs_dir: Path) -> None:
    spec = spec_for("stall", options={"ignore_interrupt": True})
    with anyio.fail_after(5):
        async with open_run(spec, "scripted", host=host, runs_dir=runs_dir, interrupt_grace=30) as live:
            live.stop()
            result = await live.wait()
    assert result.status is RunStatus.INTERRUPTED


async def test_a_slow_on_event_callback_is_not_agent_silence(host: PluginHost, runs_dir: Path) -> None:
    async def slow(event: HarnessEvent) -> None:
        await anyio.sleep(0.3)

    _, live = await collect(spec_for("say", idle_timeout=0.2), host, runs_dir, on_event=slow)
    assert live.result.status is RunStatus.SUCCESS, live.result.error


async def test_an_approval_cut_short_while_waiting_for_room_is_still_resolved(host: PluginHost,
                                                                              runs_dir: Path) -> None:
    spec = spec_for("tools", approval="untrusted")
    with anyio.fail_after(10):
        async with open_run(spec, "scripted", host=host, runs_dir=runs_dir, buffer=1,
                            approver=lambda request: ApprovalDecision.APPROVE) as live:
            async for event in live:
                if event.type == "session_started":
                    await anyio.sleep(0.2)  # stop reading: the provider blocks emitting the approval request
                    live.stop()
    logged = list(read_events(live.log_path))
    requested = [e.request_id for e in logged if e.type == "approval_requested"]
    resolved = [e.request_id for e in logged if e.type == "approval_resolved"]
    assert requested and sorted(requested) == sorted(resolved)


class _InterruptedWithDetails(scripted.ScriptedProvider):
    """Returns an interrupted result whose error has a foreign code and details named like the error's own
    arguments."""

    async def run(self, spec: AgentRunSpec, options: ProviderOptions, ctx: RunContext) -> Any:
        return HarnessResult(status=RunStatus.INTERRUPTED, error=ErrorInfo(
            code="model_error", message="stopped mid-stream", details={"message": "m", "stopped_by": "x"}))


class _SlowToReturn(scripted.ScriptedProvider):
    """Honours the interrupt, but its own shielded cleanup ends only after the runner's grace has run out."""

    async def run(self, spec: AgentRunSpec, options: ProviderOptions, ctx: RunContext) -> Any:
        await ctx.interrupt_requested.wait()
        with anyio.CancelScope(shield=True):
            await anyio.sleep(0.5)  # interrupt_grace is 0.1 below
        return HarnessResult(status=RunStatus.INTERRUPTED, final_text="partial answer")


def _host_with(name: str, cls: type[scripted.ScriptedProvider]) -> PluginHost:
    class Plugin:
        @hookimpl
        def harness_register_providers(self, register: Any) -> None:
            cls.info = ProviderInfo(name=name, version="1", capabilities=scripted.ScriptedProvider.info.capabilities)
            register(cls)

    return PluginHost.create(entry_points=False, plugins=[(name, Plugin())])


async def test_an_interrupted_result_with_any_details_still_ends_with_done(runs_dir: Path) -> None:
    host = _host_with("odd-details", _InterruptedWithDetails)
    events, live = await collect(spec_for("say"), host, runs_dir, "odd-details")
    assert_invariants(events, live.log_path)
    error = live.result.error
    assert error.code == "interrupted" and error.details["stopped_by"] == "provider"
    assert error.details["provider_code"] == "model_error" and error.details["message"] == "m"


async def test_a_result_returned_as_the_hard_stop_lands_is_kept(runs_dir: Path) -> None:
    """The provider ended the run (shielded cleanup, slower than the grace): its result, not a runner stop."""
    host = _host_with("slow-to-return", _SlowToReturn)
    with anyio.fail_after(10):
        async with open_run(spec_for("say"), "slow-to-return", host=host, runs_dir=runs_dir,
                            interrupt_grace=0.1) as live:
            async for event in live:
                if event.type == "run_started":
                    live.interrupt()
    result = live.result
    assert result.status is RunStatus.INTERRUPTED and result.final_text == "partial answer"
    assert result.error is not None and result.error.details["stopped_by"] == "provider"
