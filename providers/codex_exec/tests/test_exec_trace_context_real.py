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

import harness_codex_exec
from harness_core import AgentRunSpec, open_run
from harness_core.offline import SCENARIOS, seed_workspace
from harness_core.plugins import PluginHost
from harness_core.testing.tracing import Span, SpanCollector, TraceCarriers, carrier_for, span_id_of

CODEX = real_codex()
pytestmark = [pytest.mark.real_cli, pytest.mark.anyio, pytest.mark.skipif(CODEX is None, reason=MISSING_CODEX)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def export_traces(home: Path, collector: SpanCollector) -> None:
    """Turn on codex's own trace export (its CODEX_HOME's config), to `collector`."""
    home.mkdir(parents=True, exist_ok=True)
    config = home / "config.toml"
    config.write_text((config.read_text() if config.exists() else "") + (
        '\n[otel]\nenvironment = "test"\nexporter = "none"\n'
        f'trace_exporter = {{ otlp-http = {{ endpoint = "{collector.traces_url}", protocol = "json" }} }}\n'))


def wait_for(collector: SpanCollector, name: str) -> list[Span]:
    """The spans named `name`, waiting up to 15 s for the exporter to send one."""
    deadline = time.monotonic() + 15
    while not (found := collector.named(name)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


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
        export_traces(Path(setup.provider_options.get("codex_home") or setup.env["CODEX_HOME"]), collector)
        spec = AgentRunSpec(prompt="scenario say", cwd=ws, env=setup.env,
                            provider_options={**setup.provider_options, "codex_bin": str(CODEX)})
        with setup.backend, anyio.fail_after(60):
            async with open_run(spec, "codex-exec", host=host, run_log=False) as live:
                result = await live.wait()
            assert result.status.value == "success", result.error
        roots = wait_for(collector, "codex.exec")
        assert [(span.trace_id, span.parent) for span in roots] == [span_id_of(carrier_for(tracer.run_ids()[0]))]
