"""The tracer and meter providers the observer uses: the application's when it set them, else its own SDK ones
exporting over OTLP, configured by the standard OTEL_* variables (endpoint, protocol, headers, resource), shut down
within a deadline when the process exits: an unreachable endpoint costs a couple of seconds and one line on
stderr, not the exporters' retries and their log lines.

Layer: observer plugin, its OpenTelemetry SDK set-up. Knows the SDK and the OTLP exporters; knows no run.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import re
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from harness_core.redaction import scrub
from opentelemetry import metrics, trace
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.metrics._internal import _ProxyMeterProvider  # the default until an application sets one
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from harness_otel.settings import service_name_set

__all__ = ["DEFAULT_DEADLINE", "ExportFailures", "Providers", "providers_from_environment"]

_DEFAULT_SERVICE = "harness"
DEFAULT_DEADLINE = 2.0
"""Seconds the exporters may take, each export and the flush at exit together, unless `OTEL_EXPORTER_OTLP_TIMEOUT`
(or its `_TRACES_`/`_METRICS_` variant; seconds, as the Python exporters read it) gives more."""
_EXPORTER_LOGGERS = (
    "opentelemetry.exporter.otlp.proto.http.trace_exporter", "opentelemetry.exporter.otlp.proto.http.metric_exporter",
    "opentelemetry.exporter.otlp.proto.grpc.exporter", "opentelemetry.exporter.otlp.proto.grpc.trace_exporter",
    "opentelemetry.exporter.otlp.proto.grpc.metric_exporter", "opentelemetry.sdk._shared_internal",
    "opentelemetry.sdk.metrics._internal.export",
)
"""Where the exporters, the batch span processor and the periodic metric reader log their failures and retries:
kept off stderr while the observer's own exporters are in use (their failure is said once, at exit)."""
_ERRNO = re.compile(r"\[Errno -?\d+\] ([^'\")\]]+)")


class ExportFailures(logging.Filter):
    """A filter on the exporters' loggers: drops their warnings and errors (retries, failures), keeping the first
    failure's reason to say once (`said`)."""

    def __init__(self) -> None:
        super().__init__()
        self.reason: str | None = None
        self.stopping: threading.Event | None = None
        """Set while the providers shut down: a failure then gives up at once (`give_up`), the deadline unwaited."""
        self.give_up: Callable[[], None] | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        message = record.getMessage()
        if self.reason is None and ("rror" in message or "ailed" in message or "xception" in message):
            found = _ERRNO.search(message)
            self.reason = found.group(1).strip().lower() if found else scrub(message.splitlines()[0])[:160]
        if self.reason is not None and self.stopping is not None and self.stopping.is_set() and self.give_up:
            threading.Thread(target=self.give_up, daemon=True).start()  # not from inside the exporter's call
        return False


@dataclass
class Providers:
    """The providers to trace and measure with, and what shuts down those the observer made itself."""

    tracer_provider: trace.TracerProvider
    meter_provider: metrics.MeterProvider
    owned: list[Any] = field(default_factory=list)
    exporters: list[Any] = field(default_factory=list)
    """The exporters of the owned providers (stopped at the deadline: their retries end at once)."""
    deadline: float = DEFAULT_DEADLINE
    endpoint: str = ""
    failures: ExportFailures | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def shutdown(self, stderr: TextIO | None = None) -> None:
        """Flush and stop the providers the observer made (the application's are its own to stop), within the
        deadline: past it the exporters are stopped, their retries given up. A failure to export (an unreachable
        endpoint) is said once on `stderr` (default: sys.stderr), not raised."""
        if not self.owned:
            return
        timer = threading.Timer(self.deadline, self._give_up)
        timer.daemon = True
        timer.start()
        if self.failures is not None:
            self.failures.give_up = self._give_up
            self.failures.stopping = threading.Event()
            self.failures.stopping.set()
        try:
            for provider in self.owned:
                try:
                    if isinstance(provider, MeterProvider):
                        provider.shutdown(timeout_millis=self.deadline * 1000)
                    else:
                        provider.shutdown()
                except Exception as exc:  # noqa: BLE001 - exiting: say it, do not raise it
                    if self.failures is not None and self.failures.reason is None:
                        self.failures.reason = f"{type(exc).__name__}: {exc}"
        finally:
            timer.cancel()
            self.owned.clear()
        self._say(stderr or sys.stderr)

    def _give_up(self) -> None:
        with self._lock:
            exporters, self.exporters = self.exporters, []
        for exporter in exporters:
            with contextlib.suppress(Exception):  # already stopped, or stopping: nothing more to do
                exporter.shutdown()  # wakes a retry waiting out its backoff: it gives up

    def _say(self, stderr: TextIO) -> None:
        if self.failures is None or self.failures.reason is None:
            return
        try:
            stderr.write(f"harness: warning: spans and metrics could not be exported to {scrub(self.endpoint)} "
                         f"({self.failures.reason}); `harness trace last` shows the last run's spans from its "
                         "log\n")
            stderr.flush()
        except (OSError, ValueError):  # stderr closed at exit
            pass


