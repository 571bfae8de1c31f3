"""Tracing for tests, no OpenTelemetry: `TraceCarriers`, an observer plugin answering `harness_trace_context` with a
carrier made from the run's (or session's) id, to check what an agent received on every spawn and turn;
`SpanCollector`, an OTLP/HTTP JSON receiver on 127.0.0.1 for a real CLI's own spans, to check they nest under the run's.

Layer: testing. Register the observer on the test's host: `PluginHost.create(plugins=[..., ("tracing", tracer)])`.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from harness_core.hookspecs import hookimpl

__all__ = ["Span", "SpanCollector", "TraceCarriers", "carrier_for", "span_id_of"]


def carrier_for(span_of: str) -> dict[str, str]:
    """The W3C carrier `TraceCarriers` hands on for a run or session id: a valid `traceparent` whose trace and span
    ids are made from the id (one per id, the same every time), and a `tracestate` naming it."""
    digest = hashlib.sha256(span_of.encode()).hexdigest()
    return {"traceparent": f"00-{digest[:32]}-{digest[32:48]}-01", "tracestate": f"harness={digest[48:56]}"}


def span_id_of(carrier: dict[str, str]) -> tuple[str, str]:
    """The trace id and the (parent) span id of a carrier's `traceparent`."""
    _, trace_id, span_id, _ = carrier["traceparent"].split("-")
    return trace_id, span_id


@dataclass(eq=False)  # a plugin: hashable, by identity
class TraceCarriers:
    """Answers `harness_trace_context(id)` with `carrier_for(id)` (None for the caller's own context: a run started
    here continues none), and records what it was asked (`asked`, in order), each run that started (`runs`: run
    id → the session it is a turn of, or None) and each session opened (`sessions`)."""

    asked: list[str | None] = field(default_factory=list)
    runs: dict[str, str | None] = field(default_factory=dict)
    sessions: list[str] = field(default_factory=list)

    @hookimpl
    def harness_run_starting(self, run_id: str, spec: Any, provider: str, session_id: str | None) -> None:
        self.runs[run_id] = session_id

    @hookimpl
    def harness_session_opened(self, session_id: str, spec: Any, provider: str, ts: float) -> None:
        self.sessions.append(session_id)

    @hookimpl
    def harness_trace_context(self, run_id: str | None) -> dict[str, str] | None:
        self.asked.append(run_id)
        return carrier_for(run_id) if run_id is not None else None

    def run_ids(self) -> list[str]:
        """The runs that started, in order (a session's turns among them)."""
        return list(self.runs)


@dataclass(frozen=True)
class Span:
    """One span an agent exported: its name, trace id, span id and parent span id ("" for a root)."""

    name: str
    trace_id: str
    span_id: str
    parent: str
    attributes: dict[str, Any]


class SpanCollector:
    """An OTLP/HTTP trace receiver on 127.0.0.1 (a free port), for the JSON encoding (`http/json`; gzip or not):
    every span POSTed to `/v1/traces` lands in `spans`. Use as a context manager; `endpoint` is the base URL for
    `OTEL_EXPORTER_OTLP_ENDPOINT`, `traces_url` the full one."""

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.lock = threading.Lock()
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                if self.headers.get("content-encoding") == "gzip":
                    body = gzip.decompress(body)
                try:
                    collector.take(json.loads(body))
                except ValueError:
                    self.send_response(400)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.end_headers()
                self.wfile.write(b"{}")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def traces_url(self) -> str:
        return f"{self.endpoint}/v1/traces"

    def take(self, export: dict[str, Any]) -> None:
        found = [
            Span(str(span.get("name")), str(span.get("traceId")), str(span.get("spanId")),
                 str(span.get("parentSpanId") or ""),
                 {a.get("key"): next(iter((a.get("value") or {}).values()), None)
                  for a in span.get("attributes") or []})
            for resource in export.get("resourceSpans") or []
            for scope in resource.get("scopeSpans") or []
            for span in scope.get("spans") or []
        ]
        with self.lock:
            self.spans.extend(found)

    def named(self, name: str) -> list[Span]:
        with self.lock:
            return [span for span in self.spans if span.name == name]

    def __enter__(self) -> SpanCollector:
        self.thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.server.shutdown()
        self.server.server_close()
