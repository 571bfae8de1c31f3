"""A batch as one `invoke_workflow` span over its cells' `invoke_agent` spans (in-memory exporter): the batch hooks
of the core's driver, and the batch's trace context carried on each cell's spec; nothing of it without an
observer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from harness_core.batch import Batch, TaskResult, parse_tasks
from harness_core.plugins import PluginHost
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from harness_otel.observer import OtelObserver

offline_plugin = pytest.importorskip("harness_test_scripted.offline",
                                     reason="install tests/plugins/scripted (tox does)")


class Telemetry:
    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.observer = OtelObserver(tracer_provider, MeterProvider(), environ={})

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.finished() if s.name.startswith(prefix)]


def _children(spans: list[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    assert parent.context is not None
    return [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]


def _play(batch: Batch) -> list[TaskResult]:
    async def main() -> list[TaskResult]:
        with anyio.fail_after(60):
            return [result async for result in batch.results()]

    return anyio.run(main)


def _batch(host: PluginHost, tmp_path: Path, lines: list[dict[str, Any]]) -> Batch:
    tasks = parse_tasks([json.dumps(line) for line in lines], offline=True)
    return Batch(tasks, provider="scripted-offline", offline=True, concurrency=2, host=host,
                 runs_dir=tmp_path / "runs", results=tmp_path / "nightly.results.jsonl")


def test_a_batch_is_an_invoke_workflow_span_over_its_cells_runs(tmp_path: Path) -> None:
    telemetry = Telemetry()
    host = PluginHost.create(entry_points=False, plugins=[("scripted-offline", offline_plugin),
                                                           ("otel", telemetry.observer)])
    assert host.observes_batches
    batch = _batch(host, tmp_path, [{"id": "a", "prompt": "x", "scenario": "tools"},
                                    {"id": "b", "prompt": "y", "scenario": "tools"}])
    results = _play(batch)
    spans = telemetry.finished()
    (workflow,) = telemetry.named("invoke_workflow")
    assert workflow.name == "invoke_workflow nightly" and workflow.kind is SpanKind.INTERNAL
    assert workflow.parent is None and workflow.status.status_code is StatusCode.UNSET
    attributes = dict(workflow.attributes or {})
    assert attributes["gen_ai.operation.name"] == "invoke_workflow"
    assert attributes["gen_ai.workflow.name"] == "nightly"
    assert attributes["harness.batch.id"] == batch.batch_id and batch.batch_id.startswith("batch-")
    assert (attributes["harness.batch.cells"], attributes["harness.batch.succeeded"],
            attributes["harness.batch.failed"], attributes["harness.status"]) == (2, 2, 0, "success")
    agents = _children(spans, workflow)
    assert sorted(s.name for s in agents) == ["invoke_agent scripted-offline"] * 2
    assert {dict(s.attributes or {})["harness.run_id"] for s in agents} == {r.run_id for r in results}
    for agent in agents:
        assert agent.context.trace_id == workflow.context.trace_id  # type: ignore[union-attr]
        assert len(_children(spans, agent)) == 4  # the scenario's tools
        assert workflow.start_time is not None and workflow.end_time is not None and agent.start_time is not None
        assert workflow.start_time <= agent.start_time <= workflow.end_time
    assert len(spans) == 1 + 2 * 5


def test_a_failed_cell_makes_the_workflow_an_error(tmp_path: Path) -> None:
    telemetry = Telemetry()
    host = PluginHost.create(entry_points=False, plugins=[("scripted-offline", offline_plugin),
                                                           ("otel", telemetry.observer)])
    _play(_batch(host, tmp_path, [{"id": "a", "prompt": "x", "scenario": "tools"},
                                  {"id": "b", "prompt": "y", "scenario": "fail_401"}]))
    (workflow,) = telemetry.named("invoke_workflow")
    attributes = dict(workflow.attributes or {})
    assert workflow.status.status_code is StatusCode.ERROR
    assert (attributes["error.type"], attributes["harness.batch.failed"]) == ("batch_failed", 1)


def test_without_an_observer_no_batch_hook_and_no_trace_context(tmp_path: Path) -> None:
    host = PluginHost.create(entry_points=False, plugins=[("scripted-offline", offline_plugin)])
    assert not host.observes_batches
    batch = _batch(host, tmp_path, [{"id": "a", "prompt": "x", "scenario": "tools"}])
    (result,) = _play(batch)
    assert result.status == "success"
    first = json.loads((tmp_path / "runs" / f"{result.run_id}.jsonl").read_text().splitlines()[0])
    assert first["spec"].get("trace_context") in (None, {})
