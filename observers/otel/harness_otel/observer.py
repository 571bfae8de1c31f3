"""`OtelObserver`: the Harness hooks that turn every run into OpenTelemetry GenAI spans and metrics as it plays, and
hand its trace context to the providers (`harness_trace_context`).

Layer: observer plugin (hook implementations). Knows the core's hooks and span records (`harness_core.spans`) and
the OpenTelemetry API; knows no provider. Every time is an event's: docs/observe.md.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata

from harness_core import AgentRunSpec, HarnessEvent, SessionSpec, hookimpl
from harness_core.spans import RunSpans, Span, batch_ended, batch_span, session_span
from opentelemetry import context as otel_context, trace
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import SpanKind, Status, StatusCode, TracerProvider
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from harness_otel.metrics import Instruments
from harness_otel.sdk import Providers, providers_from_environment
from harness_otel.settings import capture_content

__all__ = ["OtelObserver"]

_W3C = TraceContextTextMapPropagator()
_KINDS = {"client": SpanKind.CLIENT, "internal": SpanKind.INTERNAL}


def _ns(ts: float) -> int:
    return int(ts * 1_000_000_000)


def _version() -> str:
    try:
        return metadata.version("harness-otel")
    except metadata.PackageNotFoundError:
        return "0"


def _carrier(ctx: otel_context.Context) -> dict[str, str] | None:
    carrier: dict[str, str] = {}
    _W3C.inject(carrier, context=ctx)
    return carrier or None


@dataclass
class _Run:
    """One run being traced: its span records and the SDK spans made of them."""

    spans: RunSpans
    parent: otel_context.Context
    session_id: str | None
    live: dict[str, trace.Span] = field(default_factory=dict)


@dataclass
class _Session:
    span: trace.Span
    record: Span
    conversation: str | None = None


class OtelObserver:
    """The hooks, with the tracer and meter they record to. `from_environment()` is what `harness run --otel`
    loads; tests and applications may build one on their own providers and register it with the plugin host."""

    def __init__(self, tracer_provider: TracerProvider, meter_provider: MeterProvider, *, content: bool = False,
                 environ: Mapping[str, str] | None = None, providers: Providers | None = None) -> None:
        version = _version()
        self._tracer = tracer_provider.get_tracer("harness", version)
        self._instruments = Instruments(meter_provider, version)
        self._content = content
        self._environ = os.environ if environ is None else environ
        self._providers = providers
        self._runs: dict[str, _Run] = {}
        self._sessions: dict[str, _Session] = {}
        self._batches: dict[str, tuple[trace.Span, Span]] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> OtelObserver:
        """An observer on the application's providers, else on its own SDK ones exporting over OTLP, configured by
        the OTEL_* variables; content captured as `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` says."""
        env = os.environ if environ is None else environ
        providers = providers_from_environment(env)
        return cls(providers.tracer_provider, providers.meter_provider, content=capture_content(env), environ=env,
                   providers=providers)

    def shutdown(self) -> None:
        """Flush and stop the providers this observer made (a no-op on the application's)."""
        if self._providers is not None:
            self._providers.shutdown()

    # --- the context runs continue --------------------------------------------------------------------------

    def _ambient(self) -> otel_context.Context:
        """The caller's current context when it has a span; else the `TRACEPARENT`/`TRACESTATE` this process was
        started with (a CI job, a parent tool, a background run's starter); else an empty one (a new trace)."""
        current = otel_context.get_current()
        if trace.get_current_span(current).get_span_context().is_valid:
            return current
        given = {k: v for k, v in (("traceparent", self._environ.get("TRACEPARENT")),
                                   ("tracestate", self._environ.get("TRACESTATE"))) if v}
        return _W3C.extract(given) if given else otel_context.Context()

    def _parent(self, carrier: Mapping[str, str]) -> otel_context.Context:
        if carrier.get("traceparent"):
            extracted = _W3C.extract(dict(carrier))
            if trace.get_current_span(extracted).get_span_context().is_valid:
                return extracted
        return self._ambient()

    # --- hooks ---------------------------------------------------------------------------------------------

    @hookimpl
    def harness_session_opened(self, session_id: str, spec: SessionSpec, provider: str, ts: float,
                               genai_provider: str | None) -> None:
        record = session_span(session_id, provider, {"model": spec.model, "resume_session": spec.resume_session},
                              ts, genai_provider=genai_provider)
        span = self._tracer.start_span(record.name, context=self._parent(spec.trace_context),
                                       kind=_KINDS[record.kind], attributes=record.attributes, start_time=_ns(ts))
        with self._lock:
            self._sessions[session_id] = _Session(span, record)

    @hookimpl
    def harness_session_closed(self, session_id: str, reason: str, ts: float) -> None:
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is None:
            return
        session.span.set_attribute("harness.session.closed", reason)
        if session.conversation:
            session.span.set_attribute("gen_ai.conversation.id", session.conversation)
        session.span.end(end_time=_ns(max(ts, session.record.start)))

    @hookimpl
    def harness_batch_started(self, batch_id: str, name: str, cells: int, ts: float) -> None:
        record = batch_span(batch_id, name, cells, ts)
        span = self._tracer.start_span(record.name, context=self._ambient(), kind=_KINDS[record.kind],
                                       attributes=record.attributes, start_time=_ns(ts))
        with self._lock:
            self._batches[batch_id] = (span, record)

    @hookimpl
    def harness_batch_ended(self, batch_id: str, status: str, counts: dict[str, float], ts: float) -> None:
        with self._lock:
            found = self._batches.pop(batch_id, None)
        if found is None:
            return
        span, record = found
        batch_ended(record, status, counts, ts)
        span.set_attributes(record.attributes)
        if record.status == "error":  # success leaves the status unset, as instrumentations should
            span.set_status(Status(StatusCode.ERROR, record.error_type))
        span.end(end_time=_ns(record.end if record.end is not None else ts))

    @hookimpl
    def harness_run_starting(self, run_id: str, spec: AgentRunSpec, provider: str, session_id: str | None,
                             secrets: tuple[str, ...]) -> None:
        with self._lock:
            session = self._sessions.get(session_id) if session_id is not None else None
        parent = (trace.set_span_in_context(session.span) if session is not None
                  else self._parent(spec.trace_context))
        run = _Run(RunSpans(content=self._content, secrets=secrets), parent, session_id)
        with self._lock:
            self._runs[run_id] = run

    @hookimpl
    def harness_on_event(self, event: HarnessEvent) -> None:
        run = self._runs.get(event.run_id)
        if run is None:
            return  # a run this observer did not see start (registered mid-run)
        opened, closed = run.spans.feed(event)
        for record in opened:
            self._open(run, record)
        for record in closed:
            self._close(run, record)

    @hookimpl
    def harness_trace_context(self, run_id: str | None) -> dict[str, str] | None:
        if run_id is None:
            return _carrier(self._ambient())
        run = self._runs.get(run_id)
        if run is not None:
            span = run.live.get("run")
            return _carrier(trace.set_span_in_context(span)) if span is not None else _carrier(run.parent)
        session = self._sessions.get(run_id)
        if session is not None:
            return _carrier(trace.set_span_in_context(session.span))
        batch = self._batches.get(run_id)
        if batch is not None:
            return _carrier(trace.set_span_in_context(batch[0]))
        return None

    # --- records to SDK spans ------------------------------------------------------------------------------

    def _open(self, run: _Run, record: Span) -> None:
        parent_span = run.live.get(record.parent) if record.parent is not None else None
        parent = trace.set_span_in_context(parent_span) if parent_span is not None else run.parent
        run.live[record.key] = self._tracer.start_span(record.name, context=parent, kind=_KINDS[record.kind],
                                                       attributes=record.attributes, start_time=_ns(record.start))

    def _close(self, run: _Run, record: Span) -> None:
        span = run.live.pop(record.key, None)
        if span is None:
            return
        span.set_attributes(record.attributes)
        for event in record.events:
            span.add_event(event.name, event.attributes, timestamp=_ns(event.ts))
        if record.status == "error":  # success leaves the status unset, as instrumentations should
            span.set_status(Status(StatusCode.ERROR, record.error_type))
        span.end(end_time=_ns(record.end if record.end is not None else record.start))
        with contextlib.suppress(Exception):  # a metric must not cost the trace
            self._instruments.record(record)
        if record.key == "run":
            self._run_ended(run, record)

    def _run_ended(self, run: _Run, record: Span) -> None:
        with self._lock:
            self._runs.pop(str(record.attributes.get("harness.run_id", "")), None)
            session = self._sessions.get(run.session_id) if run.session_id is not None else None
        conversation = record.attributes.get("gen_ai.conversation.id")
        if session is not None and isinstance(conversation, str):
            session.conversation = conversation
