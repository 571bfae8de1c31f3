"""Trace context into Claude Code, on the fake CLI (fast): the spawned process gets the run's W3C context as
`TRACEPARENT`/`TRACESTATE`, asked for at every spawn; a live session's process, spawned once, gets the session's
(Claude Code reads it at start only; each turn's span is Harness's, under the session's: docs/observe.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from claude_helpers import run_spec
from harness_core import AgentRunSpec, SessionSpec, open_session
from harness_core.plugins import PluginHost
from harness_core.testing.tracing import TraceCarriers, carrier_for

import harness_claude
from harness_claude.testing.fake import ENV_LOG_ENV

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leftovers")]


@pytest.fixture
def tracer() -> TraceCarriers:
    return TraceCarriers()


@pytest.fixture
def traced(tracer: TraceCarriers) -> PluginHost:
    return PluginHost.create(entry_points=False, plugins=[("claude", harness_claude), ("tracing", tracer)], env={})


def env_seen(log: Path) -> list[dict[str, Any]]:
    """What each fake process found in its environment (`TRACEPARENT`, `TRACESTATE`), one entry per spawn."""
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def as_env(carrier: dict[str, str]) -> dict[str, Any]:
    return {"TRACEPARENT": carrier["traceparent"], "TRACESTATE": carrier["tracestate"]}


def run(tmp_path: Path, fake: Path, log: Path, prompt: str = "SCENARIO:say") -> AgentRunSpec:
    return AgentRunSpec(prompt=prompt, cwd=tmp_path, env={ENV_LOG_ENV: str(log)},
                        provider_options={"claude_bin": str(fake)})


async def test_each_run_spawns_claude_with_its_own_trace_context(
    tmp_path: Path, fake_bin: Path, traced: PluginHost, tracer: TraceCarriers
) -> None:
    log = tmp_path / "env.jsonl"
    first = await run_spec(run(tmp_path, fake_bin, log, "SCENARIO:tools"), traced)
    second = await run_spec(run(tmp_path, fake_bin, log), traced)
    ids = [out.events[0].run_id for out in (first, second)]
    assert ids == tracer.run_ids() and ids[0] != ids[1]
    assert env_seen(log) == [as_env(carrier_for(ids[0])), as_env(carrier_for(ids[1]))]
    assert tracer.asked == ids  # asked once per spawn, never kept from an earlier run


async def test_the_run_context_replaces_the_callers(
    tmp_path: Path, fake_bin: Path, traced: PluginHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A TRACESTATE in Harness's own environment (the caller's trace) never pairs with the run's TRACEPARENT."""
    monkeypatch.setenv("TRACEPARENT", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
    monkeypatch.setenv("TRACESTATE", "caller=1")
    log = tmp_path / "env.jsonl"
    out = await run_spec(run(tmp_path, fake_bin, log), traced)
    assert env_seen(log) == [as_env(carrier_for(out.events[0].run_id))]


async def test_without_an_observer_the_environment_is_the_callers(
    tmp_path: Path, fake_bin: Path, host: PluginHost, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRACEPARENT", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
    monkeypatch.delenv("TRACESTATE", raising=False)
    log = tmp_path / "env.jsonl"
    await run_spec(run(tmp_path, fake_bin, log), host)
    assert env_seen(log) == [{"TRACEPARENT": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                              "TRACESTATE": None}]


async def test_a_live_session_spawns_claude_once_with_the_sessions_context(
    tmp_path: Path, fake_bin: Path, traced: PluginHost, tracer: TraceCarriers
) -> None:
    log = tmp_path / "env.jsonl"
    spec = SessionSpec(cwd=tmp_path, env={ENV_LOG_ENV: str(log)}, provider_options={"claude_bin": str(fake_bin)})
    with anyio.fail_after(30):
        async with open_session(spec, "claude", host=traced, run_log=False) as s:
            for _ in range(2):
                result = await s.run("SCENARIO:say")
                assert result.status.value == "success"
            session_id = s.session_id
    turns = tracer.run_ids()
    assert len(turns) == 2 and all(tracer.runs[t] == session_id for t in turns)
    assert env_seen(log) == [as_env(carrier_for(session_id))]  # one process: the session's span is its parent
