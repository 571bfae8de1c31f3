"""Trace context into the real pinned codex app-server, offline against the scripted Responses backend: with its
own tracing on (`[otel] trace_exporter`, OTLP/HTTP JSON to a receiver on 127.0.0.1), the app-server's spans for
`thread/start` and `turn/start` have Harness's span as parent — the run's; in a live session the session's for the
thread and each turn's own for its `turn/start` — from the request's top-level `trace` member. Skipped without the
real binary (scripts/install-clis.sh)."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest
from appserver_helpers import MISSING_CODEX, real_codex
from harness_codex_common import offline_setup
from harness_core import AgentRunSpec, SessionSpec, open_run, open_session
from harness_core.offline import SCENARIOS, seed_workspace
from harness_core.plugins import PluginHost
from harness_core.provider import OfflineSetup
from harness_core.scripted.backends import ResponsesBackend
from harness_core.testing.tracing import Span, SpanCollector, TraceCarriers, carrier_for, span_id_of

import harness_codex_appserver

CODEX = real_codex()
pytestmark = [pytest.mark.real_cli, pytest.mark.anyio, pytest.mark.skipif(CODEX is None, reason=MISSING_CODEX)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def tracer() -> TraceCarriers:
    return TraceCarriers()


@pytest.fixture
def traced(tracer: TraceCarriers) -> PluginHost:
    return PluginHost.create(entry_points=False, env={},
                             plugins=[("codex-appserver", harness_codex_appserver), ("tracing", tracer)])


def traced_setup(workspace: Path, state: Path, collector: SpanCollector) -> OfflineSetup:
    """The offline setup, with the app-server's own trace export turned on (its CODEX_HOME's config)."""
    scenario = SCENARIOS["say"]
    seed_workspace(scenario, workspace)
    setup = offline_setup(scenario, workspace, state)
    home = Path(setup.provider_options.get("codex_home") or setup.env["CODEX_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    config = home / "config.toml"
    config.write_text((config.read_text() if config.exists() else "") + (
        '\n[otel]\nenvironment = "test"\nexporter = "none"\n'
        f'trace_exporter = {{ otlp-http = {{ endpoint = "{collector.traces_url}", protocol = "json" }} }}\n'))
    return setup


def spans_named(collector: SpanCollector, name: str, count: int) -> list[Span]:
    """The `count` spans named `name`, waiting up to 15 s for the app-server's exporter to send them."""
    deadline = time.monotonic() + 15
    while len(found := collector.named(name)) < count and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(found) == count, f"{name}: {found}"
    return sorted(found, key=lambda span: span.span_id)


def parent_of(span: Span) -> tuple[str, str]:
    return span.trace_id, span.parent


async def test_a_runs_thread_and_turn_spans_nest_under_the_run(
    tmp_path: Path, workspace: Path, traced: PluginHost, tracer: TraceCarriers
) -> None:
    with SpanCollector() as collector:
        setup = traced_setup(workspace, tmp_path / "state", collector)
        assert setup.backend is not None
        spec = AgentRunSpec(prompt="scenario say", cwd=workspace, env=setup.env,
                            provider_options={**setup.provider_options, "codex_bin": str(CODEX)})
        with setup.backend, anyio.fail_after(60):
            async with open_run(spec, "codex-appserver", host=traced, run_log=False) as live:
                events = [event async for event in live]
        assert events[-1].result.status.value == "success"
        run = span_id_of(carrier_for(tracer.run_ids()[0]))
        assert [parent_of(s) for s in spans_named(collector, "thread/start", 1)] == [run]
        assert [parent_of(s) for s in spans_named(collector, "turn/start", 1)] == [run]


async def test_each_turn_of_a_live_session_nests_under_its_own_span(
    tmp_path: Path, workspace: Path, traced: PluginHost, tracer: TraceCarriers
) -> None:
    with SpanCollector() as collector:
        setup = traced_setup(workspace, tmp_path / "state", collector)
        backend = setup.backend
        assert isinstance(backend, ResponsesBackend)
        backend.replay_each_prompt = True
        spec = SessionSpec(cwd=workspace, env=setup.env,
                           provider_options={**setup.provider_options, "codex_bin": str(CODEX)})
        with backend, anyio.fail_after(90):
            async with open_session(spec, "codex-appserver", host=traced, run_log=False) as session:
                for prompt in ("one", "two"):
                    assert (await session.run(prompt)).status.value == "success"
                session_id = session.session_id
        turns = tracer.run_ids()
        assert [parent_of(s) for s in spans_named(collector, "thread/start", 1)] == [
            span_id_of(carrier_for(session_id))]
        wanted = {span_id_of(carrier_for(turn)) for turn in turns}
        assert {parent_of(s) for s in spans_named(collector, "turn/start", 2)} == wanted and len(wanted) == 2
