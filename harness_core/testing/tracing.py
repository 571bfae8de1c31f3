"""A tracing observer for tests, with no OpenTelemetry: it answers `harness_trace_context` with a carrier made from
the run's (or session's) id, so a provider's test can check what its agent received on every spawn and every turn.

Layer: testing. Register it as a plugin of the test's host:
`PluginHost.create(entry_points=False, plugins=[("provider", module), ("tracing", TraceCarriers())], env={})`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from harness_core.hookspecs import hookimpl

__all__ = ["TraceCarriers", "carrier_for"]


def carrier_for(span_of: str) -> dict[str, str]:
    """The W3C carrier `TraceCarriers` hands on for a run or session id: a valid `traceparent` whose trace and span
    ids are made from the id (one per id, the same every time), and a `tracestate` naming it."""
    digest = hashlib.sha256(span_of.encode()).hexdigest()
    return {"traceparent": f"00-{digest[:32]}-{digest[32:48]}-01", "tracestate": f"harness={digest[48:56]}"}


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
