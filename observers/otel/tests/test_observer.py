"""harness-otel on offline runs of the in-process scripted provider, with the SDK's in-memory span exporter and
metric reader: span names, parent/child, the attributes the GenAI conventions require, usage equal to the run's
result, the trace context handed to providers, sessions, content capture scrubbed, no secret."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest
from harness_core import (
    AgentRunSpec,
    ApprovalDecision,
    ApprovalRequested,
    Capability,
    HarnessResult,
    HarnessToolDetails,
    RunStatus,
    SessionSpec,
    ToolKind,
    ToolResult,
    ToolStatus,
    ToolUse,
    Usage,
    open_session,
    run,
)
from harness_core.plugins import PluginHost
from harness_core.provider import NoOptions, Provider, ProviderInfo, RunContext, hookimpl
from harness_core.spans import run_spans
from harness_core.store import read_events
from harness_core.testing import scripted
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from harness_otel.observer import OtelObserver

SECRET = "sk-test-abcdefghijklmnopqrstuvwxyz0123456789"


class Telemetry:
    def __init__(self, *, content: bool = False, environ: dict[str, str] | None = None) -> None:
        self.spans = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.tracer_provider = tracer_provider
        self.metrics = InMemoryMetricReader()
        self.observer = OtelObserver(tracer_provider, MeterProvider(metric_readers=[self.metrics]), content=content,
                                     environ=environ or {})

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.finished() if s.name.startswith(prefix)]

    def metric_points(self) -> dict[str, list[Any]]:
        data = self.metrics.get_metrics_data()
        found: dict[str, list[Any]] = {}
        assert data is not None
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    found.setdefault(metric.name, []).extend(metric.data.data_points)
        return found


class Seen:
    carriers: ClassVar[list[dict[str, str]]] = []


class TracedProvider(Provider[NoOptions]):
    """Asks for its trace context as a real provider would before spawning, then reports one tool."""

    info: ClassVar[ProviderInfo] = ProviderInfo(name="traced", version="1.0", capabilities=frozenset(),
                                                description="test provider that reads its trace context")

    async def run(self, spec: AgentRunSpec, options: NoOptions, ctx: RunContext) -> HarnessResult:
        Seen.carriers.append(ctx.trace_context())
        display = HarnessToolDetails(kind=ToolKind.SHELL, title="Running command", command=f"curl -H 'Bearer {SECRET}'")
        await ctx.emit(ToolUse(tool_id="t1", name="Bash", display=display))
        done = display.model_copy(update={"status": ToolStatus.COMPLETED, "exit_code": 0})
        await ctx.emit(ToolResult(tool_id="t1", name="Bash", display=done, output=f"token {SECRET}"))
        Seen.carriers.append(ctx.trace_context())
        return HarnessResult(status=RunStatus.SUCCESS, final_text="ok", usage=Usage(input_tokens=7, output_tokens=3))


TOKEN = "hunter2hunter2"
"""A secret only the run's own set knows (a `spec.env` value: no credential shape for the scrubber to find)."""


class TitledProvider(Provider[NoOptions]):
    """Titles its tool and its approval with the command it runs, a secret in it (as Gemini and an ACP agent's
    unknown tool do), under a path from a variable it declares public; says its model is OpenAI's."""

    info: ClassVar[ProviderInfo] = ProviderInfo(name="titled", version="1.0", capabilities=frozenset(
        {Capability.APPROVALS}), description="test provider whose titles carry a secret", genai_provider="openai",
        public_env=frozenset({"TITLED_HOME"}))

    async def run(self, spec: AgentRunSpec, options: NoOptions, ctx: RunContext) -> HarnessResult:
        display = HarnessToolDetails(kind=ToolKind.SHELL, title=f"curl -H 'Authorization: Bearer {TOKEN}' x",
                                     command="curl x", path=f"{spec.env['TITLED_HOME']}/notes.txt")
        await ctx.emit(ToolUse(tool_id="t1", name="Bash", display=display))
        await ctx.request_approval(ApprovalRequested(request_id="a1", tool_id="t1", display=display))
        done = display.model_copy(update={"status": ToolStatus.COMPLETED, "exit_code": 0})
        await ctx.emit(ToolResult(tool_id="t1", name="Bash", display=done))
        return HarnessResult(status=RunStatus.SUCCESS, usage=Usage(input_tokens=7, output_tokens=3))


class _TracedPlugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(TracedProvider)
        register(TitledProvider)


@pytest.fixture
def telemetry() -> Telemetry:
    return Telemetry()


def _host(telemetry: Telemetry) -> PluginHost:
    return PluginHost.create(entry_points=False, plugins=[("scripted", scripted), ("traced", _TracedPlugin()),
                                                           ("otel", telemetry.observer)])


