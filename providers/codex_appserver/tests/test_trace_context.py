"""Trace context into the Codex app-server, on the fake (fast): each request that starts work carries the W3C
carrier in its top-level `trace` member (`W3cTraceContext`: `traceparent`, `tracestate`), asked for every time —
`thread/start` and `turn/start` of a run carry the run's; a live session's process and thread carry the session's and
each `turn/start` (and `turn/steer`) its own turn's — and the spawned process gets it as `TRACEPARENT`/`TRACESTATE`
(the app-server's fallback for a request without one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from harness_core import AgentRunSpec, SessionSpec, open_run, open_session
from harness_core.plugins import PluginHost
from harness_core.scripted.scenarios import RunCommand, Say, Scenario
from harness_core.testing.tracing import TraceCarriers, carrier_for

import harness_codex_appserver
from harness_codex_appserver.testing import steps_env, traces_seen, write_fake_codex

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def tracer() -> TraceCarriers:
    return TraceCarriers()


@pytest.fixture
def traced(tracer: TraceCarriers) -> PluginHost:
    return PluginHost.create(entry_points=False, env={},
                             plugins=[("codex-appserver", harness_codex_appserver), ("tracing", tracer)])


def env_of(carrier: dict[str, str]) -> dict[str, Any]:
    return {"env": {"TRACEPARENT": carrier["traceparent"], "TRACESTATE": carrier["tracestate"]}}


def requests(seen: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(entry["method"], entry["trace"]) for entry in seen if "method" in entry]


async def play(spec: AgentRunSpec, host: PluginHost) -> str:
    with anyio.fail_after(20):
        async with open_run(spec, "codex-appserver", host=host, run_log=False) as live:
            events = [event async for event in live]
    assert events[-1].result.status.value == "success"
    return events[0].run_id


async def test_a_run_carries_its_context_on_thread_start_and_turn_start(
    tmp_path: Path, codex_home: Path, workspace: Path, traced: PluginHost, tracer: TraceCarriers
) -> None:
    codex = write_fake_codex(tmp_path, scenario="tools")
    options = {"codex_bin": str(codex), "codex_home": str(codex_home)}
    first = await play(AgentRunSpec(prompt="go", cwd=workspace, provider_options=options), traced)
    second = await play(AgentRunSpec(prompt="again", cwd=workspace, provider_options=options), traced)
    seen = traces_seen(codex_home)
    one, two = carrier_for(first), carrier_for(second)
    assert [entry for entry in seen if "env" in entry] == [env_of(one), env_of(two)]
    assert requests(seen) == [
        ("initialize", None), ("thread/start", one), ("turn/start", one),
        ("initialize", None), ("thread/start", two), ("turn/start", two),
    ]
    assert [asked for asked in tracer.asked] == [first] * 3 + [second] * 3  # spawn, thread, turn: asked each time


async def test_each_turn_of_a_live_session_carries_its_own_context(
    tmp_path: Path, codex_home: Path, workspace: Path, traced: PluginHost, tracer: TraceCarriers
) -> None:
    codex = write_fake_codex(tmp_path, scenario="say")
    env = steps_env(Scenario("custom", (RunCommand("echo waiting; sleep 1", output="waiting\n"), Say("done"))))
    spec = SessionSpec(cwd=workspace, env=env, provider_options={"codex_bin": str(codex),
                                                                  "codex_home": str(codex_home)})
    with anyio.fail_after(30):
        async with open_session(spec, "codex-appserver", host=traced, run_log=False) as session:
            async with session.turn("one") as live:
                async for event in live:
                    if event.type == "tool_use":
                        assert await live.steer("and another thing")
                assert (await live.wait()).status.value == "success"
            assert (await session.run("two")).status.value == "success"
            session_id = session.session_id
    turns = tracer.run_ids()
    assert len(turns) == 2 and turns[0] != turns[1]
    seen = traces_seen(codex_home)
    mine = carrier_for(session_id)
    assert [entry for entry in seen if "env" in entry] == [env_of(mine)]  # one process, the session's
    assert requests(seen) == [
        ("initialize", None), ("thread/start", mine),
        ("turn/start", carrier_for(turns[0])), ("turn/steer", carrier_for(turns[0])),
        ("turn/start", carrier_for(turns[1])),
    ]


async def test_without_an_observer_no_request_carries_a_trace(
    tmp_path: Path, codex_home: Path, workspace: Path, host: PluginHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRACEPARENT", raising=False)
    monkeypatch.delenv("TRACESTATE", raising=False)
    codex = write_fake_codex(tmp_path, scenario="say")
    await play(AgentRunSpec(prompt="go", cwd=workspace,
                            provider_options={"codex_bin": str(codex), "codex_home": str(codex_home)}), host)
    seen = traces_seen(codex_home)
    assert seen[0] == {"env": {"TRACEPARENT": None, "TRACESTATE": None}}
    assert all(trace is None for _, trace in requests(seen))
    assert "turn/start" in [method for method, _ in requests(seen)]
