"""The ATIF mapping (`atif_trajectory`) and the chat-messages one (`openai_messages`) on the logs of scripted runs
(text, reasoning, tools, an error, usage, a session of two turns) and on hand-made event streams for what the
scripted provider does not do (usage split across steps, a cost only the result knows, approvals, a result without
its call)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness_core import AgentRunSpec, SessionSpec, open_session, run_sync
from harness_core.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    ContextUsage,
    Done,
    ErrorInfo,
    FileChange,
    HarnessEvent,
    HarnessResult,
    HarnessToolDetails,
    ReasoningDelta,
    RunStarted,
    RunStatus,
    SessionStarted,
    SessionTurn,
    TextDelta,
    ToolKind,
    ToolResult,
    ToolStatus,
    ToolUse,
    Usage,
)
from harness_core.plugins import PluginHost
from harness_core.store import read_events
from harness_core.trajectory import ATIF_VERSION, atif_trajectory, messages_from_trajectory, openai_messages


def _run(host: PluginHost, runs_dir: Path, scenario: str, prompt: str = "do it", **spec: Any) -> list[HarnessEvent]:
    result = run_sync(AgentRunSpec(prompt=prompt, provider_options={"scenario": scenario}, **spec), "scripted",
                      host=host, runs_dir=runs_dir)
    return list(read_events(runs_dir / f"{result.run_id}.jsonl"))


def _sources(trajectory: dict[str, Any]) -> list[str]:
    return [step["source"] for step in trajectory["steps"]]


def _check_shape(trajectory: dict[str, Any]) -> None:
    """What Harbor's models check, in short (tests/harbor/ runs Harbor's own): ids from 1, agent-only fields on
    agent steps only, every observation on its call's step."""
    assert trajectory["schema_version"] == ATIF_VERSION
    assert [s["step_id"] for s in trajectory["steps"]] == list(range(1, len(trajectory["steps"]) + 1))
    for step in trajectory["steps"]:
        if step["source"] != "agent":
            assert not {"tool_calls", "metrics", "reasoning_content", "model_name"} & set(step), step
        calls = {c["tool_call_id"] for c in step.get("tool_calls", [])}
        assert {r["source_call_id"] for r in step.get("observation", {}).get("results", [])} <= calls
    assert trajectory["final_metrics"]["total_steps"] == len(trajectory["steps"])
    json.dumps(trajectory)


# --- scripted runs ----------------------------------------------------------------------------------------

def test_a_text_run_is_a_user_step_and_an_agent_step_with_its_usage(host: PluginHost, runs_dir: Path) -> None:
    events = _run(host, runs_dir, "say", "say hello", system_prompt="Be brief.", model="m-1", effort="low")
    trajectory = atif_trajectory(events)
    _check_shape(trajectory)
    started = events[0]
    assert isinstance(started, RunStarted)
    assert trajectory["session_id"] == started.run_id
    assert trajectory["agent"]["name"] == "scripted" and trajectory["agent"]["version"] == started.provider_version
    assert trajectory["agent"]["model_name"] == "m-1"
    system, user, agent = trajectory["steps"]
    assert (system["source"], system["message"]) == ("system", "Be brief.")
    assert (user["source"], user["message"]) == ("user", "say hello")
    assert user["timestamp"].endswith("Z") and user["extra"]["run_id"] == started.run_id
    assert agent["message"] == "Hello from the scripted model."
    assert (agent["model_name"], agent["reasoning_effort"]) == ("m-1", "low")
    assert agent["metrics"] == {"prompt_tokens": 100, "completion_tokens": 20, "cached_tokens": 0}
    assert trajectory["final_metrics"]["total_prompt_tokens"] == 100
    assert trajectory["final_metrics"]["total_completion_tokens"] == 20
    assert trajectory["extra"]["status"] == "success"
    assert openai_messages(events) == {"messages": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "say hello"},
        {"role": "assistant", "content": "Hello from the scripted model."}]}


def test_reasoning_is_the_steps_reasoning_content(host: PluginHost, runs_dir: Path) -> None:
    trajectory = atif_trajectory(_run(host, runs_dir, "think"))
    _check_shape(trajectory)
    agent = trajectory["steps"][-1]
    assert agent["reasoning_content"] == "Let me consider the question."
    assert agent["message"] == "Thought it through."
    assert "reasoning_content" not in messages_from_trajectory(trajectory)["messages"][-1]
    shown = messages_from_trajectory(trajectory, reasoning=True)["messages"][-1]
    assert shown["reasoning_content"] == "Let me consider the question."


