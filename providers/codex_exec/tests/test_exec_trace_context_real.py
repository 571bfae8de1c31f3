"""Trace context into the real pinned `codex exec`, offline against the scripted Responses backend: with its own
tracing on (`[otel] trace_exporter`, OTLP/HTTP JSON to a receiver on 127.0.0.1), its root `codex.exec` span has the
run's span as parent, from the `TRACEPARENT` Harness gives it. Skipped without the real binary."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest
from exec_helpers import MISSING_CODEX, real_codex
from harness_codex_common import offline_setup
from harness_core import AgentRunSpec, open_run
from harness_core.offline import SCENARIOS, seed_workspace
from harness_core.plugins import PluginHost
from harness_core.testing.tracing import SpanCollector, TraceCarriers, carrier_for, span_id_of

import harness_codex_exec

CODEX = real_codex()
pytestmark = [pytest.mark.real_cli, pytest.mark.anyio, pytest.mark.skipif(CODEX is None, reason=MISSING_CODEX)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_codex_execs_root_span_nests_under_the_run(tmp_path: Path) -> None:
    tracer = TraceCarriers()
    host = PluginHost.create(entry_points=False, env={},
                             plugins=[("codex-exec", harness_codex_exec), ("tracing", tracer)])
    ws = tmp_path / "ws"
    ws.mkdir()
    scenario = SCENARIOS["say"]
    seed_workspace(scenario, ws)
    with SpanCollector() as collector:
        setup = offline_setup(scenario, ws, tmp_path / "state")
        assert setup.backend is not None
        home = Path(setup.provider_options.get("codex_home") or setup.env["CODEX_HOME"])
        home.mkdir(parents=True, exist_ok=True)
        config = home / "config.toml"
        config.write_text((config.read_text() if config.exists() else "") + (
            '\n[otel]\nenvironment = "test"\nexporter = "none"\n'
            f'trace_exporter = {{ otlp-http = {{ endpoint = "{collector.traces_url}", protocol = "json" }} }}\n'))
        spec = AgentRunSpec(prompt="scenario say", cwd=ws, env=setup.env,
                            provider_options={**setup.provider_options, "codex_bin": str(CODEX)})
        with setup.backend, anyio.fail_after(60):
            async with open_run(spec, "codex-exec", host=host, run_log=False) as live:
                result = await live.wait()
            assert result.status.value == "success", result.error
        deadline = time.monotonic() + 15
        while not (roots := collector.named("codex.exec")) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [(span.trace_id, span.parent) for span in roots] == [span_id_of(carrier_for(tracer.run_ids()[0]))]
