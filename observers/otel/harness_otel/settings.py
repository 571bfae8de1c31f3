"""When harness-otel is on, and what it keeps: read from the environment only (the standard OTEL_* variables and
`HARNESS_OTEL`, which `harness run --otel` and config `otel = true` set).

Layer: observer plugin, its settings (pure: a mapping in, answers out). Knows no OpenTelemetry SDK and no run.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["ENV_ENABLE", "capture_content", "enabled", "sdk_disabled", "service_name_set"]

ENV_ENABLE = "HARNESS_OTEL"
"""Set (to 1/true/yes/on) to turn the observer on: what `harness run --otel` and config `otel = true` do."""
_TRUE = frozenset({"1", "true", "yes", "on"})
_CONTENT_ON = frozenset({"true", "1", "yes", "on", "span_only", "span_and_event"})
"""`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` values that keep content on spans (`true`, or the
opentelemetry-util-genai modes that include spans)."""


def _flag(environ: Mapping[str, str], name: str) -> bool:
    return environ.get(name, "").strip().lower() in _TRUE


def sdk_disabled(environ: Mapping[str, str]) -> bool:
    """`OTEL_SDK_DISABLED=true`: the OpenTelemetry switch that turns every SDK off, this observer with it."""
    return _flag(environ, "OTEL_SDK_DISABLED")


def enabled(environ: Mapping[str, str]) -> bool:
    """Whether the observer traces runs: `HARNESS_OTEL` is on and `OTEL_SDK_DISABLED` is not."""
    return _flag(environ, ENV_ENABLE) and not sdk_disabled(environ)


def capture_content(environ: Mapping[str, str]) -> bool:
    """Whether prompts, answers and tool input/output go on the spans (scrubbed): off unless
    `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` asks for it."""
    value = environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "").strip().lower()
    return value in _CONTENT_ON


def service_name_set(environ: Mapping[str, str]) -> bool:
    """Whether the user named the service (`OTEL_SERVICE_NAME`, or `service.name` in `OTEL_RESOURCE_ATTRIBUTES`);
    if not, the observer's own SDK calls it `harness`."""
    if environ.get("OTEL_SERVICE_NAME", "").strip():
        return True
    pairs = (part.partition("=") for part in environ.get("OTEL_RESOURCE_ATTRIBUTES", "").split(","))
    return any(key.strip() == "service.name" and value.strip() for key, _, value in pairs)
