"""Python tools in real runs, end to end: the in-process scripted provider calls them as an agent would, through
the `harness` MCP server the runner serves (the stdio bridge, the official `mcp` client): arguments, results,
a raising tool, a slow tool interrupted, approvals, sessions, background runs, and the secret kept out of logs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest
from pydantic import ValidationError

from harness_core import (
    AgentRunSpec,
    ApprovalDecision,
    ApprovalRequested,
    InvalidSpecError,
    McpServer,
    ToolResult,
    ToolUse,
    UnsupportedFeatureError,
    open_run,
    open_session,
    run,
    tool,
)
from harness_core.capabilities import Capability, ProviderInfo
from harness_core.hookspecs import hookimpl
from harness_core.plugins import PluginHost
from harness_core.testing.scripted import ScriptedProvider
from harness_core.tools import server as tool_server

calls: list[dict[str, Any]] = []
cancelled: list[str] = []
started = anyio.Event()


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    calls.append({"a": a, "b": b})
    return a + b


@tool
def boom(reason: str) -> str:
    raise RuntimeError(f"it broke: {reason}")


@tool
def quits(code: int) -> str:
    sys.exit(code)


@tool
async def quits_async() -> str:
    raise SystemExit("bye")


@tool(timeout=60)
async def forever() -> str:
    started.set()
    try:
        await anyio.sleep(3600)
    finally:
        cancelled.append("forever")
    return "never"


@tool(requires_approval=True)
def guarded(what: str) -> str:
    calls.append({"what": what})
    return f"did {what}"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    global started
    calls.clear()
    cancelled.clear()
    started = anyio.Event()


def scenario(*steps: dict[str, Any]) -> dict[str, Any]:
    return {"scenario": {"steps": list(steps)}}


def call(tool_name: str, **args: Any) -> dict[str, Any]:
    return {"mcp": {"server": "harness", "tool": tool_name, "args": args}}


def spec(options: dict[str, Any], **fields: Any) -> AgentRunSpec:
    return AgentRunSpec(prompt="use the tools", provider_options=options, **fields)


@pytest.mark.anyio
async def test_the_agent_calls_a_python_tool_with_the_scenarios_arguments(host: PluginHost, runs_dir: Path) -> None:
    events: list[Any] = []
    with anyio.fail_after(60):
        result = await run(spec({"scenario": "tools_mcp"}), "scripted", runs_dir=runs_dir, tools=[add],
                           on_event=events.append)
    assert result.status.value == "success", result.error
    assert result.final_text == "The tool said 5."
    assert calls == [{"a": 2, "b": 3}]  # called here, in this process, with the scenario's arguments
    use = next(e for e in events if isinstance(e, ToolUse))
    done = next(e for e in events if isinstance(e, ToolResult))
    assert (use.display.kind.value, use.display.title, done.output, done.is_error) == ("mcp", "add", "5", False)
    started_event = events[0]
    served = [s for s in started_event.spec["mcp_servers"] if s["name"] == "harness"]
    assert served and served[0]["args"] == ["-m", "harness_core.tools.bridge"]


@pytest.mark.anyio
async def test_a_raising_tool_is_a_tool_error_the_agent_reads_not_a_crashed_run(host: PluginHost,
                                                                                runs_dir: Path) -> None:
    events: list[Any] = []
    with anyio.fail_after(60):
        result = await run(spec(scenario(call("boom", reason="disk"), {"say": "It said: {tool_result}"})), "scripted",
                           runs_dir=runs_dir, tools=[boom, add], on_event=events.append)
    assert result.status.value == "success"
    assert result.final_text == "It said: boom raised RuntimeError: it broke: disk"
    failed = next(e for e in events if isinstance(e, ToolResult))
    assert failed.is_error and failed.display.status.value == "failed"


@pytest.mark.anyio
@pytest.mark.parametrize(("name", "args", "said"), [
    ("quits", {"code": 3}, "quits called sys.exit(3)"),
    ("quits_async", {}, "quits_async called sys.exit('bye')"),
])
async def test_a_tool_calling_sys_exit_is_a_tool_error_not_the_end_of_harness(
        name: str, args: dict[str, Any], said: str, host: PluginHost, runs_dir: Path) -> None:
    with anyio.fail_after(60):
        result = await run(spec(scenario(call(name, **args), {"say": "It said: {tool_result}"})), "scripted",
                           runs_dir=runs_dir, tools=[quits, quits_async])
    assert result.status.value == "success", result.error
    assert result.final_text.startswith(f"It said: {said}"), result.final_text


@pytest.mark.anyio
async def test_an_interrupt_cancels_a_running_tool_call(host: PluginHost, runs_dir: Path) -> None:
    """The agent waits for the call's answer after the interrupt (`ignore_interrupt`: it stops only when its
    turn's work is answered, as a CLI that keeps its MCP connection does): only the interrupt can answer it."""
    events: list[Any] = []
    with anyio.fail_after(60):
        async with open_run(spec({**scenario(call("forever"), {"say": "{tool_result}"}), "ignore_interrupt": True}),
                            "scripted", runs_dir=runs_dir, tools=[forever], interrupt_grace=30) as live:
            async for event in live:
                events.append(event)
                if isinstance(event, ToolUse):
                    await started.wait()
                    live.interrupt()
            result = live.result
    assert result is not None and (result.error is None or result.error.details.get("stopped_by") != "runner")
    assert cancelled == ["forever"]  # the function itself was cancelled, not left running
    answered = next(e for e in events if isinstance(e, ToolResult))
    assert (answered.output, answered.is_error) == ("forever was cancelled: the run was interrupted", True)


