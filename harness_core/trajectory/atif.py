"""A run log's events as an ATIF trajectory: Harbor's Agent Trajectory Interchange Format, v1.7 (`atif_trajectory`).

Layer: trajectory (pure: events in, a JSON-able dict out; no I/O). Knows the event models; nothing of providers,
files or the store. How each event maps, and what ATIF has no place for: docs/trajectories.md.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from harness_core.events import (
    ApprovalRequested,
    ApprovalResolved,
    ContextUsage,
    Done,
    ErrorEvent,
    ErrorInfo,
    FilesChanged,
    HarnessEvent,
    ReasoningDelta,
    RunStarted,
    SessionStarted,
    TextDelta,
    ToolKind,
    ToolResult,
    ToolSummary,
    ToolUse,
    Usage,
)

__all__ = ["ATIF_VERSION", "REBUILT", "atif_trajectory", "iso_timestamp"]

ATIF_VERSION = "ATIF-v1.7"
"""The `schema_version` Harness writes."""

NOTES = ("Exported by Harness from its run log. Agent steps are cut where the agent reasons or speaks again after "
         "calling tools (the log does not mark each model call); a step's metrics are what the run's usage grew by "
         "while it was open. Errors are system steps whose extra.error has the Harness error.")

_SUMMARY_KINDS = ("plan", "todo", "diff", "note")
"""`tool_summary` kinds kept (in the step's `extra.summaries`); `output` is a tool's streamed output, which its
result repeats."""


def iso_timestamp(ts: float) -> str | None:
    """An event's `ts` (seconds since the epoch) as ISO 8601 in UTC (`2026-12-07T16:36:52.305Z`); None for an
    unstamped event (ts 0)."""
    if ts <= 0:
        return None
    stamp = _dt.datetime.fromtimestamp(ts, tz=_dt.timezone.utc).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


@dataclass
class _Figures:
    """Token and cost figures being added up (a step's metrics, a trajectory's totals)."""

    prompt: int = 0
    cached: int = 0
    completion: int = 0
    reasoning: int = 0
    cost: float | None = None

    def add(self, usage: Usage) -> None:
        self.prompt += usage.input_tokens
        self.cached += usage.cached_input_tokens
        self.completion += usage.output_tokens
        self.reasoning += usage.reasoning_tokens
        if usage.cost_usd is not None:
            self.cost = (self.cost or 0.0) + usage.cost_usd

    def __bool__(self) -> bool:
        return bool(self.prompt or self.cached or self.completion or self.reasoning or self.cost)

    def usage(self) -> Usage:
        return Usage(input_tokens=self.prompt, cached_input_tokens=self.cached, output_tokens=self.completion,
                     reasoning_tokens=self.reasoning, cost_usd=self.cost)

    def metrics(self) -> dict[str, Any]:
        """ATIF `metrics`: `prompt_tokens` counts cached input too (as Harness's `input_tokens` does)."""
        out: dict[str, Any] = {"prompt_tokens": self.prompt, "completion_tokens": self.completion,
                               "cached_tokens": self.cached}
        if self.cost is not None:
            out["cost_usd"] = round(self.cost, 10)
        if self.reasoning:
            out["extra"] = {"reasoning_tokens": self.reasoning}
        return out


def _grown(now: Usage, before: Usage) -> Usage:
    """What a running total grew by (never below zero; a cost first known now counts whole)."""
    cost = None
    if now.cost_usd is not None:
        cost = max(0.0, now.cost_usd - (before.cost_usd or 0.0))
    return Usage(
        input_tokens=max(0, now.input_tokens - before.input_tokens),
        cached_input_tokens=max(0, now.cached_input_tokens - before.cached_input_tokens),
        output_tokens=max(0, now.output_tokens - before.output_tokens),
        reasoning_tokens=max(0, now.reasoning_tokens - before.reasoning_tokens),
        cost_usd=cost,
    )


@dataclass
class _Step:
    source: str
    timestamp: str | None
    message: str = ""
    reasoning: str = ""
    text_item: str | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    figures: _Figures = field(default_factory=_Figures)
    model: str | None = None
    effort: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self, step_id: int) -> dict[str, Any]:
        out: dict[str, Any] = {"step_id": step_id}
        if self.timestamp is not None:
            out["timestamp"] = self.timestamp
        out["source"] = self.source
        if self.source == "agent":
            if self.model is not None:
                out["model_name"] = self.model
            if self.effort is not None:
                out["reasoning_effort"] = self.effort
        out["message"] = self.message
        if self.source == "agent":
            if self.reasoning:
                out["reasoning_content"] = self.reasoning
            if self.calls:
                out["tool_calls"] = self.calls
        results = [self.results[c["tool_call_id"]] for c in self.calls if c["tool_call_id"] in self.results]
        if results:
            out["observation"] = {"results": results}
        if self.source == "agent" and self.figures:
            out["metrics"] = self.figures.metrics()
        if self.extra:
            out["extra"] = self.extra
        return out


REBUILT = "display"
"""A tool call's `extra.arguments_from` when its `arguments` are not the agent's input but rebuilt by Harness from
what it showed of the call (`command`, `path`, `cwd`), or by a provider's mapping (an edit as `{"path", "kind"}`)."""

_EDIT_KINDS = (ToolKind.EDIT, ToolKind.WRITE)
_NAMING_KEYS = frozenset({"path", "kind"})
"""An edit's input with only these keys names the file and the kind of change, not the content: a provider's
rebuilding (the item named the file; the agent sent a patch), never what an edit tool takes."""


def _agent_input(event: ToolUse | ToolResult) -> dict[str, Any] | None:
    """The agent's own input to the call, when the event has it (not one rebuilt from what was shown)."""
    if not isinstance(event, ToolUse) or event.input is None:
        return None
    if event.display.kind in _EDIT_KINDS and set(event.input) <= _NAMING_KEYS:
        return None
    return dict(event.input)


def _arguments(event: ToolUse | ToolResult) -> dict[str, Any]:
    """A tool call's `arguments` (a JSON object): the agent's input, else what Harness rebuilt of it (the provider's
    mapping, or Harness's display: `command`, `path`, `cwd`)."""
    given = _agent_input(event)
    if given is not None:
        return given
    if isinstance(event, ToolUse) and event.input is not None:
        return dict(event.input)
    shown = event.display
    return {key: value for key, value in (("command", shown.command), ("path", shown.path), ("cwd", shown.cwd))
            if value is not None}


def _call(event: ToolUse | ToolResult) -> dict[str, Any]:
    """A tool call; its `extra` has Harness's display of it (kind, title, the file changes it announced), and
    `arguments_from: "display"` when `arguments` are rebuilt, not the agent's input."""
    extra: dict[str, Any] = {"kind": event.display.kind.value, "title": event.display.title}
    if _agent_input(event) is None:
        extra["arguments_from"] = REBUILT
    if event.display.changes:
        extra["changes"] = [change.model_dump(mode="json", exclude_none=True) for change in event.display.changes]
    return {"tool_call_id": event.tool_id, "function_name": event.name, "arguments": _arguments(event),
            "extra": extra}


def _result(event: ToolResult) -> dict[str, Any]:
    shown = event.display
    extra: dict[str, Any] = {"status": shown.status.value, "is_error": event.is_error}
    if shown.exit_code is not None:
        extra["exit_code"] = shown.exit_code
    if shown.duration_ms is not None:
        extra["duration_ms"] = shown.duration_ms
    content = event.output if event.output is not None else shown.summary
    return {"source_call_id": event.tool_id, "content": content if content is not None else "", "extra": extra}


def _error_json(error: ErrorInfo) -> dict[str, Any]:
    return error.model_dump(mode="json")


class _Builder:
    """Events in, steps out: one builder per trajectory, fed one run at a time."""

    def __init__(self) -> None:
        self.steps: list[_Step] = []
        self.runs: list[dict[str, Any]] = []
        self.files: list[str] = []
        self.totals = _Figures()
        self.duration_ms = 0
        self.model: str | None = None
        self.system_prompt: str | None = None

    # --- one run -------------------------------------------------------------------------------------------

    def add_run(self, events: list[HarnessEvent]) -> None:
        started = next((e for e in events if isinstance(e, RunStarted)), None)
        spec = started.spec if started is not None else {}
        run_id = events[0].run_id
        turn = started.session_turn.index if started is not None and started.session_turn is not None else None
        model = spec.get("model") if isinstance(spec.get("model"), str) else None
        effort = spec.get("effort") if isinstance(spec.get("effort"), str) else None
        run_agent_steps: list[_Step] = []
        current: _Step | None = None
        by_tool: dict[str, tuple[_Step, dict[str, Any]]] = {}
        approvals: dict[str, str | None] = {}
        last_usage = Usage()
        pending = _Figures()
        """Usage counted before the run's first agent step: that step's."""
        errors: set[tuple[str, str]] = set()
        done: Done | None = None
        agent_session: str | None = None

        def run_extra() -> dict[str, Any]:
            return {"run_id": run_id, **({"turn": turn} if turn is not None else {})}

        def agent_step(ts: float) -> _Step:
            step = _Step("agent", iso_timestamp(ts), model=model, effort=effort)
            if not run_agent_steps:
                step.figures.add(pending.usage())
            self.steps.append(step)
            run_agent_steps.append(step)
            return step

        if started is not None:
            system_prompt = spec.get("system_prompt")
            if isinstance(system_prompt, str) and system_prompt and system_prompt != self.system_prompt:
                self.steps.append(_Step("system", iso_timestamp(started.ts), message=system_prompt,
                                        extra=run_extra()))
                self.system_prompt = system_prompt
            prompt = spec.get("prompt")
            user = _Step("user", iso_timestamp(started.ts), message=prompt if isinstance(prompt, str) else "",
                         extra=run_extra())
            if spec.get("attachments"):
                user.extra["attachments"] = spec["attachments"]
            self.steps.append(user)

        for event in events:
            if isinstance(event, SessionStarted):
                agent_session = event.session_id
                if model is None and event.model:
                    model = event.model
            elif isinstance(event, ReasoningDelta):
                if current is None or current.message or current.calls:
                    current = agent_step(event.ts)
                current.reasoning += event.text
            elif isinstance(event, TextDelta):
                if current is None or current.calls:
                    current = agent_step(event.ts)
                elif current.message and event.item_id != current.text_item and None not in (
                        event.item_id, current.text_item):
                    current.message += "\n\n"
                current.message += event.text
                current.text_item = event.item_id
            elif isinstance(event, ToolUse):
                if event.tool_id in by_tool:  # the same call again (an update): newer arguments win
                    known = by_tool[event.tool_id][1]
                    given = _agent_input(event)
                    if given:
                        known["arguments"] = given
                        known["extra"].pop("arguments_from", None)
                    elif event.input and known["extra"].get("arguments_from") == REBUILT:
                        known["arguments"] = dict(event.input)
                    continue
                if current is None:
                    current = agent_step(event.ts)
                call = _call(event)
                current.calls.append(call)
                by_tool[event.tool_id] = (current, call)
            elif isinstance(event, ToolResult):
                if event.tool_id not in by_tool:  # a result with no call before it: its call, from the result
                    if current is None:
                        current = agent_step(event.ts)
                    call = _call(event)
                    current.calls.append(call)
                    by_tool[event.tool_id] = (current, call)
                step, call = by_tool[event.tool_id]
                step.results[event.tool_id] = _result(event)
                if event.display.changes and "changes" not in call["extra"]:  # announced only when it was done
                    call["extra"]["changes"] = [change.model_dump(mode="json", exclude_none=True)
                                                for change in event.display.changes]
            elif isinstance(event, ToolSummary):
                if event.kind in _SUMMARY_KINDS:
                    if current is None:
                        current = agent_step(event.ts)
                    current.extra.setdefault("summaries", []).append({"kind": event.kind, "text": event.text})
            elif isinstance(event, ApprovalRequested):
                approvals[event.request_id] = event.tool_id
            elif isinstance(event, ApprovalResolved):
                tool_id = approvals.get(event.request_id)
                answer = {"decision": event.decision.value, "decided_by": event.decided_by}
                if event.reason:
                    answer["reason"] = event.reason
                if tool_id is not None and tool_id in by_tool:
                    by_tool[tool_id][1]["extra"]["approval"] = answer
                elif current is not None:
                    current.extra.setdefault("approvals", []).append({"request_id": event.request_id, **answer})
            elif isinstance(event, ContextUsage) and not event.cumulative:
                grown = _grown(event.usage, last_usage)
                last_usage = event.usage
                target = current or (run_agent_steps[-1] if run_agent_steps else None)
                (target.figures if target is not None else pending).add(grown)
            elif isinstance(event, ErrorEvent):
                current = None
                errors.add((event.error.code, event.error.message))
                self._error_step(event.error, event.ts, run_extra())
            elif isinstance(event, FilesChanged):
                self.files.extend(f.path for f in event.files if f.path not in self.files)
            elif isinstance(event, Done):
                done = event

        usage = done.result.usage if done is not None else last_usage
        rest = _Figures()  # what only the result counts (a run without usage events, a cost known at the end)
        rest.add(_grown(usage, last_usage))
        if (rest or pending) and not run_agent_steps:  # usage, and no output to give it to: a step of its own
            agent_step(done.ts if done is not None else events[-1].ts)
        if rest:
            run_agent_steps[-1].figures.add(rest.usage())
        self.totals.add(usage)
        if model is not None and self.model is None:
            self.model = model
        record: dict[str, Any] = {"run_id": run_id}
        if turn is not None:
            record["turn"] = turn
        if done is not None:
            result = done.result
            if result.error is not None and (result.error.code, result.error.message) not in errors:
                self._error_step(result.error, done.ts, run_extra())
            self.duration_ms += result.duration_ms
            record.update(status=result.status.value, duration_ms=result.duration_ms)
            if result.error is not None:
                record["error"] = _error_json(result.error)
            agent_session = result.session_id or agent_session
        else:
            record["status"] = "unfinished"
        if agent_session:
            record["agent_session_id"] = agent_session
        if model is not None:
            record["model"] = model
        self.runs.append(record)

    def _error_step(self, error: ErrorInfo, ts: float, extra: dict[str, Any]) -> None:
        self.steps.append(_Step("system", iso_timestamp(ts), message=f"Error ({error.code}): {error.message}",
                                extra={**extra, "error": _error_json(error)}))


def _runs(events: Iterable[HarnessEvent]) -> list[list[HarnessEvent]]:
    """The events grouped by run (first seen first), a session's turns in turn order."""
    grouped: dict[str, list[HarnessEvent]] = {}
    for event in events:
        grouped.setdefault(event.run_id, []).append(event)
    runs = list(grouped.values())

    def turn(run: list[HarnessEvent]) -> int:
        started = next((e for e in run if isinstance(e, RunStarted)), None)
        return started.session_turn.index if started is not None and started.session_turn is not None else 0

    return sorted(runs, key=turn)  # stable: lone runs keep their order


def atif_trajectory(events: Iterable[HarnessEvent]) -> dict[str, Any]:
    """The ATIF v1.7 trajectory (a JSON-able dict) of one run's events, or of several runs' (a session's turns:
    one trajectory, each turn a user step and its agent steps). `session_id` is the run id (the Harness session's
    id for several turns of one session); `agent` is the provider, the agent CLI's version the run recorded (the
    provider's version when it recorded none) and the model.

    Raises:
        ValueError: no events.
    """
    runs = _runs(events)
    if not runs:
        raise ValueError("no events to export: the run log is empty")
    builder = _Builder()
    for run in runs:
        builder.add_run(run)
    first = next((e for e in runs[0] if isinstance(e, RunStarted)), None)
    sessions = {e.session_turn.session for run in runs for e in run
                if isinstance(e, RunStarted) and e.session_turn is not None}
    session_id = sessions.pop() if len(runs) > 1 and len(sessions) == 1 else runs[0][0].run_id
    agent: dict[str, Any] = {
        "name": first.provider if first is not None else "unknown",
        "version": (first.cli_version or first.provider_version) if first is not None else "unknown",
    }
    if builder.model is not None:
        agent["model_name"] = builder.model
    if first is not None:
        agent_extra = {"provider_version": first.provider_version}
        harness_version = first.spec.get("harness_version")
        if isinstance(harness_version, str):
            agent_extra["harness_version"] = harness_version
        agent["extra"] = agent_extra
    steps = [step.as_json(number) for number, step in enumerate(builder.steps, start=1)]
    if not steps:  # a log without run_started or output: still one step, as ATIF needs
        steps = [_Step("system", None, message="(the run log holds no prompt and no output)").as_json(1)]
    final: dict[str, Any] = {
        "total_prompt_tokens": builder.totals.prompt,
        "total_completion_tokens": builder.totals.completion,
        "total_cached_tokens": builder.totals.cached,
    }
    if builder.totals.cost is not None:
        final["total_cost_usd"] = round(builder.totals.cost, 10)
    final["total_steps"] = len(steps)
    final_extra: dict[str, Any] = {"duration_ms": builder.duration_ms}
    if builder.totals.reasoning:
        final_extra["reasoning_tokens"] = builder.totals.reasoning
    final["extra"] = final_extra
    extra: dict[str, Any] = {"status": builder.runs[-1]["status"], "runs": builder.runs}
    if builder.files:
        extra["files_changed"] = builder.files
    return {"schema_version": ATIF_VERSION, "session_id": session_id, "agent": agent, "steps": steps,
            "notes": NOTES, "final_metrics": final, "extra": extra}
