"""An agent that asks its own approval before it calls an MCP tool (some do) and a Python tool
with `requires_approval`: one question per call, the tool's own with the checked arguments; the agent's question is
approved by the runner, and the live view does not show it. Another server's tool is asked about as before."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest

from harness_core import AgentRunSpec, ApprovalDecision, ApprovalRequested, McpServer, run, tool
from harness_core.capabilities import ProviderInfo
from harness_core.cli.render import Renderer
from harness_core.hookspecs import hookimpl
from harness_core.plugins import PluginHost
from harness_core.provider import RunContext
from harness_core.scripted.scenarios import CallMcpTool
from harness_core.testing.scripted import ScriptedProvider, tool_details
from harness_core.tooldisplay import mcp_call_text

called: list[str] = []
_DONE = {ApprovalDecision.APPROVE: "approved", ApprovalDecision.DENY: "denied"}


@tool(requires_approval=True)
def count_lines(path: str) -> int:
    """Count a file's lines (asks first)."""
    called.append(path)
    return 3


@tool
def add(a: int, b: int) -> int:
    return a + b


class _AsksFirst(ScriptedProvider):
    """A scripted agent whose CLI asks before each MCP call, as some do: the request's display is the MCP
    action's (its `raw` names the server and the tool); refused, the tool is not called."""

    info: ClassVar[ProviderInfo] = ProviderInfo(
        name="asks-first", version="1.0", capabilities=ScriptedProvider.info.capabilities,
        tool_filters=ScriptedProvider.info.tool_filters, tool_allow_lists=False,
        approval_kinds=ScriptedProvider.info.approval_kinds)

    async def _mcp(self, step: CallMcpTool, index: int, spec: AgentRunSpec, ctx: RunContext) -> str:
        _, display = tool_details(step)
        display = display.model_copy(update={"command": mcp_call_text(step.tool, step.args)})
        decision = await ctx.request_approval(ApprovalRequested(request_id=f"agent-{index}", tool_id=f"call_{index}",
                                                                display=display, reason=f"{step.tool} (MCP)"))
        if decision is not ApprovalDecision.APPROVE:
            return f"Tool {step.tool} was canceled by the user."
        return await super()._mcp(step, index, spec, ctx)


class _Plugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(_AsksFirst)


@pytest.fixture
def asks_host() -> PluginHost:
    return PluginHost.create(entry_points=False, plugins=[("asks-first", _Plugin())])


def _spec(*steps: dict[str, Any], **fields: Any) -> AgentRunSpec:
    return AgentRunSpec(prompt="go", approval="on-request", provider_options={"scenario": {"steps": list(steps)}},
                        **fields)


@pytest.mark.anyio
@pytest.mark.parametrize("decision", [ApprovalDecision.APPROVE, ApprovalDecision.DENY])
async def test_one_question_per_call_of_a_tool_that_asks_itself(asks_host: PluginHost, runs_dir: Path,
                                                                 decision: ApprovalDecision) -> None:
    called.clear()
    asked: list[ApprovalRequested] = []

    def approver(request: ApprovalRequested) -> ApprovalDecision:
        asked.append(request)
        return decision

    events: list[Any] = []
    steps = ({"mcp": {"server": "harness", "tool": "count_lines", "args": {"path": "~/.bashrc"}}},
             {"say": "{tool_result}"})
    with anyio.fail_after(60):
        result = await run(_spec(*steps), "asks-first", host=asks_host, runs_dir=runs_dir, tools=[count_lines],
                           approver=approver, on_event=events.append)
    assert [a.display.command for a in asked] == ["count_lines(path='~/.bashrc')"]  # the tool's own, once
    assert asked[0].reason == "the tool asks for approval before each call"
    resolved = [(e.decision.value, e.decided_by) for e in events if e.type == "approval_resolved"]
    assert resolved == [("approve", "runner"), (decision.value, "callback")]  # the agent's, then the tool's
    assert called == (["~/.bashrc"] if decision is ApprovalDecision.APPROVE else [])
    if decision is ApprovalDecision.DENY:
        assert result.final_text.startswith("the call to count_lines was not approved (deny)")
    view = io.StringIO()
    renderer = Renderer(view)
    for event in events:
        renderer.feed(event)
    renderer.close()
    approvals = [line for line in view.getvalue().splitlines() if line.startswith("[approval]")]
    assert approvals == [f"[approval] count_lines(path='~/.bashrc') — {_DONE[decision]} by callback"], approvals


@pytest.mark.anyio
async def test_the_agents_question_about_another_tool_is_still_the_approvers(asks_host: PluginHost,
                                                                             runs_dir: Path) -> None:
    """`add` does not ask itself, and `echo` is another server's (even if named like a Python tool): the agent's
    own question goes to the approver as before."""
    asked: list[str | None] = []

    def approver(request: ApprovalRequested) -> ApprovalDecision:
        asked.append(request.display.command)
        return ApprovalDecision.APPROVE

    other = McpServer(name="other", command="unused")
    steps = ({"mcp": {"server": "harness", "tool": "add", "args": {"a": 2, "b": 3}}},
             {"mcp": {"server": "other", "tool": "count_lines", "args": {"path": "x"}, "output": "1"}},
             {"say": "{tool_result}"})
    with anyio.fail_after(60):
        result = await run(_spec(*steps, mcp_servers=[other]), "asks-first", host=asks_host, runs_dir=runs_dir,
                           tools=[add, count_lines], approver=approver)
    assert result.status.value == "success", result.error
    assert asked == ["add(a=2, b=3)", "count_lines(path='x')"]