@pytest.mark.anyio
async def test_an_interrupt_cancels_a_call_waiting_for_approval_and_settles_it_once(host: PluginHost,
                                                                                   runs_dir: Path) -> None:
    asked = anyio.Event()

    async def away(request: ApprovalRequested) -> ApprovalDecision:
        asked.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    events: list[Any] = []
    with anyio.fail_after(60):
        async with open_run(spec({**scenario(call("guarded", what="prod"), {"say": "{tool_result}"}),
                                  "ignore_interrupt": True}),
                            "scripted", runs_dir=runs_dir, tools=[guarded], approver=away, interrupt_grace=30) as live:
            async for event in live:
                events.append(event)
                if isinstance(event, ToolUse):
                    await asked.wait()
                    live.interrupt()
    assert calls == []
    resolved = [(e.decision.value, e.decided_by) for e in events if e.type == "approval_resolved"]
    assert resolved == [("abort", "runner")]
    answered = next(e for e in events if isinstance(e, ToolResult))
    assert answered.output == "guarded was cancelled: the run was interrupted"
    assert events[-1].type == "done"


@pytest.mark.anyio
@pytest.mark.parametrize("decision", [ApprovalDecision.APPROVE, ApprovalDecision.DENY])
async def test_a_tool_needing_approval_goes_through_the_runs_approvals(host: PluginHost, runs_dir: Path,
                                                                        decision: ApprovalDecision) -> None:
    asked: list[ApprovalRequested] = []

    def approver(request: ApprovalRequested) -> ApprovalDecision:
        asked.append(request)
        return decision

    events: list[Any] = []
    with anyio.fail_after(60):
        result = await run(spec(scenario(call("guarded", what="deploy"), {"say": "{tool_result}"})), "scripted",
                           runs_dir=runs_dir, tools=[guarded], approver=approver, on_event=events.append)
    assert [(a.display.kind.value, a.display.title, a.display.raw) for a in asked] == [
        ("mcp", "guarded", {"server": "harness", "tool": "guarded", "arguments": {"what": "deploy"}})]
    resolved = [e for e in events if e.type == "approval_resolved"]
    assert [r.decision for r in resolved] == [decision]
    if decision is ApprovalDecision.APPROVE:
        assert (calls, result.final_text) == ([{"what": "deploy"}], "did deploy")
    else:
        assert calls == []
        assert result.final_text == "the call to guarded was not approved (deny); do not retry it unchanged"


