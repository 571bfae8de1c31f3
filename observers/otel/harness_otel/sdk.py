"""The tracer and meter providers the observer uses: the application's when it set them, else its own SDK ones
exporting over OTLP, configured by the standard OTEL_* variables (endpoint, protocol, headers, resource).

Layer: observer plugin, its OpenTelemetry SDK set-up. Knows the SDK and the OTLP exporters; knows no run.
"""

from __future__ import annotations

import atexit
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

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

__all__ = ["Providers", "providers_from_environment"]

_DEFAULT_SERVICE = "harness"


@dataclass
class Providers:
    """The providers to trace and measure with, and what shuts down those the observer made itself."""

    tracer_provider: trace.TracerProvider
    meter_provider: metrics.MeterProvider
    owned: list[Any] = field(default_factory=list)

    def shutdown(self) -> None:
        """Flush and stop the providers the observer made (the application's are its own to stop)."""
        for provider in self.owned:
            provider.shutdown()
        self.owned.clear()


def _protocol(environ: Mapping[str, str], signal: str) -> str:
    return (environ.get(f"OTEL_EXPORTER_OTLP_{signal}_PROTOCOL") or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
            or "http/protobuf").strip().lower()


def _span_exporter(environ: Mapping[str, str]) -> Any:
    if _protocol(environ, "TRACES") == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as Grpc  # grpcio

        return Grpc()
    return OTLPSpanExporter()


def _metric_exporter(environ: Mapping[str, str]) -> Any:
    if _protocol(environ, "METRICS") == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter as Grpc

        return Grpc()
    return OTLPMetricExporter()


def providers_from_environment(environ: Mapping[str, str]) -> Providers:
    """The application's global providers when it set them (not OpenTelemetry's default no-op proxies); else new
    SDK providers with a batch span processor and a periodic metric reader on OTLP exporters (protocol from
    `OTEL_EXPORTER_OTLP[_TRACES|_METRICS]_PROTOCOL`: `http/protobuf`, the default, or `grpc`; the exporters read
    the endpoint and headers themselves), shut down (flushed) when the process exits."""
    resource = Resource.create({} if service_name_set(environ) else {"service.name": _DEFAULT_SERVICE})
    owned: list[Any] = []
    tracer_provider = trace.get_tracer_provider()
    if isinstance(tracer_provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        made = TracerProvider(resource=resource)
        made.add_span_processor(BatchSpanProcessor(_span_exporter(environ)))
        tracer_provider = made
        owned.append(made)
    meter_provider = metrics.get_meter_provider()
    if isinstance(meter_provider, (_ProxyMeterProvider, metrics.NoOpMeterProvider)):
        meter_provider = MeterProvider(resource=resource,
                                       metric_readers=[PeriodicExportingMetricReader(_metric_exporter(environ))])
        owned.append(meter_provider)
    made_providers = Providers(tracer_provider, meter_provider, owned)
    if owned:
        atexit.register(made_providers.shutdown)
    return made_providers