@pytest.fixture(autouse=True)
def _clean() -> Iterator[None]:
    Seen.carriers.clear()
    yield
    Seen.carriers.clear()


def _run(spec: AgentRunSpec, provider: str, host: PluginHost, runs_dir: Path, **kwargs: Any) -> HarnessResult:
    async def main() -> HarnessResult:
        return await run(spec, provider, host=host, runs_dir=runs_dir, **kwargs)

    return anyio.run(main)


def _children(spans: list[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    assert parent.context is not None
    return [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]


def test_a_run_is_one_invoke_agent_span_with_an_execute_tool_child_per_tool_action(
        telemetry: Telemetry, tmp_path: Path) -> None:
    result = _run(AgentRunSpec(prompt="do it", cwd=tmp_path, model="m-1", provider_options={"scenario": "tools"}),
                  "scripted", _host(telemetry), tmp_path / "runs")
    spans = telemetry.finished()
    (agent,) = telemetry.named("invoke_agent")
    assert agent.name == "invoke_agent scripted"
    assert agent.kind is SpanKind.CLIENT and agent.parent is None
    attributes = dict(agent.attributes or {})
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    assert attributes["gen_ai.provider.name"] == "scripted"
    assert attributes["gen_ai.agent.name"] == "scripted"
    assert attributes["gen_ai.request.model"] == "m-1"
    assert attributes["harness.run_id"] == result.run_id
    assert attributes["harness.status"] == "success"
    assert attributes["gen_ai.conversation.id"] == result.session_id
    assert attributes["gen_ai.usage.input_tokens"] == result.usage.input_tokens == 100
    assert attributes["gen_ai.usage.output_tokens"] == result.usage.output_tokens
    assert attributes["gen_ai.usage.cache_read.input_tokens"] == result.usage.cached_input_tokens
    assert agent.status.status_code is StatusCode.UNSET  # success leaves it unset: only ERROR is set
    tools = _children(spans, agent)
    assert [s.name for s in tools] == ["execute_tool shell", "execute_tool read", "execute_tool edit",
                                       "execute_tool write"]
    assert len(spans) == 5
    for tool in tools:
        assert tool.kind is SpanKind.INTERNAL
        assert tool.status.status_code is StatusCode.UNSET
        tool_attributes = dict(tool.attributes or {})
        assert tool_attributes["gen_ai.operation.name"] == "execute_tool"
        assert tool_attributes["gen_ai.tool.name"] == tool.name.split(" ", 1)[1]
        assert tool_attributes["gen_ai.tool.call.id"]
        assert tool_attributes["harness.tool.status"] == "completed"
        assert tool.context.trace_id == agent.context.trace_id  # type: ignore[union-attr]
        assert agent.start_time is not None and tool.start_time is not None and agent.end_time is not None
        assert agent.start_time <= tool.start_time <= agent.end_time
    assert dict(tools[0].attributes or {})["process.exit.code"] == 0
    assert "gen_ai.tool.call.result" not in dict(tools[0].attributes or {}), "no content unless asked"
    assert "gen_ai.input.messages" not in attributes


def test_span_times_are_the_events_times(telemetry: Telemetry, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    result = _run(AgentRunSpec(prompt="do it", cwd=tmp_path, provider_options={"scenario": "tools"}), "scripted",
                  _host(telemetry), runs)
    events = list(read_events(runs / f"{result.run_id}.jsonl"))
    (agent,) = telemetry.named("invoke_agent")
    assert agent.start_time == int(events[0].ts * 1e9)
    assert agent.end_time == int(events[-1].ts * 1e9)
    tree = run_spans(events)  # the same records `harness trace` prints
    assert tree is not None and [c.name for c in tree.children] == [s.name for s in telemetry.named("execute_tool")]


def test_metrics_follow_the_run(telemetry: Telemetry, tmp_path: Path) -> None:
    _run(AgentRunSpec(prompt="do it", cwd=tmp_path, provider_options={"scenario": "tools"}), "scripted",
         _host(telemetry), tmp_path / "runs")
    points = telemetry.metric_points()
    usage = {p.attributes["gen_ai.token.type"]: p.sum for p in points["gen_ai.client.token.usage"]}
    assert usage == {"input": 100, "output": 20}
    (duration,) = points["gen_ai.client.operation.duration"]
    assert duration.attributes["gen_ai.operation.name"] == "invoke_agent" and duration.count == 1
    (runs,) = points["harness.runs"]
    assert runs.value == 1 and runs.attributes["harness.status"] == "success"
    actions = {(p.attributes["harness.tool.kind"], p.attributes["harness.tool.status"]): p.value
               for p in points["harness.tool.actions"]}
    assert sum(actions.values()) == 4 and all(status == "completed" for _, status in actions)


def test_an_approval_wait_is_a_child_of_its_tool_span(telemetry: Telemetry, tmp_path: Path) -> None:
    _run(AgentRunSpec(prompt="do it", cwd=tmp_path, approval="on-request", provider_options={"scenario": "tools"}),
         "scripted", _host(telemetry), tmp_path / "runs", approver=lambda request: ApprovalDecision.APPROVE)
    spans = telemetry.finished()
    approvals = [s for s in spans if s.name == "harness.approval"]
    assert approvals, [s.name for s in spans]
    tools = {s.context.span_id: s for s in telemetry.named("execute_tool")}  # type: ignore[union-attr]
    for approval in approvals:
        assert approval.parent is not None and approval.parent.span_id in tools
        attributes = dict(approval.attributes or {})
        assert attributes["harness.approval.decision"] == "approve"
        assert attributes["harness.approval.decided_by"] == "callback"
    waits = telemetry.metric_points()["harness.approval.wait"]
    assert sum(p.count for p in waits) == len(approvals)


def test_a_failed_run_has_its_error_type(telemetry: Telemetry, tmp_path: Path) -> None:
    result = _run(AgentRunSpec(prompt="x", cwd=tmp_path, provider_options={"scenario": "fail_401"}), "scripted",
                  _host(telemetry), tmp_path / "runs")
    (agent,) = telemetry.named("invoke_agent")
    assert result.error is not None
    assert agent.status.status_code is StatusCode.ERROR
    assert dict(agent.attributes or {})["error.type"] == result.error.code
    assert [e.name for e in agent.events] == ["harness.error"]


def test_the_provider_gets_its_runs_span_as_trace_context(telemetry: Telemetry, tmp_path: Path) -> None:
    _run(AgentRunSpec(prompt="x", cwd=tmp_path), "traced", _host(telemetry), tmp_path / "runs")
    (agent,) = telemetry.named("invoke_agent")
    assert agent.context is not None
    expected = f"00-{agent.context.trace_id:032x}-{agent.context.span_id:016x}-{agent.context.trace_flags:02x}"
    assert Seen.carriers == [{"traceparent": expected}, {"traceparent": expected}]
    assert agent.context.trace_flags.sampled


def test_a_run_continues_the_trace_its_spec_carries_and_the_current_one(telemetry: Telemetry, tmp_path: Path) -> None:
    given = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    _run(AgentRunSpec(prompt="x", cwd=tmp_path, trace_context={"traceparent": given}), "traced", _host(telemetry),
         tmp_path / "runs")
    (agent,) = telemetry.named("invoke_agent")
    assert agent.parent is not None and f"{agent.parent.span_id:016x}" == "b7ad6b7169203331"
    assert f"{agent.context.trace_id:032x}" == "0af7651916cd43dd8448eb211c80319c"  # type: ignore[union-attr]
    telemetry.spans.clear()
    host = _host(telemetry)
    tracer = telemetry.tracer_provider.get_tracer("app")
    with tracer.start_as_current_span("app work") as outer:
        assert host.trace_context(None)["traceparent"].split("-")[2] == f"{outer.get_span_context().span_id:016x}"
        carried = host.with_trace_context(AgentRunSpec(prompt="x", cwd=tmp_path))
        assert carried.trace_context == host.trace_context(None)
        _run(AgentRunSpec(prompt="x", cwd=tmp_path), "traced", host, tmp_path / "runs")
    (agent,) = telemetry.named("invoke_agent")
    assert agent.parent is not None and agent.parent.span_id == outer.get_span_context().span_id


def test_without_a_current_span_the_process_traceparent_is_the_parent(tmp_path: Path) -> None:
    given = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"
    telemetry = Telemetry(environ={"TRACEPARENT": given})
    host = _host(telemetry)
    assert host.trace_context(None) == {"traceparent": given}
    _run(AgentRunSpec(prompt="x", cwd=tmp_path), "traced", host, tmp_path / "runs")
    (agent,) = telemetry.named("invoke_agent")
    assert agent.parent is not None and f"{agent.parent.span_id:016x}" == "00f067aa0ba902b7"


def test_no_trace_context_and_no_observer_call_without_an_observer(tmp_path: Path) -> None:
    host = PluginHost.create(entry_points=False, plugins=[("scripted", scripted), ("traced", _TracedPlugin())])
    assert not host.observes_events and not host.observes_runs
    assert host.trace_context(None) == {} and host.trace_context("any") == {}
    _run(AgentRunSpec(prompt="x", cwd=tmp_path), "traced", host, tmp_path / "runs")
    assert Seen.carriers == [{}, {}]


def test_a_sessions_turns_are_children_of_one_session_span(telemetry: Telemetry, tmp_path: Path) -> None:
    host = _host(telemetry)

    async def main() -> list[HarnessResult]:
        async with open_session(SessionSpec(cwd=tmp_path), "scripted", host=host, runs_dir=tmp_path / "runs") as s:
            return [await s.run("one"), await s.run("two")]

    results = anyio.run(main)
    spans = telemetry.named("invoke_agent")
    session = next(s for s in spans if s.parent is None)
    turns = _children(spans, session)
    assert len(spans) == 3 and len(turns) == 2
    assert [dict(t.attributes or {})["harness.session.turn"] for t in turns] == [0, 1]
    conversation = {dict(s.attributes or {})["gen_ai.conversation.id"] for s in spans}
    assert conversation == {results[0].session_id}
    assert dict(session.attributes or {})["harness.session.closed"] == "closed by its owner"
    assert dict(session.attributes or {})["gen_ai.provider.name"] == "scripted"  # it declares none: its own name
    assert session.status.status_code is StatusCode.UNSET


def test_content_is_captured_only_when_asked_and_scrubbed(tmp_path: Path) -> None:
    telemetry = Telemetry(content=True)
    _run(AgentRunSpec(prompt=f"use {SECRET} please", cwd=tmp_path, env={"MY_TOKEN": "hunter2hunter2"}), "traced",
         _host(telemetry), tmp_path / "runs")
    (agent,) = telemetry.named("invoke_agent")
    (tool,) = telemetry.named("execute_tool")
    messages = json.loads(str(dict(agent.attributes or {})["gen_ai.input.messages"]))
    assert messages[0]["role"] == "user" and "please" in messages[0]["parts"][0]["content"]
    assert dict(tool.attributes or {})["gen_ai.tool.call.result"] == "token ***"
    for span in telemetry.finished():
        text = json.dumps({k: str(v) for k, v in (span.attributes or {}).items()})
        assert SECRET not in text and "hunter2hunter2" not in text, span.name


def test_no_secret_in_any_span_without_content(telemetry: Telemetry, tmp_path: Path) -> None:
    """Nor in a tool's or an approval's title (`titled` puts a `spec.env` secret there, as Gemini titles a command
    with its text): `***` on both spans, scrubbed with the run's own set (`harness_run_starting`'s `secrets`),
    which keeps the provider's public `TITLED_HOME` readable."""
    _run(AgentRunSpec(prompt=f"use {SECRET}", cwd=tmp_path), "traced", _host(telemetry), tmp_path / "runs")
    (tool,) = telemetry.named("execute_tool")
    assert SECRET not in str(dict(tool.attributes or {})["harness.tool.command"])
    telemetry.spans.clear()
    home = str(tmp_path / "titled-home")
    _run(AgentRunSpec(prompt=f"use {SECRET}", cwd=tmp_path, approval="on-request",
                      env={"MY_TOKEN": TOKEN, "TITLED_HOME": home}),
         "titled", _host(telemetry), tmp_path / "runs", approver=lambda request: ApprovalDecision.APPROVE)
    (tool,) = telemetry.named("execute_tool")
    (approval,) = telemetry.named("harness.approval")
    for span in (tool, approval):
        attributes = dict(span.attributes or {})
        assert attributes["harness.tool.title"] == "curl -H 'Authorization: Bearer ***' x", span.name
        assert attributes["harness.tool.path"] == f"{home}/notes.txt", span.name
    for span in telemetry.finished():
        text = json.dumps({k: str(v) for k, v in (span.attributes or {}).items()})
        assert SECRET not in text and TOKEN not in text, span.name


def test_gen_ai_provider_name_is_the_value_the_provider_declares(telemetry: Telemetry, tmp_path: Path) -> None:
    _run(AgentRunSpec(prompt="x", cwd=tmp_path, approval="on-request",
                      env={"MY_TOKEN": TOKEN, "TITLED_HOME": str(tmp_path)}),
         "titled", _host(telemetry), tmp_path / "runs", approver=lambda request: ApprovalDecision.APPROVE)
    (agent,) = telemetry.named("invoke_agent")
    attributes = dict(agent.attributes or {})
    assert attributes["gen_ai.provider.name"] == "openai"  # the conventions' well-known value, ProviderInfo's
    assert attributes["gen_ai.agent.name"] == attributes["harness.provider"] == "titled"  # Harness's own name
    points = telemetry.metric_points()
    assert {p.attributes["gen_ai.provider.name"] for p in points["gen_ai.client.token.usage"]} == {"openai"}
    assert {p.attributes["harness.provider"] for p in points["harness.runs"]} == {"titled"}


def test_the_observer_uses_the_applications_tracer_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness_otel.sdk import providers_from_environment

    app = TracerProvider()
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: app)
    providers = providers_from_environment({})
    assert providers.tracer_provider is app
    assert app not in providers.owned
    providers.shutdown()
