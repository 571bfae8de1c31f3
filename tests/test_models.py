"""AgentRunSpec and HarnessEvent: frozen, strict, exact JSON round trips, schema export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from harness_core.capabilities import Capability
from harness_core.events import (
    EVENT_ADAPTER,
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    ContextUsage,
    Done,
    ErrorEvent,
    ErrorInfo,
    FileChange,
    FilesChanged,
    HarnessResult,
    HarnessToolDetails,
    Notice,
    ProviderRaw,
    ReasoningDelta,
    RunStarted,
    RunStatus,
    SessionStarted,
    TextDelta,
    ToolKind,
    ToolResult,
    ToolStatus,
    ToolSummary,
    ToolUse,
    Usage,
    parse_event,
)
from harness_core.spec import AgentRunSpec, ApprovalPolicy, SandboxMode

DETAILS = HarnessToolDetails(kind=ToolKind.SHELL, title="Running command", command="pytest -q", cwd="/w",
                             status=ToolStatus.COMPLETED, exit_code=0, duration_ms=12, summary="ok",
                             raw={"x": [1, 2]})
ONE_OF_EACH = [
    RunStarted(provider="p", provider_version="1", cli_version="0.1", capabilities=[Capability.SESSION],
               spec={"prompt": "x"}),
    SessionStarted(session_id="s", resumed=True, model="m"),
    TextDelta(text="héllo\n", item_id="i"),
    ReasoningDelta(text="hmm"),
    ToolUse(tool_id="t", name="exec", display=DETAILS, input={"cmd": "pytest -q"}),
    ToolResult(tool_id="t", name="exec", display=DETAILS, output="ok", is_error=False),
    ToolSummary(tool_id="t", kind="output", text="line"),
    ApprovalRequested(request_id="0", tool_id="t", display=DETAILS, reason="why"),
    ApprovalResolved(request_id="0", decision=ApprovalDecision.DENY, decided_by="default", reason="no"),
    ContextUsage(usage=Usage(input_tokens=1, cached_input_tokens=2, output_tokens=3, reasoning_tokens=4,
                             cost_usd=0.5), cumulative=True, context_window=1000),
    ErrorEvent(error=ErrorInfo(code="model_error", message="m", retryable=True, details={"status": 500})),
    Notice(code="reconnecting", message="reconnecting to the model API (2/5)", details={"attempt": 2, "max": 5}),
    ProviderRaw(method="x/y", payload={"a": [1, None, 2.5]}),
    FilesChanged(files=(FileChange(path="a.py", kind="modify", diff="--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a\n+b\n"),)),
    Done(result=HarnessResult(status=RunStatus.SUCCESS, final_text="t", session_id="s", usage=Usage(),
                              duration_ms=5, run_id="r", provider="p", files_changed=("a.py",))),
]


def test_every_event_type_is_covered() -> None:
    names = {e.type for e in ONE_OF_EACH}
    schema = EVENT_ADAPTER.json_schema()
    assert names == set(schema["discriminator"]["mapping"])


@pytest.mark.parametrize("event", ONE_OF_EACH, ids=lambda e: e.type)
def test_json_round_trip_is_exact(event: object) -> None:
    line = event.model_dump_json()  # type: ignore[attr-defined]
    back = parse_event(line)
    assert back == event
    assert back.model_dump_json() == line


def test_events_are_frozen_and_strict() -> None:
    event = TextDelta(text="x")
    with pytest.raises(ValidationError):
        event.text = "y"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        TextDelta(text="x", colour="red")  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        parse_event(json.dumps({"type": "no_such_type"}))


def test_spec_defaults_and_strictness(tmp_path: Path) -> None:
    spec = AgentRunSpec(prompt="do it", cwd=tmp_path)
    assert spec.sandbox is SandboxMode.WORKSPACE_WRITE
    assert spec.approval is ApprovalPolicy.NEVER
    assert spec.cwd.is_absolute()
    with pytest.raises(ValidationError):
        AgentRunSpec(prompt="x", sandboxx="read-only")  # type: ignore[call-arg]
    for blank in ("   ", ""):  # an empty prompt gets the same readable message, not pydantic's min_length
        with pytest.raises(ValidationError, match="prompt is empty"):
            AgentRunSpec(prompt=blank)
    with pytest.raises(ValidationError):
        AgentRunSpec(prompt="x", model="")
    with pytest.raises(ValidationError):
        AgentRunSpec(prompt="x", idle_timeout=0)
    with pytest.raises(ValidationError):
        spec.prompt = "other"  # type: ignore[misc]


def test_spec_json_round_trip() -> None:
    spec = AgentRunSpec(prompt="p", model="m", sandbox="read-only", approval="untrusted", resume_session="s",
                        requires=["streaming"], env={"A": "1"}, idle_timeout=3, provider_options={"k": [1]})
    assert AgentRunSpec.model_validate_json(spec.model_dump_json()) == spec


def test_needed_capabilities_follow_the_spec() -> None:
    assert AgentRunSpec(prompt="p").needed_capabilities() == frozenset()
    spec = AgentRunSpec(prompt="p", resume_session="s", approval="on-request", requires=["streaming"])
    assert spec.needed_capabilities() == {Capability.SESSION, Capability.APPROVALS, Capability.STREAMING}
