"""The contract's tool tests: an MCP stdio server (npm `server-everything`), an attachment arriving or degrading,
tool filters honoured or refused, a Python tool called, raising, interrupted, and asking approval.

Layer: testing (a `ProviderContract` mixin). Knows the runner API, the spec's tool fields and the scenarios; knows
no provider: each test is gated on its declaration, and what it does not declare is proved refused instead.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import zlib
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness_core import tool
from harness_core._run.tool_policy import native_allow
from harness_core.attachment import Attachment
from harness_core.capabilities import Capability
from harness_core.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    Notice,
    RunStatus,
    ToolKind,
    ToolResult,
    ToolStatus,
)
from harness_core.mcp import McpServer
from harness_core.scripted.scenarios import SCENARIOS, TOOL_RESULT, CallMcpTool, Say, Scenario
from harness_core.testing.contract._base import ContractBase, Play

__all__ = ["EVERYTHING_BIN", "ToolTests", "everything_server"]

EVERYTHING_BIN = "mcp-server-everything"
"""The executable of `@modelcontextprotocol/server-everything` (pinned in scripts/install-clis.sh)."""
def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")


_PNG = b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", (8).to_bytes(4, "big") * 2 + bytes([8, 2, 0, 0, 0])) \
    + _png_chunk(b"IDAT", zlib.compress(b"".join(b"\x00" + b"\xff\x00\x00" * 8 for _ in range(8)))) \
    + _png_chunk(b"IEND", b"")
"""An 8x8 red PNG, valid to its checksums (an agent may decode an image and drop one it cannot read)."""


def everything_server() -> McpServer | None:
    """The `everything` MCP server over stdio, from `$HARNESS_TOOLS_DIR/bin` or PATH; None when not installed."""
    tools = os.environ.get("HARNESS_TOOLS_DIR")
    found = Path(tools) / "bin" / EVERYTHING_BIN if tools else None
    path = str(found) if found is not None and found.exists() else shutil.which(EVERYTHING_BIN)
    return McpServer(name="everything", command=path, args=("stdio",)) if path else None


class ToolTests(ContractBase):
    """Tools given to the agent, for every provider as far as it declares them."""

    @pytest.mark.anyio
    async def test_mcp_stdio_server_echo(self, play: Play) -> None:
        """A stdio MCP server (`server-everything`) given in `mcp_servers`: the scenario `tools_echo` calls its
        `echo`, the call shows as an `mcp` tool, and the exact result reaches the model (the backend quotes it). A
        provider without `mcp_stdio` refuses the spec before anything starts."""
        server = everything_server() or McpServer(name="everything", command=EVERYTHING_BIN, args=("stdio",))
        if Capability.MCP_STDIO not in self.capabilities:
            await self._assert_refused(play, mcp_servers=[server])
            return
        if everything_server() is None and self._provider().cls.info.cli_name is not None:
            pytest.skip(f"{EVERYTHING_BIN} is not installed: scripts/install-clis.sh puts it in .tools/bin "
                        "(HARNESS_TOOLS_DIR)")
        played = await play("tools_echo", mcp_servers=[server])
        self.check_invariants(played)
        assert played.result.status is RunStatus.SUCCESS, played.result.error
        step = SCENARIOS["tools_echo"].steps[0]
        assert isinstance(step, CallMcpTool)
        assert played.result.final_text.strip() == SCENARIOS["tools_echo"].expected.final_text
        if played.tool_results is not None:
            assert played.tool_results == (step.output,), "the tool's exact result must reach the model"
        # the agent may first look the server's tools up (an agent that defers MCP tools searches for them)
        results = [e for e in played.events if isinstance(e, ToolResult) and e.display.kind is not ToolKind.SEARCH]
        assert [r.display.kind for r in results] == [ToolKind.MCP], [r.display for r in results]
        assert results[0].display.status is ToolStatus.COMPLETED and results[0].display.title == step.tool

    @pytest.mark.anyio
    async def test_attachment_arrives_or_degrades(self, play: Play, tmp_path: Path) -> None:
        """An image attachment reaches the model byte for byte (scenario `attachments` reports what arrived) when
        the provider declares `image_input`; else the run says so with an `attachment_degraded` notice and the
        file's path goes in the prompt, and `strict_attachments` refuses the spec before anything starts."""
        image = tmp_path / "dot.png"
        image.write_bytes(_PNG)
        attachment = Attachment.of(image)
        if Capability.IMAGE_INPUT in self.capabilities:
            played = await play("attachments", attachments=[attachment])
            self.check_invariants(played)
            assert played.result.status is RunStatus.SUCCESS, played.result.error
            assert played.result.final_text.strip() == f"image/png {len(_PNG)} bytes"
            return
        await self._assert_refused(play, attachments=[attachment], strict_attachments=True)
        played = await play("say", attachments=[attachment])
        self.check_invariants(played)
        assert played.result.status is RunStatus.SUCCESS, played.result.error
        notices = [e for e in played.events if isinstance(e, Notice) and e.code == "attachment_degraded"]
        assert len(notices) == 1 and notices[0].details["path"] == str(image), notices
        if played.requests is not None:
            assert any(str(image) in json.dumps(request) for request in played.requests), \
                "the path must be in the prompt"

    @pytest.mark.anyio
    async def test_disallowed_tools_honoured_or_refused(self, play: Play) -> None:
        """`disallowed_tools={"shell"}`: the scenario `tools` runs its other tools, and its command never
        completes (the CLI filters it, or Harness denies it through approvals); a provider that can do neither
        refuses the spec before anything starts."""
        info = self._provider().cls.info
        native = "shell" in info.tool_filters
        if not native and (Capability.APPROVALS not in self.capabilities or "shell" not in info.approval_kinds):
            await self._assert_refused(play, disallowed_tools={"shell"})
            return
        played = await play("tools", disallowed_tools={"shell"})
        self.check_invariants(played)
        results = [e for e in played.events if isinstance(e, ToolResult)]
        shell = [r for r in results if r.display.kind is ToolKind.SHELL]
        assert all(r.display.status is not ToolStatus.COMPLETED for r in shell), [r.display for r in shell]
        if not native:
            denied = [e for e in played.events if isinstance(e, ApprovalResolved) and e.decided_by == "runner"
                      and e.decision.value == "deny"]
            assert denied and "disallowed_tools" in (denied[0].reason or "")
        assert any(r.display.kind is ToolKind.WRITE and r.display.status is ToolStatus.COMPLETED for r in results), \
            "the tools not filtered must still run"

    @pytest.mark.anyio
    async def test_an_allow_list_the_cli_cannot_honour_is_refused(self, play: Play) -> None:
        """`allowed_tools` means "only these": a provider whose CLI cannot turn off every tool it leaves out
        (`ProviderInfo.tool_allow_lists` off), or has no MCP filter at all, refuses `allowed_tools={"mcp"}` before
        anything starts, rather than leave its shell and edits on; one whose allow-list names MCP servers only
        (`tool_allow_mcp_tools` off) refuses one tool of a server, `mcp:everything.echo`, before anything starts."""
        info = self._provider().cls.info
        if not native_allow("mcp", info):
            await self._assert_refused(play, allowed_tools={"mcp"})
        elif not native_allow("mcp:everything.echo", info):
            await self._assert_refused(play, allowed_tools={"mcp:everything.echo"})
        else:
            pytest.skip(f"{self.provider_name} takes an allow-list natively (its own tests show its CLI's flags)")

    @pytest.mark.anyio
    async def test_python_tool_is_called_with_the_scenarios_arguments(self, play: Play) -> None:
        """A Python function given as a tool (`tools=[add]`, served as the MCP server `harness`): the scenario
        `tools_mcp` calls `add(a=2, b=3)` and its exact result, 5, reaches the model. """
        if not {Capability.MCP_STDIO, Capability.MCP_HTTP} & self.capabilities:
            pytest.skip(f"{self.provider_name} takes no MCP server (mcp_stdio or mcp_http), so no Python tools")

        def add(a: int, b: int) -> int:
            """Add two numbers."""
            return a + b

        played = await play("tools_mcp", run_options={"tools": [tool(add)]})
        self.check_invariants(played)
        assert played.result.status is RunStatus.SUCCESS, played.result.error
        assert played.result.final_text.strip() == SCENARIOS["tools_mcp"].expected.final_text
        if played.tool_results is not None:
            assert played.tool_results == ("5",)

    def _python_tools_called_for_real(self, harness_real: bool) -> None:
        """Skip unless the agent calls the `harness` server for real: it takes an MCP server, and it is the real CLI
        (`--harness-real`) or an in-process provider (a fake CLI reports a step's `output` without calling)."""
        if not {Capability.MCP_STDIO, Capability.MCP_HTTP} & self.capabilities:
            pytest.skip(f"{self.provider_name} takes no MCP server (mcp_stdio or mcp_http), so no Python tools")
        calls = self.fake_calls_mcp
        if calls is None:
            calls = self._provider().cls.info.cli_name is None
        if not harness_real and not calls:
            pytest.skip("a fake CLI does not call MCP servers; the -real env plays this against the real CLI")

    @pytest.mark.anyio
    async def test_python_tool_error_reaches_the_model(self, play: Play, harness_real: bool) -> None:
        """A Python tool that raises: the agent gets a tool error naming the exception (the model reads it), the
        call shows as a failed `mcp` tool, and the run goes on to succeed."""
        self._python_tools_called_for_real(harness_real)

        def boom(reason: str) -> str:
            """Fail with the reason given."""
            raise RuntimeError(f"it broke: {reason}")

        said = "boom raised RuntimeError: it broke: disk"
        scenario = Scenario("tools_raise", (CallMcpTool("harness", "boom", {"reason": "disk"}, output=said),
                                            Say(f"It said: {TOOL_RESULT}")))
        played = await play(scenario, run_options={"tools": [tool(boom)]})
        self.check_invariants(played)
        assert played.result.status is RunStatus.SUCCESS, played.result.error
        assert said in played.result.final_text, played.result.final_text
        if played.tool_results is not None:
            assert len(played.tool_results) == 1 and said in played.tool_results[0], played.tool_results
        results = [e for e in played.events if isinstance(e, ToolResult) and e.display.kind is ToolKind.MCP]
        assert len(results) == 1 and results[0].is_error and results[0].display.status is ToolStatus.FAILED, \
            [r.display for r in results]

    @pytest.mark.anyio
    async def test_python_tool_interrupted(self, play: Play, harness_real: bool) -> None:
        """The run is interrupted while a Python tool runs: the function is cancelled (not left running), the run
        ends `interrupted` within `interrupt_within`, and what the model may read of the call says it was
        cancelled."""
        self._python_tools_called_for_real(harness_real)
        if Capability.INTERRUPT not in self.capabilities:
            pytest.skip(f"{self.provider_name} does not declare 'interrupt'")
        started = anyio.Event()
        cancelled: list[str] = []
        live_runs: list[Any] = []

        async def wait_forever() -> str:
            """Wait until cancelled."""
            started.set()
            try:
                await anyio.sleep_forever()
            finally:
                cancelled.append("wait_forever")
            return "never"

        asked: list[float] = []

        async def interrupt_when_running() -> None:
            await started.wait()
            asked.append(time.monotonic())
            live_runs[0].interrupt()

        scenario = Scenario("tools_wait", (CallMcpTool("harness", "wait_forever", output="never"),
                                           Say(f"It said: {TOOL_RESULT}")))
        async with anyio.create_task_group() as tg:
            tg.start_soon(interrupt_when_running)
            played = await play(scenario, run_options={"tools": [tool(wait_forever)]},
                                on_event=lambda event, live: live_runs.append(live))
            tg.cancel_scope.cancel()
        self.check_invariants(played)
        assert asked, "the tool never started"
        assert played.result.status is RunStatus.INTERRUPTED, played.result
        assert time.monotonic() - asked[0] < self.interrupt_within
        assert cancelled == ["wait_forever"], "the function must be cancelled, not left running"
        if played.tool_results:
            assert "wait_forever was cancelled" in played.tool_results[0], played.tool_results

    @pytest.mark.anyio
    @pytest.mark.parametrize("decision", [ApprovalDecision.APPROVE, ApprovalDecision.DENY])
    async def test_python_tool_approval(self, decision: ApprovalDecision, play: Play, harness_real: bool) -> None:
        """A Python tool with `requires_approval`: the operation's approver is asked once (kind `mcp`, the tool's
        name and arguments); approved, the function runs and its result reaches the model; denied, it never
        runs and the model reads that it was not approved."""
        self._python_tools_called_for_real(harness_real)
        ran: list[str] = []
        asked: list[ApprovalRequested] = []

        def deploy(service: str) -> str:
            """Deploy a service."""
            ran.append(service)
            return f"deployed {service}"

        def approver(request: ApprovalRequested) -> ApprovalDecision:
            if request.display.raw == {"server": "harness", "tool": "deploy", "arguments": {"service": "web"}}:
                asked.append(request)
                return decision
            return ApprovalDecision.APPROVE  # the agent's own asking, if it asks before an MCP call

        scenario = Scenario("tools_approval", (CallMcpTool("harness", "deploy", {"service": "web"},
                                                           output="deployed web"), Say(f"It said: {TOOL_RESULT}")))
        played = await play(scenario, approver=approver, run_options={"tools": [tool(requires_approval=True)(deploy)]})
        self.check_invariants(played)
        assert played.result.status is RunStatus.SUCCESS, played.result.error
        assert [(a.display.kind, a.display.title) for a in asked] == [(ToolKind.MCP, "deploy")]
        mine = [e for e in played.events if isinstance(e, ApprovalResolved) and e.request_id == asked[0].request_id]
        assert [(r.decision, r.decided_by) for r in mine] == [(decision, "callback")]
        expected = "deployed web" if decision is ApprovalDecision.APPROVE else "the call to deploy was not approved"
        assert ran == (["web"] if decision is ApprovalDecision.APPROVE else [])
        assert expected in played.result.final_text, played.result.final_text
        if played.tool_results is not None:
            assert len(played.tool_results) == 1 and expected in played.tool_results[0], played.tool_results
