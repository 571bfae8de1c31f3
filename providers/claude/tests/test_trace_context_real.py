"""Trace context into the real pinned Claude Code, offline against the scripted Messages backend, with its own
tracing on (`CLAUDE_CODE_ENABLE_TELEMETRY`, `CLAUDE_CODE_ENHANCED_TELEMETRY_BETA`, OTLP/HTTP JSON to a receiver on
127.0.0.1): a run's `claude_code.interaction` span has the run's span as parent (from `TRACEPARENT`, which its
tools' shells inherit too); in a live session, spawned once, every turn's has the session's (Claude Code reads the
context at start only: docs/observe.md). Marked `real_cli`; skipped without the binary."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_helpers import CLAUDE, needs_real_claude, run_spec
from harness_core import AgentRunSpec, SessionSpec, open_session
from harness_core.plugins import PluginHost
from harness_core.scripted.scenarios import RunCommand, Say, Scenario
from harness_core.testing.tracing import Span, SpanCollector, TraceCarriers, carrier_for, span_id_of

import harness_claude
from harness_claude.provider import ClaudeProvider

pytestmark = [*needs_real_claude, pytest.mark.anyio, pytest.mark.usefixtures("no_leftovers")]
ENV_CHECK = Scenario("envcheck", (RunCommand("printenv TRACEPARENT TRACESTATE"), Say("done")))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def tracer() -> TraceCarriers:
    return TraceCarriers()


@pytest.fixture
def traced(tracer: TraceCarriers) -> PluginHost:
    return PluginHost.create(entry_points=False, plugins=[("claude", harness_claude), ("tracing", tracer)], env={})


def telemetry(collector: SpanCollector) -> dict[str, str]:
    return {"CLAUDE_CODE_ENABLE_TELEMETRY": "1", "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA": "1",
            "OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
            "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint, "OTEL_METRICS_EXPORTER": "none",
            "OTEL_LOGS_EXPORTER": "none"}


def setup_for(tmp_path: Path, scenario: Scenario, collector: SpanCollector) -> tuple[Any, Path, dict[str, str]]:
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir(exist_ok=True)
    state.mkdir(exist_ok=True)
    setup = ClaudeProvider().offline_setup(scenario, ws, state)
    assert setup.backend is not None
    setup.backend.replay_each_prompt = True
    return setup.backend, ws, {**setup.env, **telemetry(collector)}


def interactions(collector: SpanCollector, count: int) -> list[Span]:
    """Claude Code's `claude_code.interaction` spans (one per turn), waiting up to 15 s for its exporter."""
    deadline = time.monotonic() + 15
    while len(found := collector.named("claude_code.interaction")) < count and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(found) == count, found
    return found


async def test_a_runs_spans_nest_under_the_run(tmp_path: Path, traced: PluginHost, tracer: TraceCarriers) -> None:
    with SpanCollector() as collector:
        backend, ws, env = setup_for(tmp_path, ENV_CHECK, collector)
        spec = AgentRunSpec(prompt="SCENARIO:envcheck", cwd=ws, env=env, sandbox="danger-full-access",
                            approval="never", provider_options={"claude_bin": CLAUDE, "max_retries": 0})
        with backend:
            out = await run_spec(spec, traced, timeout=90)
        assert out.result.status.value == "success"
        carrier = carrier_for(out.events[0].run_id)
        assert out.of("tool_result")[0].output.split() == [carrier["traceparent"], carrier["tracestate"]]
        (interaction,) = interactions(collector, 1)
        assert (interaction.trace_id, interaction.parent) == span_id_of(carrier)
        assert interaction.attributes.get("parent.source") == "env"


async def test_a_live_sessions_turns_nest_under_the_session(
    tmp_path: Path, traced: PluginHost, tracer: TraceCarriers
) -> None:
    with SpanCollector() as collector:
        backend, ws, env = setup_for(tmp_path, Scenario("say", (Say("hello"),)), collector)
        spec = SessionSpec(cwd=ws, env=env, provider_options={"claude_bin": CLAUDE, "max_retries": 0})
        with backend, anyio.fail_after(90):
            async with open_session(spec, "claude", host=traced, run_log=False) as session:
                for prompt in ("one", "two"):
                    assert (await session.run(prompt)).status.value == "success"
                session_id = session.session_id
        assert len(tracer.run_ids()) == 2
        parents = {(span.trace_id, span.parent) for span in interactions(collector, 2)}
        assert parents == {span_id_of(carrier_for(session_id))}
