"""The pure parts: who answers a permission request, which option a decision picks, how a failed prompt is
classified, the `<cli>_bin` aliases, and that the schema checker does catch a bad message."""

from __future__ import annotations

import re

import pytest
from harness_core import (
    ApprovalDecision,
    ApprovalPolicy,
    AuthFailedError,
    ModelError,
    RateLimitedError,
    SandboxMode,
    ToolKind,
)
from harness_core.cli import cli
from harness_core.provider import JsonRpcError

from harness_acp.display import tool_details
from harness_acp.errors import prompt_error, status_in
from harness_acp.mapping import STOP_REASONS
from harness_acp.options import options_for
from harness_acp.policy import auto_answer, outcome_for, outcome_of_decision
from harness_acp.testing.schema import SchemaViolation, WireChecker

CWD = "/work/ws"
EDIT_IN = {"kind": "edit", "locations": [{"path": "/work/ws/a.txt"}]}
EDIT_OUT = {"kind": "edit", "content": [{"type": "diff", "path": "/etc/passwd", "newText": "x"}]}
RUN = {"kind": "execute", "title": "rm -rf build"}


@pytest.mark.parametrize(("call", "sandbox", "approval", "answer"), [
    ({"kind": "read"}, SandboxMode.READ_ONLY, ApprovalPolicy.UNTRUSTED, "allow"),
    (EDIT_IN, SandboxMode.READ_ONLY, ApprovalPolicy.NEVER, "reject"),
    (RUN, SandboxMode.READ_ONLY, ApprovalPolicy.ON_REQUEST, "reject"),
    (EDIT_IN, SandboxMode.WORKSPACE_WRITE, ApprovalPolicy.NEVER, "allow"),
    (EDIT_IN, SandboxMode.WORKSPACE_WRITE, ApprovalPolicy.UNTRUSTED, "ask"),
    (EDIT_OUT, SandboxMode.WORKSPACE_WRITE, ApprovalPolicy.NEVER, "reject"),
    (EDIT_OUT, SandboxMode.WORKSPACE_WRITE, ApprovalPolicy.UNTRUSTED, "reject"),
    (EDIT_OUT, SandboxMode.DANGER_FULL_ACCESS, ApprovalPolicy.NEVER, "allow"),
    (RUN, SandboxMode.WORKSPACE_WRITE, ApprovalPolicy.NEVER, "allow"),
    (RUN, SandboxMode.DANGER_FULL_ACCESS, ApprovalPolicy.ON_REQUEST, "ask"),
    ({"kind": "edit", "locations": [{"path": "../outside.txt"}]}, SandboxMode.WORKSPACE_WRITE, ApprovalPolicy.NEVER,
     "reject"),
])
def test_the_sandbox_decides_first_then_the_approval_policy(call: dict[str, object], sandbox: SandboxMode,
                                                           approval: ApprovalPolicy, answer: str) -> None:
    assert auto_answer(call, sandbox=sandbox, approval=approval, cwd=CWD) == answer


GEMINI_OPTIONS = [{"optionId": "proceed_always", "kind": "allow_always", "name": "Always"},
                  {"optionId": "proceed_once", "kind": "allow_once", "name": "Once"},
                  {"optionId": "cancel", "kind": "reject_once", "name": "No"}]


def test_a_one_time_option_is_chosen_and_abort_cancels() -> None:
    assert outcome_of_decision(GEMINI_OPTIONS, ApprovalDecision.APPROVE).to_wire() == {
        "outcome": {"outcome": "selected", "optionId": "proceed_once"}}
    assert outcome_of_decision(GEMINI_OPTIONS, ApprovalDecision.DENY).to_wire() == {
        "outcome": {"outcome": "selected", "optionId": "cancel"}}
    abort = outcome_of_decision(GEMINI_OPTIONS, ApprovalDecision.ABORT)
    assert abort.to_wire() == {"outcome": {"outcome": "cancelled"}}
    only_always = [{"optionId": "yes", "kind": "allow_always", "name": "Yes"}]
    assert outcome_for(only_always, "allow").option_id == "yes"
    assert outcome_for(only_always, "reject").option_id is None  # nothing to reject with: cancelled


@pytest.mark.parametrize(("code", "message", "data", "kind", "status"), [
    (429, "Rate limit exceeded. Try again later.", None, RateLimitedError, 429),  # Qwen Code, Gemini CLI
    (500, '{"error":{"code":500,"message":"internal error","status":"INTERNAL"}}', None, ModelError, 500),
    (-32603, "Internal error: API Error: 500 {\"type\":\"error\"}", None, ModelError, 500),  # claude-acp
    (-32603, "Failed to authenticate. API Error: 401 invalid api key", None, AuthFailedError, 401),
    (-32603, "Internal error", {"message": "unexpected status 429 Too Many Requests"}, RateLimitedError, 429),
    (-32603, "Internal error", {"details": "quota exceeded for today"}, RateLimitedError, 429),
])
def test_a_failed_prompt_is_classified_by_the_status_it_carries(code: int, message: str, data: object,
                                                                 kind: type, status: int) -> None:
    error = prompt_error("agent", JsonRpcError(code, message, data))
    assert isinstance(error, kind)
    assert error.details.get("status") == status


