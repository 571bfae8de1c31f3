"""harness-otel: OpenTelemetry GenAI spans and metrics of every run, exported over OTLP (docs/observe.md).

Layer: observer plugin (found through the `harness` entry point `otel`, which names `plugin`). Off, it is an object
with no hooks and imports no OpenTelemetry SDK: the runner then calls nothing per event. On (`HARNESS_OTEL`, set by
`harness run --otel` and config `otel = true`; not with `OTEL_SDK_DISABLED=true`), `plugin` is an `OtelObserver`.
"""

from __future__ import annotations

import os
from typing import Any

from harness_otel.settings import ENV_ENABLE, enabled

__all__ = ["ENV_ENABLE", "Inert", "plugin"]


class Inert:
    """The plugin while tracing is off: no hook at all."""

    def __repr__(self) -> str:
        return f"harness-otel (off: set {ENV_ENABLE}=1, or run with --otel)"


plugin: Any
if enabled(os.environ):
    from harness_otel.observer import OtelObserver

    plugin = OtelObserver.from_environment()
else:
    plugin = Inert()