@pytest.mark.anyio
@pytest.mark.parametrize("disallowed", [set(), {"shell"}])
async def test_a_tool_needing_approval_is_never_approved_by_the_runner(host: PluginHost, runs_dir: Path,
                                                                       disallowed: set[str]) -> None:
    """Under `approval=never` a filter Harness enforces makes the runner approve the agent's own requests itself;
    a Python tool's `requires_approval` is still the operation's approver's to decide."""
    asked: list[ApprovalRequested] = []

    def approver(request: ApprovalRequested) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.DENY

    events: list[Any] = []
    with anyio.fail_after(60):
        result = await run(spec(scenario(call("guarded", what="prod"), {"say": "{tool_result}"}), approval="never",
                                disallowed_tools=disallowed),
                           "scripted", runs_dir=runs_dir, tools=[guarded], approver=approver, on_event=events.append)
    assert [a.display.title for a in asked] == ["guarded"]
    resolved = [(e.decision.value, e.decided_by) for e in events if e.type == "approval_resolved"]
    assert resolved == [("deny", "callback")]
    assert calls == []
    assert result.final_text == "the call to guarded was not approved (deny); do not retry it unchanged"


@pytest.mark.anyio
async def test_the_per_run_secret_reaches_no_file_harness_writes(host: PluginHost, runs_dir: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "tool-secret-0123456789abcdef"
    monkeypatch.setattr(tool_server.secrets, "token_urlsafe", lambda n: secret)
    with anyio.fail_after(60):
        result = await run(spec({"scenario": "tools_mcp"}), "scripted", runs_dir=runs_dir, tools=[add],
                           record_wire=True)
    assert result.final_text == "The tool said 5."
    written = await anyio.to_thread.run_sync(_files, runs_dir)
    assert any(name.endswith(".wire.jsonl") for name in written)
    for name, text in written.items():
        assert secret not in text, name


def _files(directory: Path) -> dict[str, str]:
    return {p.name: p.read_text(errors="replace") for p in directory.rglob("*") if p.is_file()}


@pytest.mark.anyio
async def test_a_session_serves_the_tools_to_every_turn(host: PluginHost, runs_dir: Path) -> None:
    with anyio.fail_after(60):
        async with open_session(spec({"scenario": "tools_mcp"}), "scripted", runs_dir=runs_dir,
                                tools=[add]) as session:
            first = await session.run("once")
            second = await session.run("twice")
    assert (first.final_text, second.final_text) == ("The tool said 5.", "The tool said 5.")
    assert calls == [{"a": 2, "b": 3}, {"a": 2, "b": 3}]


@pytest.mark.anyio
async def test_tools_cannot_take_a_servers_name_nor_be_anything_else(host: PluginHost, runs_dir: Path) -> None:
    with pytest.raises(ValidationError, match="'harness' is reserved for Harness's own Python tools"):
        spec({}, mcp_servers=[McpServer(name="harness", command="true")])
    with pytest.raises(InvalidSpecError, match="tools= takes functions decorated with @tool"):
        await run(spec({}), "scripted", runs_dir=runs_dir, tools=[len])  # type: ignore[list-item]


class _HttpOnly(ScriptedProvider):
    """The scripted provider as an agent that takes MCP servers only by URL."""

    info: ClassVar[ProviderInfo] = ProviderInfo(
        name="http-only", version="1.0", capabilities=frozenset(Capability) - {Capability.MCP_STDIO},
        tool_filters=ScriptedProvider.info.tool_filters)


class _HttpOnlyPlugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(_HttpOnly)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_an_agent_that_takes_only_urls_reaches_the_tools_over_loopback_http(runs_dir: Path) -> None:
    http_host = PluginHost.create(entry_points=False, plugins=[("http", _HttpOnlyPlugin())])
    events: list[Any] = []
    with anyio.fail_after(60):
        result = await run(spec({"scenario": "tools_mcp"}), "http-only", runs_dir=runs_dir, tools=[add],
                           host=http_host, on_event=events.append)
    assert result.final_text == "The tool said 5." and calls == [{"a": 2, "b": 3}]
    served = next(s for s in events[0].spec["mcp_servers"] if s["name"] == "harness")
    assert served["transport"] == "http" and served["url"].startswith("http://127.0.0.1:")
    assert served["headers"] == {"Authorization": "***"}


@pytest.mark.parametrize("anyio_backend", ["trio"])
@pytest.mark.anyio
async def test_on_trio_an_agent_that_takes_only_urls_is_refused_before_spawn(runs_dir: Path) -> None:
    http_host = PluginHost.create(entry_points=False, plugins=[("http", _HttpOnlyPlugin())])
    with pytest.raises(UnsupportedFeatureError, match="served on asyncio only"):
        await run(spec({"scenario": "tools_mcp"}), "http-only", runs_dir=runs_dir, tools=[add], host=http_host)
    assert calls == []


# --- tool filters on the `harness` server: Harness applies them itself, for every provider ------------------------


@tool
def subtract(a: int, b: int) -> int:
    calls.append({"subtract": [a, b]})
    return a - b


class _NoMcpFilter(ScriptedProvider):
    """An agent whose CLI filters no MCP tool itself: only approvals for its kinds."""

    info: ClassVar[ProviderInfo] = ProviderInfo(
        name="no-mcp-filter", version="1.0", capabilities=ScriptedProvider.info.capabilities,
        approval_kinds=frozenset({"shell", "edit", "write"}), tool_allow_lists=False)


class _ServerAllowList(ScriptedProvider):
    """An agent whose CLI takes allow-lists and filters MCP servers, not single tools."""

    info: ClassVar[ProviderInfo] = ProviderInfo(
        name="server-allow-list", version="1.0", capabilities=ScriptedProvider.info.capabilities,
        tool_filters=frozenset({"read", "mcp", "mcp:*"}))


class _FilterPlugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(_NoMcpFilter)
        register(_ServerAllowList)


@pytest.fixture
def filter_host() -> PluginHost:
    return PluginHost.create(entry_points=False, plugins=[("filters", _FilterPlugin())])


def results(events: list[Any]) -> list[tuple[str, bool]]:
    return [(e.output, e.is_error) for e in events if isinstance(e, ToolResult)]


@pytest.mark.anyio
async def test_a_disallowed_python_tool_is_withheld_by_harness_on_an_agent_that_cannot_filter_it(
        filter_host: PluginHost, runs_dir: Path) -> None:
    """An agent that filters no MCP tool, yet `disallowed_tools mcp:harness.add` is honoured: the
    `harness` server does not list `add`, so the agent has no such tool (and a call made anyway is refused:
    test_server.py); `subtract` still runs."""
    events: list[Any] = []
    with anyio.fail_after(60):
        result = await run(spec(scenario(call("add", a=2, b=3), call("subtract", a=3, b=1), {"say": "done"}),
                                disallowed_tools={"mcp:harness.add"}),
                           "no-mcp-filter", runs_dir=runs_dir, tools=[add, subtract], host=filter_host,
                           on_event=events.append)
    assert result.status.value == "success", result.error
    assert results(events) == [("MCP server 'harness' has no tool 'add' (it has: subtract)", True), ("2", False)]
    assert calls == [{"subtract": [3, 1]}]
    assert events[0].spec["disallowed_tools"] == ["mcp:harness.add"]  # run_started shows the spec as given


@pytest.mark.anyio
async def test_an_allow_list_naming_one_python_tool_serves_only_that_one(filter_host: PluginHost,
                                                                         runs_dir: Path) -> None:
    """`allowed_tools {read, mcp:harness.add}` on an agent that allows MCP tools only by server: the
    agent is given the whole `harness` server (its CLI lets `subtract` through), and Harness serves it `add`
    alone."""
    events: list[Any] = []
    with anyio.fail_after(60):
        result = await run(spec(scenario(call("subtract", a=3, b=1), call("add", a=2, b=3), {"say": "done"}),
                                allowed_tools={"read", "mcp:harness.add"}),
                           "server-allow-list", runs_dir=runs_dir, tools=[add, subtract], host=filter_host,
                           on_event=events.append)
    assert result.status.value == "success", result.error
    assert results(events) == [("MCP server 'harness' has no tool 'subtract' (it has: add)", True), ("5", False)]
    assert sorted(events[0].spec["allowed_tools"]) == ["mcp:harness.add", "read"]  # run_started: as given
    assert calls == [{"a": 2, "b": 3}]


@pytest.mark.anyio
@pytest.mark.parametrize("denied", ["mcp:harness", "mcp"])
async def test_a_disallowed_harness_server_is_not_served_and_the_run_says_its_tools_are_unused(
        denied: str, filter_host: PluginHost, runs_dir: Path) -> None:
    """`disallowed_tools mcp:harness` (or `mcp`, with no other server) forbids every Python tool: no `harness`
    server is started or given to the agent, and a warning says the tools given are unused (the filter wins: it is
    the safe side). Taken by an agent whose CLI filters no MCP tool."""
    events: list[Any] = []
    with anyio.fail_after(60):
        result = await run(spec(scenario(call("add", a=2, b=3), {"say": "{tool_result}"}),
                                disallowed_tools={denied}),
                           "no-mcp-filter", runs_dir=runs_dir, tools=[add], host=filter_host, on_event=events.append)
    assert result.status.value == "success", result.error
    assert [s["name"] for s in events[0].spec["mcp_servers"]] == []
    assert result.final_text == "no MCP server 'harness' (the run has: none)" and calls == []
    warned = [e for e in events if e.type == "notice" and e.code == "tools_unserved"]
    assert len(warned) == 1 and warned[0].level == "warning"
    assert warned[0].message == (
        "every Python tool given (tools=, --tools: add) is forbidden by this run's tool filters (disallowed_tools "
        f"'{denied}'), so Harness serves no `harness` MCP server: drop the filter or the tools")


@pytest.mark.anyio
async def test_a_session_says_its_tools_are_unused_once_not_on_every_turn(filter_host: PluginHost,
                                                                          runs_dir: Path) -> None:
    """The tools are the session's: the warning that every one of them is forbidden comes with its first turn
    only."""
    events: list[Any] = []
    with anyio.fail_after(60):
        async with open_session(spec(scenario({"say": "ok"}), disallowed_tools={"mcp:harness"}), "no-mcp-filter",
                                runs_dir=runs_dir, tools=[add], host=filter_host,
                                on_event=events.append) as session:
            first = await session.run("once")
            second = await session.run("twice")
    assert (first.final_text, second.final_text) == ("ok", "ok")
    turns = [e.run_id for e in events if e.type == "run_started"]
    warned = [e.run_id for e in events if e.type == "notice" and e.code == "tools_unserved"]
    assert len(turns) == 2 and warned == turns[:1]


@pytest.mark.anyio
async def test_a_server_named_harness_is_refused_before_spawn_even_without_tools(
        filter_host: PluginHost, runs_dir: Path) -> None:
    """`harness` is reserved, tools or not: a spec that slipped one past validation (`model_copy`) is refused
    before anything starts, so no user server is mistaken for Harness's own and its filters dropped."""
    theirs = spec({}, disallowed_tools={"mcp:harness.x"}).model_copy(
        update={"mcp_servers": (McpServer(name="harness", command="true"),)})
    with pytest.raises(InvalidSpecError, match=r"'harness' is reserved.*rename your server.*Nothing was started"):
        await run(theirs, "no-mcp-filter", runs_dir=runs_dir, host=filter_host)
    assert not runs_dir.exists()  # noqa: ASYNC240 - a one-off check