def test_a_failed_prompts_next_step_names_a_harness_command_that_exists() -> None:
    error = prompt_error("qwen", JsonRpcError(500, "internal error", None))
    named = re.findall(r"`harness (\w+)", str(error))
    assert named, str(error)
    assert set(named) <= set(cli.commands), f"{str(error)!r} names a command `harness` does not have"


def test_numbers_that_are_not_statuses_are_not_read_as_one() -> None:
    assert status_in("took 5000 ms, line 4291") is None
    assert status_in("version 1.429.3") is None
    assert status_in("timeout after 500ms") is None and status_in("waited 503 s") is None
    assert status_in("listening on 127.0.0.1:500") is None
    assert status_in("EACCES: permission denied, open '/etc/x'") is None  # a tool's error is not a login problem
    assert status_in("HTTP 503 Service Unavailable") == 503


def test_bin_answers_to_the_cli_name() -> None:
    options = options_for("codex-acp")
    assert options.model_validate({"codex-acp_bin": "/x"}).bin == "/x"
    assert options.model_validate({"codex_acp_bin": "/y"}).bin == "/y"
    assert options.model_validate({"bin": "/z", "args": "--a 'b c'"}).args == ("--a", "b c")


def test_the_schema_checker_catches_a_bad_message() -> None:
    checker = WireChecker()
    checker.check({"jsonrpc": "2.0", "id": 1, "method": "session/prompt",
                   "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}}, sender="client")
    with pytest.raises(SchemaViolation, match="PromptResponse"):
        checker.check({"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "finished"}}, sender="agent")
    with pytest.raises(SchemaViolation, match="SessionNotification"):
        checker.check({"jsonrpc": "2.0", "method": "session/update", "params": {"update": {}}}, sender="agent")
    with pytest.raises(SchemaViolation, match="jsonrpc"):
        checker.check({"id": 2, "method": "initialize", "params": {}}, sender="client")


def test_claude_style_usage_counts_the_cache_as_input() -> None:
    from harness_acp.mapping import AcpMapper

    mapper = AcpMapper("/ws")
    answer = {"stopReason": "end_turn", "usage": {"inputTokens": 10, "outputTokens": 5, "cachedReadTokens": 100,
                                                  "cachedWriteTokens": 20, "totalTokens": 135}}
    usage = mapper.result_usage(answer)
    assert (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens) == (130, 100, 5)
    inclusive = {"inputTokens": 110, "outputTokens": 5, "cachedReadTokens": 100, "totalTokens": 115}
    assert mapper.result_usage({"usage": inclusive}).input_tokens == 110  # already counted in: left alone


def test_a_diff_of_texts_without_newlines_keeps_its_lines_apart() -> None:
    """claude-acp's diffs carry `oldText: "alpha"`, `newText: "beta"` (no newline): the unified diff still has one
    line per line; tool output wrapped in a markdown fence is shown without it."""
    from harness_acp.display import output_text, tool_details

    call = {"kind": "edit", "title": "Edit notes.txt", "status": "pending",
            "content": [{"type": "diff", "path": "/ws/notes.txt", "oldText": "alpha", "newText": "beta"}]}
    (change,) = tool_details(call, "/ws").changes
    assert change.diff is not None and "-alpha\n+beta\n" in change.diff
    fenced = {"content": [{"type": "content", "content": {"type": "text", "text": "```console\nharness-ok\n```"}}]}
    assert output_text(fenced) == "harness-ok"


def test_max_tokens_names_the_prompt_too_and_the_next_step() -> None:
    """Gemini on a 10 MB prompt stops with `max_tokens`: the error once blamed the output alone ("maximum output
    tokens") while the prompt had overflowed the context window."""
    status, said = STOP_REASONS["max_tokens"]
    assert status == "failed" and said is not None
    assert "by the prompt or by the answer" in said and "shorten the prompt" in said and "output tokens" not in said


def test_an_agents_lookup_of_its_deferred_tools_shows_as_a_search() -> None:
    """Qwen Code 0.24.4 sends its `tool_search` (the lookup of deferred MCP tools) with ACP kind `other`: it shows as
    a search, as the exact `tool_call` Qwen sent (recorded offline) says; another `other` call stays unknown."""
    call = {"toolCallId": "call_0000", "status": "pending", "title": "ToolSearch", "content": [], "locations": [],
            "kind": "other", "rawInput": {},
            "_meta": {"toolName": "tool_search", "provenance": "builtin", "phase": "preparing"}}
    assert tool_details(call, "/ws").kind is ToolKind.SEARCH
    assert tool_details({**call, "_meta": {"toolName": "todo_write"}}, "/ws").kind is ToolKind.UNKNOWN


def test_a_declined_call_left_open_is_not_waited_for() -> None:
    """A turn that answers with a call still open reads on for its last update; not for a call the operation
    refused (the agent never ran it, and may never report it): closing it says `declined` either way."""
    from harness_acp.mapping import AcpMapper

    mapper = AcpMapper("/ws")
    for cid in ("ran", "refused"):
        mapper.feed({"sessionUpdate": "tool_call", "toolCallId": cid, "title": "Run ls", "kind": "execute",
                     "status": "pending", "rawInput": {"command": "ls"}})
    mapper.decline("refused")
    assert mapper.open_calls() == ["ran", "refused"] and mapper.awaited_calls() == ["ran"]
    mapper.feed({"sessionUpdate": "tool_call_update", "toolCallId": "ran", "status": "completed"})
    assert mapper.awaited_calls() == [] and mapper.open_calls() == ["refused"]