def _protocol(environ: Mapping[str, str], signal: str) -> str:
    return (environ.get(f"OTEL_EXPORTER_OTLP_{signal}_PROTOCOL") or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
            or "http/protobuf").strip().lower()


def _timeout(environ: Mapping[str, str], signal: str) -> float | None:
    """The exporter timeout the user gave (seconds), or None."""
    raw = environ.get(f"OTEL_EXPORTER_OTLP_{signal}_TIMEOUT") or environ.get("OTEL_EXPORTER_OTLP_TIMEOUT")
    try:
        value = float(raw) if raw else None
    except ValueError:
        return None
    return value if value is not None and value > 0 else None


def _endpoint(environ: Mapping[str, str]) -> str:
    return (environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
            or ("http://localhost:4317" if _protocol(environ, "TRACES") == "grpc" else "http://localhost:4318"))


def _span_exporter(environ: Mapping[str, str], timeout: float | None) -> Any:
    given = {} if _timeout(environ, "TRACES") is not None or timeout is None else {"timeout": timeout}
    if _protocol(environ, "TRACES") == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as Grpc  # grpcio

        return Grpc(**given)
    return OTLPSpanExporter(**given)


def _metric_exporter(environ: Mapping[str, str], timeout: float | None) -> Any:
    given = {} if _timeout(environ, "METRICS") is not None or timeout is None else {"timeout": timeout}
    if _protocol(environ, "METRICS") == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter as Grpc

        return Grpc(**given)
    return OTLPMetricExporter(**given)


def providers_from_environment(environ: Mapping[str, str]) -> Providers:
    """The application's global providers when it set them (not OpenTelemetry's default no-op proxies); else new
    SDK providers with a batch span processor and a periodic metric reader on OTLP exporters (protocol from
    `OTEL_EXPORTER_OTLP[_TRACES|_METRICS]_PROTOCOL`: `http/protobuf`, the default, or `grpc`; the exporters read
    the endpoint and headers themselves), shut down (flushed) when the process exits, within `DEFAULT_DEADLINE`
    seconds unless `OTEL_EXPORTER_OTLP_TIMEOUT` gives more; their failures said once then (`Providers.shutdown`)."""
    resource = Resource.create({} if service_name_set(environ) else {"service.name": _DEFAULT_SERVICE})
    given = [t for t in (_timeout(environ, "TRACES"), _timeout(environ, "METRICS")) if t is not None]
    deadline = max([DEFAULT_DEADLINE, *given])
    made = Providers(trace.get_tracer_provider(), metrics.get_meter_provider(), deadline=deadline,
                     endpoint=_endpoint(environ))
    if isinstance(made.tracer_provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        span_exporter = _span_exporter(environ, DEFAULT_DEADLINE)
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
        made.tracer_provider = tracer_provider
        made.owned.append(tracer_provider)
        made.exporters.append(span_exporter)
    if isinstance(made.meter_provider, (_ProxyMeterProvider, metrics.NoOpMeterProvider)):
        metric_exporter = _metric_exporter(environ, DEFAULT_DEADLINE)
        meter_provider = MeterProvider(resource=resource,
                                       metric_readers=[PeriodicExportingMetricReader(metric_exporter)])
        made.meter_provider = meter_provider
        made.owned.append(meter_provider)
        made.exporters.append(metric_exporter)
    if made.owned:
        made.failures = ExportFailures()
        for name in _EXPORTER_LOGGERS:
            logging.getLogger(name).addFilter(made.failures)
        atexit.register(made.shutdown)
    return made
