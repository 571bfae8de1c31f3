"""The observer's instruments: the GenAI client metrics (`gen_ai.client.token.usage`,
`gen_ai.client.operation.duration`) and Harness's own (runs by status, tool actions by kind and status, approval
waits), each recorded from a closed span record.

Layer: observer plugin, its metrics. Knows the OpenTelemetry metrics API and the core's span records; knows no SDK.
"""

from __future__ import annotations

from harness_core.spans import APPROVAL_SPAN, Span
from opentelemetry.metrics import MeterProvider
from opentelemetry.util.types import AttributeValue

__all__ = ["Instruments"]

_TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]
_SECONDS_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
"""The bucket boundaries the GenAI conventions give for these histograms."""
_WAIT_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600]


def _pick(span: Span, *keys: str) -> dict[str, AttributeValue]:
    return {key: span.attributes[key] for key in keys if key in span.attributes}


class Instruments:
    """Every instrument, made once from a meter provider."""

    def __init__(self, meter_provider: MeterProvider, version: str) -> None:
        meter = meter_provider.get_meter("harness", version)
        self.token_usage = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}", description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS)
        self.operation_duration = meter.create_histogram(
            "gen_ai.client.operation.duration", unit="s", description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=_SECONDS_BUCKETS)
        self.runs = meter.create_counter("harness.runs", unit="{run}", description="Runs ended, by status.")
        self.tool_actions = meter.create_counter(
            "harness.tool.actions", unit="{action}", description="Tool actions ended, by kind and status.")
        self.approval_wait = meter.create_histogram(
            "harness.approval.wait", unit="s", description="Time an approval request waited for its decision.",
            explicit_bucket_boundaries_advisory=_WAIT_BUCKETS)

    def record(self, span: Span) -> None:
        """Record what a closed span says: a run's usage, duration and status; a tool action; an approval wait."""
        duration = span.duration or 0.0
        operation = span.attributes.get("gen_ai.operation.name")
        if span.name == APPROVAL_SPAN:
            self.approval_wait.record(duration, _pick(span, "harness.approval.decision", "harness.approval.decided_by",
                                                      "harness.tool.kind"))
        elif operation == "execute_tool":
            self.tool_actions.add(1, _pick(span, "harness.tool.kind", "harness.tool.status"))
        elif operation == "invoke_agent" and span.key == "run":
            common = _pick(span, "gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model")
            attributes = span.attributes
            counted = attributes.get("gen_ai.usage.input_tokens") or attributes.get("gen_ai.usage.output_tokens")
            for token_type, key in (("input", "gen_ai.usage.input_tokens"), ("output", "gen_ai.usage.output_tokens")):
                value = span.attributes.get(key)
                if counted and isinstance(value, int):  # no usage at all: the agent did not say (not 0 tokens)
                    self.token_usage.record(value, {**common, "gen_ai.token.type": token_type})
            self.operation_duration.record(duration, {**common, **_pick(span, "error.type")})
            self.runs.add(1, {**_pick(span, "harness.provider", "harness.status", "error.type")})
