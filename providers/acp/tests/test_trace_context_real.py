"""Trace context into each real pinned ACP agent, offline against its scripted model backend: a run (and each turn
of a live session) whose `session/new` and `session/prompt` carry `_meta.traceparent`/`tracestate` and whose process
has `TRACEPARENT` is played as without them (the agents accept the reserved `_meta` keys). None of them exports spans
of its own through ACP yet, so what each does with the context is theirs to say."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from harness_core import AgentRunSpec, RunStatus, SessionSpec, open_session
from harness_core.offline import offline_spec
from harness_core.plugins import PluginHost
from harness_core.testing.real_tools import play_offline, tools_bin
from harness_core.testing.tracing import TraceCarriers

import harness_acp
from harness_acp.profiles import PROFILES

pytestmark = [pytest.mark.real_cli, pytest.mark.anyio]
AGENTS = ("claude-acp", "codex-acp", "gemini", "qwen")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def tracer() -> TraceCarriers:
    return TraceCarriers()


@pytest.fixture
def traced(tracer: TraceCarriers) -> PluginHost:
    return PluginHost.create(entry_points=False, plugins=[("acp", harness_acp), ("tracing", tracer)], env={})


def options(agent: str) -> dict[str, str]:
    cli = PROFILES[agent].cli
    return {f"{cli}_bin": tools_bin(cli)}


@pytest.mark.parametrize("agent", AGENTS)
async def test_a_traced_run_plays(tmp_path: Path, traced: PluginHost, tracer: TraceCarriers, agent: str) -> None:
    spec = AgentRunSpec(prompt="go", cwd=tmp_path, provider_options=options(agent))
    result, _ = await play_offline(spec, agent, "say", traced)
    assert result.status is RunStatus.SUCCESS, result.error
    assert tracer.asked.count(tracer.run_ids()[0]) >= 3  # spawn, session/new, session/prompt


async def test_a_traced_live_session_plays_two_turns(tmp_path: Path, traced: PluginHost, tracer: TraceCarriers) -> None:
    spec = SessionSpec(cwd=tmp_path, provider_options=options("gemini"))
    with offline_spec(spec, "gemini", "say", host=traced) as played, anyio.fail_after(240):
        async with open_session(played, "gemini", host=traced, run_log=False) as session:
            for prompt in ("one", "two"):
                result = await session.run(prompt)
                assert result.status is RunStatus.SUCCESS, result.error
    assert len(set(tracer.run_ids())) == 2
