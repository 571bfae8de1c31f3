"""A run's spans from its events: the OpenTelemetry GenAI shape of a run (`invoke_agent`, `execute_tool`), pure.

Layer: core model (events in, span records out; no I/O, no clock: every time is an event's `ts`, so a log read back
gives the live run's spans). Used by `harness trace` and the harness-otel observer; knows no OpenTelemetry SDK and
no provider. Content (prompt, answer, tool input/output) only with `content=True`, scrubbed: docs/observe.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from harness_core.events import (
    ApprovalRequested,
    ApprovalResolved,
    Done,
    ErrorEvent,
    HarnessEvent,
    HarnessToolDetails,
    Notice,
    RunStarted,
    RunStatus,
    SessionStarted,
    ToolResult,
    ToolStatus,
    ToolUse,
)
from harness_core.redaction import scrub

__all__ = ["APPROVAL_SPAN", "AttributeValue", "RunSpans", "Span", "SpanEvent", "batch_ended", "batch_span", "run_spans",
           "session_span"]

AttributeValue = str | bool | int | float
APPROVAL_SPAN = "harness.approval"
RUN_KEY = "run"
_CONTENT_CHARS = 16_384
"""At most this much of one text kept as content (prompt, answer, a tool's arguments or output)."""


@dataclass
class SpanEvent:
    """Something that happened inside a span at one moment (an error, a notice)."""

    name: str
    ts: float
    attributes: dict[str, AttributeValue] = field(default_factory=dict)


@dataclass
class Span:
    """One span of a run: `key` names it inside the run (`run`, `tool:<tool id>`, `approval:<request id>`),
    `parent` is its parent's key (None for the run's own span), times are seconds since the epoch (events' `ts`)."""

    key: str
    name: str
    kind: Literal["client", "internal"]
    start: float
    parent: str | None = None
    end: float | None = None
    attributes: dict[str, AttributeValue] = field(default_factory=dict)
    status: Literal["unset", "ok", "error"] = "unset"
    error_type: str | None = None
    events: list[SpanEvent] = field(default_factory=list)
    children: list[Span] = field(default_factory=list)

    @property
    def duration(self) -> float | None:
        """Seconds from start to end (None while open)."""
        return None if self.end is None else max(0.0, self.end - self.start)

    def walk(self) -> Iterable[Span]:
        """This span and every span under it, depth first, in start order."""
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass
class RunSpans:
    """The spans of one run, built as its events come: `feed(event)` returns the spans it opened and those it
    closed (a span opened and closed by one event is in both, opened first).

    `content`: keep the prompt, the answer, tool arguments and tool output as attributes (scrubbed: credential
    shapes and `secrets`); off by default, as `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` is.
    """

    content: bool = False
    secrets: tuple[str, ...] = ()
    root: Span | None = None
    _open: dict[str, Span] = field(default_factory=dict)

    def feed(self, event: HarnessEvent) -> tuple[list[Span], list[Span]]:
        kind = type(event)
        if kind is RunStarted:
            return [self._run_started(event)], []  # type: ignore[arg-type]
        root = self.root
        if root is None or root.end is not None:
            return [], []  # no `run_started` seen (a log cut at its head), or after `done`: nothing to hang it on
        if kind is ToolUse:
            return self._tool_use(event), []  # type: ignore[arg-type]
        if kind is ToolResult:
            return self._tool_result(event)  # type: ignore[arg-type]
        if kind is ApprovalRequested:
            return [self._approval_requested(event)], []  # type: ignore[arg-type]
        if kind is ApprovalResolved:
            return [], self._approval_resolved(event)  # type: ignore[arg-type]
        if kind is SessionStarted:
            assert isinstance(event, SessionStarted)
            root.attributes["gen_ai.conversation.id"] = event.session_id
            if event.model:
                root.attributes["gen_ai.response.model"] = event.model
        elif kind is ErrorEvent:
            assert isinstance(event, ErrorEvent)
            root.events.append(SpanEvent("harness.error", event.ts, {"error.type": event.error.code,
                                                                     "harness.error.message": self._text(
                                                                         event.error.message)}))
        elif kind is Notice:
            assert isinstance(event, Notice)
            root.events.append(SpanEvent("harness.notice", event.ts, {"harness.notice.code": event.code,
                                                                      "harness.notice.level": event.level}))
        elif kind is Done:
            return [], self._done(event)  # type: ignore[arg-type]
        return [], []

    def finish(self, ts: float, status: str = "unfinished") -> list[Span]:
        """End every span still open at `ts` (a log that stops before its `done`: a killed or running run); each
        gets `harness.status` `status` (`unfinished`; `running` for a run still playing). Returns what it closed,
        innermost first."""
        if self.root is None or self.root.end is not None:
            return []
        self.root.attributes.setdefault("harness.status", status)
        return self._close_open(ts, include_root=True, status=status)

    # --- the run ----------------------------------------------------------------------------------------------

    def _run_started(self, event: RunStarted) -> Span:
        spec = event.spec
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": event.genai_provider or event.provider,
            "gen_ai.agent.name": event.provider,
            "harness.run_id": event.run_id,
            "harness.provider": event.provider,
            "harness.provider.version": event.provider_version,
        }
        _put(attributes, "gen_ai.request.model", spec.get("model"))
        _put(attributes, "harness.cli.version", event.cli_version)
        _put(attributes, "harness.version", spec.get("harness_version"))
        _put(attributes, "harness.sandbox", spec.get("sandbox"))
        _put(attributes, "harness.approval_policy", spec.get("approval"))
        _put(attributes, "gen_ai.conversation.id", spec.get("resume_session"))
        turn = event.session_turn
        if turn is not None:
            attributes["harness.session.id"] = turn.session
            attributes["harness.session.turn"] = turn.index
        if self.content:
            prompt = spec.get("prompt")
            if isinstance(prompt, str):
                attributes["gen_ai.input.messages"] = _messages("user", self._text(prompt))
            system = spec.get("system_prompt")
            if isinstance(system, str):
                attributes["gen_ai.system_instructions"] = json.dumps([{"type": "text",
                                                                        "content": self._text(system)}])
        self.root = Span(RUN_KEY, f"invoke_agent {event.provider}", "client", event.ts, attributes=attributes)
        self._open = {RUN_KEY: self.root}
        return self.root

    def _done(self, event: Done) -> list[Span]:
        root = self.root
        assert root is not None
        result = event.result
        usage = result.usage
        attributes = root.attributes
        attributes["harness.status"] = result.status.value
        attributes["gen_ai.usage.input_tokens"] = usage.input_tokens
        attributes["gen_ai.usage.output_tokens"] = usage.output_tokens
        attributes["gen_ai.usage.cache_read.input_tokens"] = usage.cached_input_tokens
        attributes["harness.usage.reasoning_tokens"] = usage.reasoning_tokens
        _put(attributes, "harness.usage.cost_usd", usage.cost_usd)
        attributes["harness.duration_ms"] = result.duration_ms
        _put(attributes, "gen_ai.conversation.id", result.session_id)
        if result.files_changed:
            attributes["harness.files_changed"] = len(result.files_changed)
        if self.content and result.final_text:
            attributes["gen_ai.output.messages"] = _messages("assistant", self._text(result.final_text),
                                                             finish_reason="stop")
        if result.status is RunStatus.SUCCESS:
            root.status = "ok"
        else:
            root.status = "error"
            root.error_type = result.error.code if result.error is not None else result.status.value
            attributes["error.type"] = root.error_type
        return self._close_open(event.ts, include_root=True)

    def _close_open(self, ts: float, *, include_root: bool, status: str = "unfinished") -> list[Span]:
        """End what is still open under the run (an approval nobody answered, a tool without its result), innermost
        first, then the run's span itself."""
        closed: list[Span] = []
        for key in reversed(list(self._open)):
            span = self._open[key]
            if span is self.root and not include_root:
                continue
            if span is not self.root:
                span.attributes.setdefault("harness.status", status)
            span.end = max(ts, span.start)
            closed.append(span)
            del self._open[key]
        return closed

    # --- tools and approvals -----------------------------------------------------------------------------------

    def _tool_use(self, event: ToolUse) -> list[Span]:
        key = f"tool:{event.tool_id}"
        span = self._open.get(key)
        if span is not None:  # an update of a tool still running (its title, path or command now known)
            span.attributes.update(self._tool_attributes(event.display))
            return []
        span = self._child(key, f"execute_tool {event.name}", event.ts, {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": event.name,
            "gen_ai.tool.call.id": event.tool_id,
            **self._tool_attributes(event.display),
        })
        if self.content and event.input is not None:
            span.attributes["gen_ai.tool.call.arguments"] = self._text(json.dumps(event.input, default=str))
        return [span]

    def _tool_result(self, event: ToolResult) -> tuple[list[Span], list[Span]]:
        key = f"tool:{event.tool_id}"
        span = self._open.pop(key, None)
        opened: list[Span] = []
        if span is None:  # a result without its use (some agents report a tool only once it is over)
            took = (event.display.duration_ms or 0) / 1000
            span = self._child(key, f"execute_tool {event.name}", event.ts - took, {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": event.name,
                "gen_ai.tool.call.id": event.tool_id,
            })
            self._open.pop(key, None)
            opened.append(span)
        display = event.display
        span.attributes.update(self._tool_attributes(display))
        _put(span.attributes, "process.exit.code", display.exit_code)
        _put(span.attributes, "harness.tool.duration_ms", display.duration_ms)
        if self.content and event.output is not None:
            span.attributes["gen_ai.tool.call.result"] = self._text(event.output)
        if display.status is ToolStatus.FAILED or (event.is_error and display.status is not ToolStatus.DECLINED):
            span.status = "error"
            span.error_type = "tool_failed" if display.exit_code is None else f"exit_code_{display.exit_code}"
            span.attributes["error.type"] = span.error_type
        span.end = max(event.ts, span.start)
        return opened, [span]

    def _tool_attributes(self, display: HarnessToolDetails) -> dict[str, AttributeValue]:
        attributes: dict[str, AttributeValue] = {
            "harness.tool.kind": _name(display.kind),
            "harness.tool.status": _name(display.status),
            "harness.tool.title": scrub(display.title, self.secrets),
        }
        if display.path:
            attributes["harness.tool.path"] = scrub(display.path, self.secrets)
        if display.command:
            attributes["harness.tool.command"] = scrub(display.command, self.secrets)
        return attributes

    def _approval_requested(self, event: ApprovalRequested) -> Span:
        parent = f"tool:{event.tool_id}" if event.tool_id and f"tool:{event.tool_id}" in self._open else RUN_KEY
        attributes: dict[str, AttributeValue] = {"harness.approval.request_id": event.request_id,
                                                 **self._tool_attributes(event.display)}
        attributes.pop("harness.tool.status")
        _put(attributes, "gen_ai.tool.call.id", event.tool_id)
        if event.reason:
            attributes["harness.approval.reason"] = self._text(event.reason)
        return self._child(f"approval:{event.request_id}", APPROVAL_SPAN, event.ts, attributes, parent=parent)

    def _approval_resolved(self, event: ApprovalResolved) -> list[Span]:
        span = self._open.pop(f"approval:{event.request_id}", None)
        if span is None:
            return []
        span.attributes["harness.approval.decision"] = event.decision.value
        span.attributes["harness.approval.decided_by"] = event.decided_by
        span.end = max(event.ts, span.start)
        return [span]

    # --- helpers -----------------------------------------------------------------------------------------------

    def _child(self, key: str, name: str, ts: float, attributes: dict[str, AttributeValue], *,
               parent: str = RUN_KEY) -> Span:
        owner = self._open.get(parent, self.root)
        assert owner is not None
        span = Span(key, name, "internal", ts, parent=owner.key, attributes=attributes)
        owner.children.append(span)
        self._open[key] = span
        return span

    def _text(self, text: str) -> str:
        return scrub(text[:_CONTENT_CHARS], self.secrets)


