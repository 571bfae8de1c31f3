"""`harness_core.spans`: a run's span tree from its events alone (pure: no OpenTelemetry), for logs cut short and
agents that report a tool only once it is over."""

from __future__ import annotations

from harness_core.events import (
    ApprovalRequested,
    Done,
    HarnessEvent,
    HarnessResult,
    HarnessToolDetails,
    RunStarted,
    RunStatus,
    ToolKind,
    ToolResult,
    ToolStatus,
    ToolUse,
    Usage,
)
from harness_core.spans import RunSpans, run_spans, session_span


def _at(event: HarnessEvent, ts: float) -> HarnessEvent:
    event.__dict__.update(run_id="r1", ts=ts)
    return event


def _started() -> HarnessEvent:
    return _at(RunStarted(provider="p", provider_version="1", spec={"prompt": "hi", "model": "m"}), 100.0)


def test_a_log_cut_before_done_ends_its_open_spans_at_the_last_event() -> None:
    shell = HarnessToolDetails(kind=ToolKind.SHELL, title="Running command", command="make test")
    events = [_started(), _at(ToolUse(tool_id="t", name="Bash", display=shell), 101.0),
              _at(ApprovalRequested(request_id="a", tool_id="t", display=shell), 102.0)]
    root = run_spans(events)
    assert root is not None and root.end == 102.0
    assert root.attributes["harness.status"] == "unfinished"
    (tool,) = root.children
    (approval,) = tool.children
    assert (tool.name, tool.end, tool.attributes["harness.status"]) == ("execute_tool Bash", 102.0, "unfinished")
    assert (approval.name, approval.start, approval.parent) == ("harness.approval", 102.0, "tool:t")


def test_a_tool_reported_only_by_its_result_starts_its_duration_earlier() -> None:
    done = HarnessToolDetails(kind=ToolKind.READ, title="Reading file", path="a.txt", status=ToolStatus.COMPLETED,
                              duration_ms=500)
    spans = RunSpans()
    spans.feed(_started())
    opened, closed = spans.feed(_at(ToolResult(tool_id="t", name="Read", display=done), 103.0))
    assert opened == closed and opened[0].start == 102.5 and opened[0].end == 103.0
    result = HarnessResult(status=RunStatus.FAILED, usage=Usage(input_tokens=5, output_tokens=2))
    _, closed = spans.feed(_at(Done(result=result), 104.0))
    assert [s.key for s in closed] == ["run"]
    root = spans.root
    assert root is not None and root.status == "error" and root.attributes["error.type"] == "failed"
    assert root.attributes["gen_ai.usage.input_tokens"] == 5 and root.attributes["gen_ai.request.model"] == "m"
    assert "gen_ai.input.messages" not in root.attributes
    assert spans.feed(_at(ToolUse(tool_id="late", name="Bash", display=done), 105.0)) == ([], [])


def test_titles_are_scrubbed_and_the_provider_name_is_the_declared_one() -> None:
    """`harness.tool.title` may be an agent's free text (a command): scrubbed like `path` and `command`, on the tool
    and on the approval. `gen_ai.provider.name` is `run_started`'s `genai_provider` when the provider declares one,
    else its own name; `gen_ai.agent.name` and `harness.provider` keep Harness's name."""
    secret = "hunter2hunter2"
    titled = HarnessToolDetails(kind=ToolKind.UNKNOWN, title=f"curl -H 'Bearer {secret}'", command=f"curl {secret}")
    started = _at(RunStarted(provider="p", provider_version="1", genai_provider="openai", spec={"prompt": "hi"}),
                  100.0)
    spans = RunSpans(secrets=(secret,))
    spans.feed(started)
    (tool,), _ = spans.feed(_at(ToolUse(tool_id="t", name="curl", display=titled), 101.0))
    (approval,), _ = spans.feed(_at(ApprovalRequested(request_id="a", tool_id="t", display=titled), 101.5))
    for span in (tool, approval):
        assert span.attributes["harness.tool.title"] == "curl -H 'Bearer ***'"
        assert secret not in str(span.attributes)
    root = spans.root
    assert root is not None and root.attributes["gen_ai.provider.name"] == "openai"
    assert root.attributes["gen_ai.agent.name"] == root.attributes["harness.provider"] == "p"
    own = run_spans([_started()])
    assert own is not None and own.attributes["gen_ai.provider.name"] == "p"
    assert session_span("s", "p", {}, 1.0, genai_provider="anthropic").attributes["gen_ai.provider.name"] == "anthropic"
    assert session_span("s", "p", {}, 1.0).attributes["gen_ai.provider.name"] == "p"


def test_a_run_still_playing_is_running_not_unfinished() -> None:
    root = run_spans([_started()], end=150.0, running=True)
    assert root is not None and root.end == 150.0 and root.attributes["harness.status"] == "running"