def test_tool_calls_and_their_results_are_one_step_and_the_answer_another(host: PluginHost, runs_dir: Path) -> None:
    Path("notes.txt").write_text("alpha\n")
    trajectory = atif_trajectory(_run(host, runs_dir, "tools"))
    _check_shape(trajectory)
    assert _sources(trajectory) == ["user", "agent", "agent"]
    calls_step, answer = trajectory["steps"][1:]
    calls = calls_step["tool_calls"]
    assert [c["function_name"] for c in calls] == ["shell", "read", "edit", "write"]
    assert calls[0]["arguments"] == {"command": "echo harness-ok"}
    assert calls[0]["extra"]["kind"] == "shell"
    assert {c["extra"]["arguments_from"] for c in calls} == {"display"}  # the scripted agent gives no input
    assert calls[2]["extra"]["changes"][0]["path"] == "notes.txt"
    results = calls_step["observation"]["results"]
    assert [r["source_call_id"] for r in results] == [c["tool_call_id"] for c in calls]
    assert results[0]["content"] == "harness-ok\n" and results[0]["extra"]["exit_code"] == 0
    assert answer["message"] == "All four tools ran." and "tool_calls" not in answer
    assert trajectory["extra"]["files_changed"] == ["notes.txt", "new.txt"]
    messages = openai_messages(_run(host, runs_dir, "tools"))["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "tool", "tool", "assistant"]
    assert messages[1]["content"] is None
    call = messages[1]["tool_calls"][0]
    assert call["type"] == "function" and json.loads(call["function"]["arguments"]) == {"command": "echo harness-ok"}
    assert messages[2] == {"role": "tool", "tool_call_id": call["id"], "content": "harness-ok\n"}
    edit = json.loads(messages[1]["tool_calls"][2]["function"]["arguments"])
    assert edit["path"] == "notes.txt" and edit["changes"][0]["diff"].startswith("--- a/notes.txt")


def test_an_error_is_a_system_step_with_the_harness_error(host: PluginHost, runs_dir: Path) -> None:
    trajectory = atif_trajectory(_run(host, runs_dir, "fail_500"))
    _check_shape(trajectory)
    error = trajectory["steps"][-1]
    assert error["source"] == "system" and error["message"].startswith("Error (model_error): ")
    assert error["extra"]["error"]["code"] == "model_error"
    assert sum(s["source"] == "system" for s in trajectory["steps"]) == 1, "the event's error is not repeated"
    assert trajectory["extra"]["status"] == "failed"
    assert trajectory["extra"]["runs"][0]["error"]["code"] == "model_error"
    assert [m["role"] for m in messages_from_trajectory(trajectory)["messages"]] == ["user"]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
def test_a_sessions_two_turns_are_one_trajectory(host: PluginHost, runs_dir: Path, anyio_backend: str) -> None:
    async def two_turns() -> list[HarnessEvent]:
        logs: list[Path] = []
        async with open_session(SessionSpec(provider_options={"scenario": "say"}), "scripted", host=host,
                                runs_dir=runs_dir) as session:
            for prompt in ("first", "second"):
                with anyio.fail_after(30):
                    async with session.turn(prompt) as live:
                        _ = [event async for event in live]
                assert live.log_path is not None
                logs.append(live.log_path)
        return [*read_events(logs[1]), *read_events(logs[0])]

    events = anyio.run(two_turns, backend=anyio_backend)
    trajectory = atif_trajectory(events)  # the second turn's events first: turns are put in order
    _check_shape(trajectory)
    started = [e for e in events if isinstance(e, RunStarted)]
    assert started[0].session_turn is not None
    assert trajectory["session_id"] == started[0].session_turn.session
    assert _sources(trajectory) == ["user", "agent", "user", "agent"]
    assert [s["message"] for s in trajectory["steps"] if s["source"] == "user"] == ["first", "second"]
    assert [s["extra"]["turn"] for s in trajectory["steps"] if s["source"] == "user"] == [0, 1]
    assert [r["turn"] for r in trajectory["extra"]["runs"]] == [0, 1]
    assert trajectory["final_metrics"]["total_completion_tokens"] == 40


# --- hand-made streams --------------------------------------------------------------------------------------

_SHELL = HarnessToolDetails(kind=ToolKind.SHELL, title="Running command", command="ls")


def _stamped(*events: HarnessEvent, run_id: str = "r1") -> list[HarnessEvent]:
    return [e.model_copy(update={"run_id": run_id, "seq": n, "ts": 1_800_000_000.0 + n})
            for n, e in enumerate(events)]


def _started(**fields: Any) -> RunStarted:
    return RunStarted(provider="p", provider_version="2.0", cli_version="9.9.9", spec={"prompt": "go"}, **fields)


def test_usage_is_split_by_step_and_the_results_rest_goes_to_the_last_step() -> None:
    done = Done(result=HarnessResult(status=RunStatus.SUCCESS, usage=Usage(
        input_tokens=300, cached_input_tokens=50, output_tokens=40, reasoning_tokens=5, cost_usd=0.25)))
    trajectory = atif_trajectory(_stamped(
        _started(),
        SessionStarted(session_id="agent-1", model="reported-model"),
        ReasoningDelta(text="plan"),
        ToolUse(tool_id="t1", name="shell", display=_SHELL, input={"cmd": "ls"}),
        ContextUsage(usage=Usage(input_tokens=100, cached_input_tokens=50, output_tokens=10)),
        ContextUsage(usage=Usage(input_tokens=900, output_tokens=900), cumulative=True),
        ToolResult(tool_id="t1", name="shell", display=_SHELL.model_copy(update={"status": ToolStatus.COMPLETED}),
                   output="a\nb\n"),
        TextDelta(text="done", item_id="m1"),
        TextDelta(text="also", item_id="m2"),
        ContextUsage(usage=Usage(input_tokens=300, cached_input_tokens=50, output_tokens=35)),
        done,
    ))
    _check_shape(trajectory)
    assert trajectory["agent"] == {"name": "p", "version": "9.9.9", "model_name": "reported-model",
                                   "extra": {"provider_version": "2.0"}}
    first, second = trajectory["steps"][1:]
    assert first["reasoning_content"] == "plan" and first["tool_calls"][0]["arguments"] == {"cmd": "ls"}
    assert first["metrics"] == {"prompt_tokens": 100, "completion_tokens": 10, "cached_tokens": 50}
    assert second["message"] == "done\n\nalso"
    assert second["metrics"] == {"prompt_tokens": 200, "completion_tokens": 30, "cached_tokens": 0,
                                 "cost_usd": 0.25, "extra": {"reasoning_tokens": 5}}
    assert trajectory["final_metrics"] == {
        "total_prompt_tokens": 300, "total_completion_tokens": 40, "total_cached_tokens": 50,
        "total_cost_usd": 0.25, "total_steps": 3, "extra": {"duration_ms": 0, "reasoning_tokens": 5}}


def test_approvals_results_without_calls_and_a_results_own_error() -> None:
    request = ApprovalRequested(request_id="q1", tool_id="t1", display=_SHELL)
    failed = ErrorInfo(code="process_exited", message="the agent exited (status 1)")
    trajectory = atif_trajectory(_stamped(
        _started(session_turn=SessionTurn(session="s1", index=0, live=False)),
        ToolUse(tool_id="t1", name="shell", display=_SHELL),
        request,
        ApprovalResolved(request_id="q1", decision=ApprovalDecision.DENY, decided_by="hook", reason="no"),
        ToolResult(tool_id="t1", name="shell", display=_SHELL.model_copy(update={"status": ToolStatus.DECLINED}),
                   is_error=True),
        ToolResult(tool_id="t2", name="read", display=HarnessToolDetails(kind=ToolKind.READ, title="Reading file",
                                                                          path="a.txt", summary="3 lines")),
        Done(result=HarnessResult(status=RunStatus.FAILED, error=failed)),
    ))
    _check_shape(trajectory)
    assert trajectory["session_id"] == "r1", "one turn alone is its run"
    step = trajectory["steps"][1]
    first, second = step["tool_calls"]
    assert first["arguments"] == {"command": "ls"}
    assert first["extra"]["approval"] == {"decision": "deny", "decided_by": "hook", "reason": "no"}
    assert second == {"tool_call_id": "t2", "function_name": "read", "arguments": {"path": "a.txt"},
                      "extra": {"kind": "read", "title": "Reading file", "arguments_from": "display"}}
    declined, read = step["observation"]["results"]
    assert declined["extra"]["status"] == "declined" and declined["extra"]["is_error"] is True
    assert read["content"] == "3 lines"
    assert trajectory["steps"][-1]["extra"]["error"]["code"] == "process_exited"
    tool_messages = [m for m in messages_from_trajectory(trajectory)["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == ["", "3 lines"]


def test_rebuilt_arguments_are_marked_and_a_training_set_gets_no_patch_call_without_its_patch() -> None:
    """A provider that names an edit `{"path", "kind"}` (its mapping's, not the agent's patch), or gives no input:
    marked; a diff the call announced goes into the chat arguments, an edit without one is left out unless kept; an
    agent's own input is as it is."""
    diff = "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    edit = HarnessToolDetails(kind=ToolKind.EDIT, title="Editing file", path="a.py",
                              changes=(FileChange(path="a.py", kind="modify", diff=diff),))
    blind = HarnessToolDetails(kind=ToolKind.EDIT, title="Editing file", path="b.py",
                               changes=(FileChange(path="b.py", kind="modify"),))  # the item had no diff
    write = HarnessToolDetails(kind=ToolKind.WRITE, title="Writing file", path="c.py")
    done = {"status": ToolStatus.COMPLETED}
    trajectory = atif_trajectory(_stamped(
        _started(),
        ToolUse(tool_id="p1", name="apply_patch", display=edit, input={"path": "a.py", "kind": "update"}),
        ToolResult(tool_id="p1", name="apply_patch", display=edit.model_copy(update=done), output="ok"),
        ToolUse(tool_id="s1", name="shell", display=_SHELL),
        ToolUse(tool_id="s1", name="shell", display=_SHELL, input={"command": ["bash", "-lc", "ls"]}),
        ToolResult(tool_id="s1", name="shell", display=_SHELL.model_copy(update=done), output="a.py\n"),
        TextDelta(text="now b"),
        ToolUse(tool_id="p2", name="apply_patch", display=blind, input={"path": "b.py", "kind": "update"}),
        ToolResult(tool_id="p2", name="apply_patch", display=blind.model_copy(update=done), output="ok"),
        ReasoningDelta(text="and c"),
        ToolUse(tool_id="w1", name="Write", display=write, input={"file_path": "c.py", "content": "y = 1\n"}),
        ToolUse(tool_id="w2", name="write", display=write),
        ToolResult(tool_id="w1", name="Write", display=write.model_copy(update=done), output="written"),
        ToolResult(tool_id="w2", name="write", display=write.model_copy(update=done), output="written"),
        Done(result=HarnessResult(status=RunStatus.SUCCESS)),
    ))
    _check_shape(trajectory)
    calls = {c["tool_call_id"]: c for step in trajectory["steps"] for c in step.get("tool_calls", [])}
    assert calls["p1"]["arguments"] == {"path": "a.py", "kind": "update"}
    assert calls["p1"]["extra"]["arguments_from"] == "display" and calls["p1"]["extra"]["changes"][0]["diff"] == diff
    assert calls["s1"]["arguments"] == {"command": ["bash", "-lc", "ls"]}  # the agent's input came: no longer marked
    assert "arguments_from" not in calls["s1"]["extra"] and "arguments_from" not in calls["w1"]["extra"]
    assert calls["p2"]["extra"]["arguments_from"] == "display" and calls["w2"]["arguments"] == {"path": "c.py"}

    def chat(**options: bool) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        messages = messages_from_trajectory(trajectory, **options)["messages"]
        found = {c["id"]: json.loads(c["function"]["arguments"]) for m in messages for c in m.get("tool_calls", [])}
        return found, messages

    found, messages = chat()
    assert found == {"p1": {"path": "a.py", "kind": "update",
                            "changes": [{"path": "a.py", "kind": "modify", "diff": diff}]},
                     "s1": {"command": ["bash", "-lc", "ls"]},
                     "w1": {"file_path": "c.py", "content": "y = 1\n"}}
    assert [m.get("tool_call_id") for m in messages if m["role"] == "tool"] == ["p1", "s1", "w1"]
    assert [m["content"] for m in messages if m["role"] == "assistant"] == [None, "now b", None]
    assert "tool_calls" not in messages[-3]  # "now b": its only call, a patch without its patch, is left out
    found, messages = chat(drop_reconstructed=False, reasoning=True)
    assert found["p2"] == {"path": "b.py", "kind": "update"} and found["w2"] == {"path": "c.py"}
    assert [m.get("tool_call_id") for m in messages if m["role"] == "tool"] == ["p1", "s1", "p2", "w1", "w2"]


def test_a_log_with_no_events_is_refused_and_one_without_output_still_has_a_step() -> None:
    with pytest.raises(ValueError, match="empty"):
        atif_trajectory([])
    trajectory = atif_trajectory(_stamped(Done(result=HarnessResult(status=RunStatus.INTERRUPTED))))
    _check_shape(trajectory)
    assert trajectory["agent"]["name"] == "unknown" and trajectory["extra"]["status"] == "interrupted"
