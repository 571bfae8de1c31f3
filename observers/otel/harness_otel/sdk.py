"""The tracer and meter providers the observer uses: the application's when it set them, else its own SDK ones
exporting over OTLP (the standard OTEL_* variables), shut down within a deadline at exit: an unreachable endpoint
costs a couple of seconds and one line on stderr, not the exporters' retries and logs.
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
from typing import Any, Literal, TextIO

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


Signal = Literal["spans", "metrics"]


def _signal(record: logging.LogRecord, message: str) -> Signal:
    return "metrics" if "metric" in record.name or "metrics" in message else "spans"


class ExportFailures:
    """What the exporters of one `Providers` logged: each signal's first failure, said once at exit."""

    def __init__(self) -> None:
        self.reasons: dict[Signal, str] = {}
        self.give_up: Callable[[Signal], None] | None = None
        """Set while the providers shut down: a signal's failure then gives its exporter up at once, the deadline
        unwaited."""

    def note(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        signal = _signal(record, message)
        if signal not in self.reasons and ("rror" in message or "ailed" in message or "xception" in message):
            found = _ERRNO.search(message)
            self.reasons[signal] = found.group(1).strip().lower() if found else scrub(message.splitlines()[0])[:160]
        give_up = self.give_up
        if signal in self.reasons and give_up is not None:  # not from inside the exporter's call: a thread
            threading.Thread(target=give_up, args=(signal,), daemon=True).start()


class _Quiet(logging.Filter):
    """The filter on the exporters' loggers, installed once the observer makes its own exporters: drops their
    warnings and errors (retries, failures: said once at exit instead), each noted by the live `ExportFailures`."""

    def __init__(self) -> None:
        super().__init__()
        self.live: list[ExportFailures] = []

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        for failures in list(self.live):
            failures.note(record)
        return False


_QUIET = _Quiet()


@dataclass
class Providers:
    """The providers to trace and measure with, and what shuts down those the observer made itself."""

    tracer_provider: trace.TracerProvider
    meter_provider: metrics.MeterProvider
    owned: list[Any] = field(default_factory=list)
    exporters: dict[Signal, Any] = field(default_factory=dict)
    """The exporters of the owned providers (stopped at the deadline: their retries end at once)."""
    deadline: float = DEFAULT_DEADLINE
    endpoints: dict[Signal, str] = field(default_factory=dict)
    failures: ExportFailures | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def shutdown(self, stderr: TextIO | None = None) -> None:
        """Flush and stop the providers the observer made (the application's are its own to stop), within the
        deadline: past it the exporters are stopped, their retries given up. A failure to export (an unreachable
        endpoint, one that does not take metrics) is said once on `stderr` (default: sys.stderr), not raised."""
        if not self.owned:
            return
        timer = threading.Timer(self.deadline, self._give_up)
        timer.daemon = True
        timer.start()
        if self.failures is not None:
            self.failures.give_up = self._give_up
        try:
            for provider in self.owned:  # the tracer's first: its spans are what matters most
                try:
                    if isinstance(provider, MeterProvider):
                        provider.shutdown(timeout_millis=self.deadline * 1000)
                    else:
                        provider.shutdown()
                except Exception as exc:  # noqa: BLE001 - exiting: say it, do not raise it
                    if self.failures is not None:
                        signal: Signal = "metrics" if isinstance(provider, MeterProvider) else "spans"
                        self.failures.reasons.setdefault(signal, f"{type(exc).__name__}: {exc}")
        finally:
            timer.cancel()
            self.owned.clear()
            if self.failures in _QUIET.live:
                _QUIET.live.remove(self.failures)
        self._say(stderr or sys.stderr)

    def _give_up(self, signal: Signal | None = None) -> None:
        """Stop the exporter of `signal` (None: every one): a retry waiting out its backoff gives up."""
        with self._lock:
            stopping = [self.exporters.pop(s) for s in list(self.exporters) if signal in (None, s)]
        for exporter in stopping:
            with contextlib.suppress(Exception):  # already stopped, or stopping: nothing more to do
                exporter.shutdown()

    def _say(self, stderr: TextIO) -> None:
        reasons = self.failures.reasons if self.failures is not None else {}
        if not reasons:
            return
        where = {scrub(self.endpoints.get(signal, "")) for signal in reasons}
        same = len(set(reasons.values())) == 1 and len(where) == 1
        what = " and ".join(sorted(reasons, reverse=True))  # "spans and metrics"
        why = (f"{next(iter(where))} ({next(iter(reasons.values()))})" if same else
               "; ".join(f"{signal} to {scrub(self.endpoints.get(signal, ''))} ({reason})"
                         for signal, reason in sorted(reasons.items(), reverse=True)))
        tip = ("; `harness trace last` shows the last run's spans from its log" if "spans" in reasons else
               " (a receiver of traces only? OTEL_METRICS_EXPORTER=none leaves metrics out)")
        try:
            stderr.write(f"harness: warning: {what} could not be exported to {why}{tip}\n" if same else
                         f"harness: warning: {what} could not be exported: {why}{tip}\n")
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


def _endpoint(environ: Mapping[str, str], signal: str) -> str:
    return (environ.get(f"OTEL_EXPORTER_OTLP_{signal}_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
            or ("http://localhost:4317" if _protocol(environ, signal) == "grpc" else "http://localhost:4318"))


def _exporting(environ: Mapping[str, str], signal: str) -> bool:
    """Whether `OTEL_{signal}_EXPORTER` leaves the signal on (`otlp`, the default; `none` turns it off)."""
    return environ.get(f"OTEL_{signal}_EXPORTER", "otlp").strip().lower() != "none"


def _span_exporter(environ: Mapping[str, str], timeout: float | None) -> Any:
    given = None if _timeout(environ, "TRACES") is not None else timeout  # None: the exporter reads the variables
    if _protocol(environ, "TRACES") == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as Grpc  # grpcio

        return Grpc(timeout=given)
    return OTLPSpanExporter(timeout=given)


def _metric_exporter(environ: Mapping[str, str], timeout: float | None) -> Any:
    given = None if _timeout(environ, "METRICS") is not None else timeout  # None: the exporter reads the variables
    if _protocol(environ, "METRICS") == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter as Grpc

        return Grpc(timeout=given)
    return OTLPMetricExporter(timeout=given)


def providers_from_environment(environ: Mapping[str, str]) -> Providers:
    """The application's global providers when it set them (not OpenTelemetry's default no-op proxies); else new
    SDK providers with a batch span processor and a periodic metric reader on OTLP exporters (protocol from
    `OTEL_EXPORTER_OTLP[_TRACES|_METRICS]_PROTOCOL`: `http/protobuf`, the default, or `grpc`; the exporters read
    the endpoint and headers themselves), shut down (flushed) when the process exits, within `DEFAULT_DEADLINE`
    seconds unless `OTEL_EXPORTER_OTLP_TIMEOUT` gives more; their failures said once then (`Providers.shutdown`).
    `OTEL_TRACES_EXPORTER=none` / `OTEL_METRICS_EXPORTER=none` export no spans / no metrics (a receiver of traces
    only, such as Phoenix, refuses metrics)."""
    resource = Resource.create({} if service_name_set(environ) else {"service.name": _DEFAULT_SERVICE})
    given = [t for t in (_timeout(environ, "TRACES"), _timeout(environ, "METRICS")) if t is not None]
    made = Providers(trace.get_tracer_provider(), metrics.get_meter_provider(), deadline=max([DEFAULT_DEADLINE,
                                                                                               *given]))
    if isinstance(made.tracer_provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        tracer_provider = TracerProvider(resource=resource)
        if _exporting(environ, "TRACES"):
            made.exporters["spans"] = _span_exporter(environ, DEFAULT_DEADLINE)
            made.endpoints["spans"] = _endpoint(environ, "TRACES")
            tracer_provider.add_span_processor(BatchSpanProcessor(made.exporters["spans"]))
        made.tracer_provider = tracer_provider
        made.owned.append(tracer_provider)
    if isinstance(made.meter_provider, (_ProxyMeterProvider, metrics.NoOpMeterProvider)):
        readers = []
        if _exporting(environ, "METRICS"):
            made.exporters["metrics"] = _metric_exporter(environ, DEFAULT_DEADLINE)
            made.endpoints["metrics"] = _endpoint(environ, "METRICS")
            readers.append(PeriodicExportingMetricReader(made.exporters["metrics"]))
        made.meter_provider = MeterProvider(resource=resource, metric_readers=readers)
        made.owned.append(made.meter_provider)
    if made.owned:
        made.failures = ExportFailures()
        _QUIET.live.append(made.failures)
        for name in _EXPORTER_LOGGERS:
            logging.getLogger(name).addFilter(_QUIET)  # once: a filter already there is not added again
        atexit.register(made.shutdown)
    return made
