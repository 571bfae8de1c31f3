"""The runner's checks of a run's tools before spawn, and what it does while the run plays: MCP transports against
capabilities, tool filters native / enforced through approvals / refused, attachments sent / degraded / refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest

import harness_core.testing.scripted as scripted
from harness_core import Attachment, McpServer, open_run, run
from harness_core.capabilities import Capability, ProviderInfo
from harness_core.errors import InvalidSpecError, UnsupportedFeatureError
from harness_core.events import ApprovalResolved, HarnessEvent, Notice, RunStatus, ToolResult
from harness_core.hookspecs import hookimpl
from harness_core.plugins import PluginHost
from harness_core.provider import ProviderOptions
from harness_core.spec import AgentRunSpec

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 92  # 100 bytes


class _Plain(scripted.ScriptedProvider):
    """No MCP, no attachments, no approvals, no native filters: what the runner must refuse or degrade for."""

    info: ClassVar[ProviderInfo] = ProviderInfo(name="plain", version="1", capabilities=frozenset())
    spawned: ClassVar[int] = 0

    async def probe(self, options: ProviderOptions) -> Any:
        type(self).spawned += 1
        return await super().probe(options)


class _Asking(scripted.ScriptedProvider):
    """Approvals and stdio MCP, no native filters, no attachments."""

    info: ClassVar[ProviderInfo] = ProviderInfo(
        name="asking", version="1", capabilities=frozenset({Capability.APPROVALS, Capability.MCP_STDIO}),
        approval_kinds=frozenset({"shell", "edit", "write"}))


class _Silent(scripted.ScriptedProvider):
    """Approvals, but its agent does not declare that it always asks before a command."""

    info: ClassVar[ProviderInfo] = ProviderInfo(
        name="silent", version="1", capabilities=frozenset({Capability.APPROVALS}))


class _Plugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(_Plain)
        register(_Asking)
        register(_Silent)


@pytest.fixture
def host() -> PluginHost:
    return PluginHost.create(entry_points=False, plugins=[("scripted", scripted), ("others", _Plugin())])


def spec_for(scenario: Any, **fields: Any) -> AgentRunSpec:
    return AgentRunSpec(prompt="do the task", provider_options={"scenario": scenario}, **fields)


async def collect(spec: AgentRunSpec, host: PluginHost, runs_dir: Path, provider: str,
                  **kw: Any) -> tuple[list[HarnessEvent], Any]:
    events: list[HarnessEvent] = []
    with anyio.fail_after(20):
        async with open_run(spec, provider, host=host, runs_dir=runs_dir, **kw) as live:
            async for event in live:
                events.append(event)
    return events, live


# --- MCP servers -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("server", "feature"), [
    (McpServer(name="ev", command="mcp-server-everything"), "mcp_stdio"),
    (McpServer(name="docs", url="http://127.0.0.1:9/mcp"), "mcp_http"),
    (McpServer(name="old", url="http://127.0.0.1:9/sse", transport="sse"), "mcp_sse"),
])
async def test_a_server_the_provider_cannot_take_is_refused_before_spawn_naming_who_can(
        host: PluginHost, runs_dir: Path, server: McpServer, feature: str) -> None:
    _Plain.spawned = 0
    with pytest.raises(UnsupportedFeatureError) as caught:
        await run(AgentRunSpec(prompt="x", mcp_servers=[server]), "plain", host=host, runs_dir=runs_dir)
    message = str(caught.value)
    assert f"does not support {feature!r}" in message and f"MCP server {server.name!r}" in message
    assert "Providers that have it: " in message and "scripted" in message and "Nothing was started" in message
    if feature == "mcp_stdio":
        assert "asking" in message
    assert _Plain.spawned == 0 and not runs_dir.exists()  # noqa: ASYNC240 - a one-off check


async def test_an_mcp_call_shows_as_an_mcp_tool_and_its_result_reaches_the_model(
        host: PluginHost, runs_dir: Path) -> None:
    scenario = {"steps": [{"mcp": {"server": "ev", "tool": "echo", "args": {"message": "hi"}, "output": "Echo: hi"}},
                          {"say": "it said {tool_result}"}]}
    spec = spec_for(scenario, mcp_servers=[McpServer(name="ev", command="mcp-server-everything",
                                                     env={"EV_TOKEN": "ev-secret-value-123"})])
    events, live = await collect(spec, host, runs_dir, "scripted")
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.display.kind.value == "mcp" and result.display.title == "echo" and result.output == "Echo: hi"
    assert live.result.final_text == "it said Echo: hi"
    log = live.log_path.read_text()
    assert "ev-secret-value-123" not in log and '"EV_TOKEN":"***"' in log


# --- tool filters ----------------------------------------------------------------------------------------------


async def test_a_filter_neither_native_nor_enforceable_is_refused_before_spawn(host: PluginHost,
                                                                                runs_dir: Path) -> None:
    _Plain.spawned = 0
    with pytest.raises(UnsupportedFeatureError) as caught:
        await run(AgentRunSpec(prompt="x", disallowed_tools={"shell"}), "plain", host=host, runs_dir=runs_dir)
    assert "disallowed_tools 'shell'" in str(caught.value) and "neither its CLI nor its approvals filter it" in str(
        caught.value)
    with pytest.raises(UnsupportedFeatureError, match=r"Providers that take the run's filters: asking, scripted"):
        await run(AgentRunSpec(prompt="x", disallowed_tools={"shell"}), "silent", host=host, runs_dir=runs_dir)
    with pytest.raises(UnsupportedFeatureError) as caught:
        await run(AgentRunSpec(prompt="x", disallowed_tools={"mcp:ev"}), "asking", host=host, runs_dir=runs_dir)
    assert "Providers that take the run's filters: scripted" in str(caught.value)
    with pytest.raises(UnsupportedFeatureError, match="its CLI does not filter by 'read'; use disallowed_tools"):
        await run(AgentRunSpec(prompt="x", allowed_tools={"read"}), "asking", host=host, runs_dir=runs_dir)
    assert _Plain.spawned == 0


async def test_a_disallowed_kind_is_enforced_through_approvals_and_the_rest_still_runs(
        host: PluginHost, runs_dir: Path) -> None:
    # approval `never`: Harness makes the agent ask, denies `shell` itself and approves the rest
    events, live = await collect(spec_for("tools", disallowed_tools={"shell"}), host, runs_dir, "asking")
    resolved = [e for e in events if isinstance(e, ApprovalResolved)]
    assert [r.decision.value for r in resolved] == ["deny", "approve", "approve", "approve"]
    assert all(r.decided_by == "runner" for r in resolved)
    assert "`shell` is in disallowed_tools" in (resolved[0].reason or "")
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.display.status.value for r in results] == ["declined", "completed", "completed", "completed"]
    assert live.result.status is RunStatus.SUCCESS
    started = json.loads(live.log_path.read_text().splitlines()[0])
    assert started["spec"]["approval"] == "never"  # the user's spec, as given


async def test_a_disallowed_kind_is_denied_before_the_approver_is_asked(host: PluginHost, runs_dir: Path) -> None:
    asked: list[str] = []

    def approver(request: Any) -> str:
        asked.append(request.display.kind.value)
        return "approve"

    events, _ = await collect(spec_for("tools", disallowed_tools={"edit"}, approval="untrusted"), host, runs_dir,
                              "asking", approver=approver)
    assert asked == ["shell", "read", "write"]
    denied = [e for e in events if isinstance(e, ApprovalResolved) and e.decision.value == "deny"]
    assert len(denied) == 1 and denied[0].decided_by == "runner"


async def test_a_native_filter_is_left_to_the_provider(host: PluginHost, runs_dir: Path) -> None:
    scenario = {"steps": [{"mcp": {"server": "ev", "tool": "echo", "output": "Echo"}}, {"say": "done"}]}
    events, _ = await collect(spec_for(scenario, mcp_servers=[McpServer(name="ev", command="x")],
                                       disallowed_tools={"mcp:ev.echo"}), host, runs_dir, "scripted")
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.is_error and "not allowed" in (result.output or "")
    assert not any(isinstance(e, ApprovalResolved) for e in events)


# --- attachments -----------------------------------------------------------------------------------------------


async def test_an_attachment_the_provider_takes_arrives_whole(host: PluginHost, runs_dir: Path,
                                                              tmp_path: Path) -> None:
    image = tmp_path / "dot.png"
    image.write_bytes(PNG)
    spec = spec_for({"steps": [{"report_attachments": True}]}, attachments=[Attachment.of(image)])
    events, live = await collect(spec, host, runs_dir, "scripted")
    assert live.result.final_text == "image/png 100 bytes"
    assert not any(isinstance(e, Notice) and e.code == "attachment_degraded" for e in events)


async def test_an_attachment_the_provider_cannot_take_is_degraded_with_a_notice(
        host: PluginHost, runs_dir: Path, tmp_path: Path) -> None:
    image = tmp_path / "dot.png"
    image.write_bytes(PNG)
    seen: list[str] = []

    class _Seeing(_Plain):
        async def run(self, spec: AgentRunSpec, options: Any, ctx: Any) -> Any:
            seen.append(spec.prompt)
            assert not spec.attachments
            return await super().run(spec, options, ctx)

    class _SeeingPlugin:
        @hookimpl
        def harness_register_providers(self, register: Any) -> None:
            register(_Seeing)

    seeing = PluginHost.create(entry_points=False, plugins=[("seeing", _SeeingPlugin())])
    spec = spec_for({"steps": [{"report_attachments": True}]}, attachments=[Attachment.of(image)])
    events, live = await collect(spec, seeing, runs_dir, "plain")
    notice = next(e for e in events if isinstance(e, Notice) and e.code == "attachment_degraded")
    assert "cannot take the image dot.png (image/png) natively" in notice.message
    assert notice.details["path"] == str(image)
    assert str(image) in seen[0] and seen[0].startswith("do the task")
    assert live.result.final_text == "no attachments"


async def test_strict_attachments_refuse_what_would_be_degraded(host: PluginHost, runs_dir: Path,
                                                               tmp_path: Path) -> None:
    image = tmp_path / "dot.png"
    image.write_bytes(PNG)
    with pytest.raises(UnsupportedFeatureError, match=r"'image_input'.*strict_attachments is on"):
        await run(AgentRunSpec(prompt="x", attachments=[Attachment.of(image)], strict_attachments=True), "plain",
                  host=host, runs_dir=runs_dir)


async def test_an_attachment_that_cannot_be_read_is_refused_before_spawn(host: PluginHost, runs_dir: Path,
                                                                         tmp_path: Path) -> None:
    with pytest.raises(InvalidSpecError, match=r"gone\.png' does not exist: check the path\. Nothing was started"):
        await run(AgentRunSpec(prompt="x", attachments=[Attachment.of(tmp_path / "gone.png")]), "scripted",
                  host=host, runs_dir=runs_dir)
    with pytest.raises(InvalidSpecError, match=r"given as bytes, and plain cannot take this image \(image/png\) "
                       r"natively as bytes: save it to a file.*providers that take it as bytes: scripted"):
        await run(AgentRunSpec(prompt="x", attachments=[Attachment(data=PNG, name="a.png")]), "plain",
                  host=host, runs_dir=runs_dir)
    assert not runs_dir.exists()  # noqa: ASYNC240 - a one-off check