def run_spans(events: Iterable[HarnessEvent], *, content: bool = False, secrets: tuple[str, ...] = (),
              end: float | None = None, running: bool = False) -> Span | None:
    """The span tree of a run's events (its log read back): the run's span with its children, or None without a
    `run_started`. A run that has no `done` is ended at `end` (default: its last event's time), its open spans
    `unfinished` (a killed run), or `running` when `running` (one still playing, ended at `end`: now)."""
    spans = RunSpans(content=content, secrets=secrets)
    last: float | None = None
    for event in events:
        spans.feed(event)
        last = event.ts
    if spans.root is not None and spans.root.end is None:
        spans.finish(end if end is not None else (last or spans.root.start),
                     "running" if running else "unfinished")
    return spans.root


def session_span(session_id: str, provider: str, spec: Mapping[str, Any], ts: float, *,
                 genai_provider: str | None = None) -> Span:
    """The span of a session, the parent of its turns' runs (`harness_session_opened`): `invoke_agent` over the
    whole conversation, which `gen_ai.conversation.id` names once a turn reports the agent's session id.
    `genai_provider`: the provider's `gen_ai.provider.name` (`ProviderInfo.genai_provider`; default: `provider`)."""
    attributes: dict[str, AttributeValue] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": genai_provider or provider,
        "gen_ai.agent.name": provider,
        "harness.session.id": session_id,
        "harness.provider": provider,
    }
    _put(attributes, "gen_ai.request.model", spec.get("model"))
    _put(attributes, "gen_ai.conversation.id", spec.get("resume_session"))
    return Span(f"session:{session_id}", f"invoke_agent {provider}", "client", ts, attributes=attributes)


