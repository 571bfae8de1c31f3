"""Trace context into `codex exec`, on the fake (fast): each run's process gets the run's W3C context as
`TRACEPARENT`/`TRACESTATE`, asked for at its spawn (codex exec continues its own spans from them; it takes no
request, so there is no per-request field to carry)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

import harness_codex_exec
from harness_codex_exec.testing.fake import ENV_FILE
from harness_core import AgentRunSpec, open_run
from harness_core.plugins import PluginHost
from harness_core.testing.tracing import TraceCarriers, carrier_for

pytestmark = pytest.mark.anyio


def env_seen(home: Path) -> list[dict[str, Any]]:
    path = home / ENV_FILE
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def test_each_run_gets_its_own_trace_context(tmp_path: Path, fake_codex: Path) -> None:
    tracer = TraceCarriers()
    host = PluginHost.create(entry_points=False, env={},
                             plugins=[("codex-exec", harness_codex_exec), ("tracing", tracer)])
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    spec = AgentRunSpec(prompt="do it", cwd=ws, env={"HARNESS_FAKE_SCENARIO": "say"},
                        provider_options={"codex_bin": str(fake_codex), "codex_home": str(home)})
    for _ in range(2):
        with anyio.fail_after(20):
            async with open_run(spec, "codex-exec", host=host, run_log=False) as live:
                assert (await live.wait()).status.value == "success"
    runs = tracer.run_ids()
    assert len(runs) == 2 and runs[0] != runs[1]
    assert env_seen(home) == [{"TRACEPARENT": carrier_for(run)["traceparent"],
                               "TRACESTATE": carrier_for(run)["tracestate"]} for run in runs]
