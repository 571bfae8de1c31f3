"""Trace context into an ACP agent, on the fake agent (fast; every message checked against the ACP schema): the
W3C carrier goes in `params._meta` (`traceparent`, `tracestate`: root keys ACP reserves for it) of `session/new`
(or `session/load`) and of each `session/prompt`, asked for every time — a run's own; in a live session the
session's for the process and its session, each turn's own for its prompt — and the spawned agent gets it as
`TRACEPARENT`/`TRACESTATE`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from harness_core import AgentRunSpec, SessionSpec, open_run, open_session
from harness_core.plugins import PluginHost
from harness_core.testing.tracing import TraceCarriers, carrier_for

import harness_acp
from harness_acp.testing import traces_seen, write_fake_agent

pytestmark = pytest.mark.anyio


@pytest.fixture
def tracer() -> TraceCarriers:
    return TraceCarriers()


@pytest.fixture
def traced(tracer: TraceCarriers) -> PluginHost:
    return PluginHost.create(entry_points=False, plugins=[("acp", harness_acp), ("tracing", tracer)], env={})


def agent(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "agent-home"
    return write_fake_agent(tmp_path / "bin", name="fake-acp-agent", args=("--home", str(home))), home


def env_of(carrier: dict[str, str]) -> dict[str, Any]:
    return {"env": {"TRACEPARENT": carrier["traceparent"], "TRACESTATE": carrier["tracestate"]}}


def spawns(home: Path) -> list[dict[str, Any]]:
    """The environment of each agent process that opened a session (not the probe's, which only initializes)."""
    seen, out = traces_seen(home), []
    for i, entry in enumerate(seen):
        if "env" in entry:
            rest = seen[i + 1:]
            end = next((j for j, e in enumerate(rest) if "env" in e), len(rest))
            if any(e["method"].startswith("session/") for e in rest[:end]):
                out.append(entry)
    return out


def requests(home: Path) -> list[tuple[str, Any]]:
    return [(e["method"], e["meta"]) for e in traces_seen(home) if "method" in e and e["method"].startswith("session/")
            and e["method"] != "session/set_mode"]


async def play(spec: AgentRunSpec, host: PluginHost) -> tuple[str, str]:
    with anyio.fail_after(20):
        async with open_run(spec, "acp", host=host, run_log=False) as live:
            events = [event async for event in live]
    assert events[-1].result.status.value == "success"
    return events[0].run_id, str(events[-1].result.session_id)


async def test_a_run_carries_its_context_on_session_new_load_and_prompt(
    tmp_path: Path, traced: PluginHost, tracer: TraceCarriers
) -> None:
    command, home = agent(tmp_path)
    spec = AgentRunSpec(prompt="hi", cwd=tmp_path, approval="never", provider_options={"command": str(command)})
    first, session = await play(spec, traced)
    second, _ = await play(spec.model_copy(update={"resume_session": session}), traced)
    one, two = carrier_for(first), carrier_for(second)
    assert spawns(home) == [env_of(one), env_of(two)]
    assert requests(home) == [("session/new", one), ("session/prompt", one),
                              ("session/load", two), ("session/prompt", two)]


async def test_each_turn_of_a_live_session_carries_its_own_context(
    tmp_path: Path, traced: PluginHost, tracer: TraceCarriers
) -> None:
    command, home = agent(tmp_path)
    spec = SessionSpec(cwd=tmp_path, approval="never", provider_options={"command": str(command)})
    with anyio.fail_after(30):
        async with open_session(spec, "acp", host=traced, run_log=False) as session:
            for prompt in ("one", "two"):
                assert (await session.run(prompt)).status.value == "success"
            session_id = session.session_id
    turns = tracer.run_ids()
    assert len(turns) == 2 and turns[0] != turns[1]
    mine = carrier_for(session_id)
    assert spawns(home) == [env_of(mine)]
    assert requests(home) == [("session/new", mine), ("session/prompt", carrier_for(turns[0])),
                              ("session/prompt", carrier_for(turns[1]))]


async def test_without_an_observer_no_request_carries_a_trace(
    tmp_path: Path, host: PluginHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TRACEPARENT", raising=False)
    monkeypatch.delenv("TRACESTATE", raising=False)
    command, home = agent(tmp_path)
    await play(AgentRunSpec(prompt="hi", cwd=tmp_path, approval="never", provider_options={"command": str(command)}),
               host)
    assert spawns(home) == [{"env": {"TRACEPARENT": None, "TRACESTATE": None}}]
    assert requests(home) == [("session/new", None), ("session/prompt", None)]