def batch_span(batch_id: str, name: str, cells: int, ts: float) -> Span:
    """The span of a batch, the parent of its cells' runs (`harness_batch_started`): the GenAI conventions'
    `invoke_workflow`, the workflow named as the batch is."""
    attributes: dict[str, AttributeValue] = {
        "gen_ai.operation.name": "invoke_workflow",
        "gen_ai.workflow.name": name,
        "harness.batch.id": batch_id,
        "harness.batch.cells": cells,
    }
    return Span(f"batch:{batch_id}", f"invoke_workflow {name}", "internal", ts, attributes=attributes)


def batch_ended(span: Span, status: str, counts: Mapping[str, float], ts: float) -> Span:
    """`span` (a `batch_span`) closed as its batch ended (`harness_batch_ended`): its status and figures
    (`harness.batch.succeeded`, `.failed`, ..., `harness.usage.cost_usd`); an error (`error.type` `batch_failed`,
    `interrupted`) unless every cell succeeded."""
    span.end = max(ts, span.start)
    span.attributes["harness.status"] = status
    for key, value in counts.items():
        if key == "cost_usd":
            if value:
                span.attributes["harness.usage.cost_usd"] = float(value)
        elif key != "cells" and isinstance(value, (int, float)):
            span.attributes[f"harness.batch.{key}"] = int(value)
    if status == "success":
        span.status = "ok"
    else:
        span.status, span.error_type = "error", "interrupted" if status == "interrupted" else "batch_failed"
        span.attributes["error.type"] = span.error_type
    return span


def _put(attributes: dict[str, AttributeValue], key: str, value: Any) -> None:
    """Set `key` when `value` is an attribute value (None and anything else are left out)."""
    if isinstance(value, (str, bool, int, float)) and value != "":
        attributes[key] = value


def _name(value: Any) -> str:
    """An enum member's value (a provider's `model_copy` may have left the plain string)."""
    return str(getattr(value, "value", value))


def _messages(role: str, text: str, *, finish_reason: str | None = None) -> str:
    """One message in the GenAI conventions' JSON shape (`gen_ai.input.messages` / `gen_ai.output.messages`)."""
    message: dict[str, Any] = {"role": role, "parts": [{"type": "text", "content": text}]}
    if finish_reason is not None:
        message["finish_reason"] = finish_reason
    return json.dumps([message])
