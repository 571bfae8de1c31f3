"""A fake `claude` CLI speaking `claude -p` bidirectional stream-json for a `Scenario` (no model, no Node).

Layer: testing. Knows the stream-json line shapes of Claude Code 2.1.328 (copied from recorded real
transcripts; `providers/claude/tests/test_fake_shapes.py` checks them against the recordings so the fake
cannot drift) and the scenario vocabulary; knows nothing of Harness providers or events. Stdlib only.

Run as `python -m harness_claude.testing.fake ARGS` (or through `write_fake_claude(dir)`):
- `--version` prints `2.1.328 (Claude Code)`, or `$HARNESS_FAKE_CLAUDE_VERSION`.
- The scenario is named by the prompt (`SCENARIO:<name>`) or `$HARNESS_FAKE_CLAUDE_SCENARIO` (default `say`).
- `--permission-prompt-tool stdio` makes tool steps ask with `can_use_tool` control requests (Bash unless in
  `--allowedTools`; Write/Edit unless `--permission-mode acceptEdits`); without it, or with
  `--permission-prompts none`, those steps are denied automatically (`system/permission_denied`). `--tools`
  sets the tools that exist (in `system/init` too) and `--disallowedTools` refuses tools; `--resume ID` keeps
  the session id; the `interrupt` control request stops the turn like the real CLI.
- `$HARNESS_FAKE_CLAUDE_CRASH=1`: write to stderr and exit 3 in the middle of the turn.
Tool steps are simulated: a command running `sleep N` (alone or in a `;`/`&&` list, e.g. `echo waiting; sleep 30`,
which the real CLI runs while it blocks a leading long `sleep`) takes N seconds (interruptible); commands touch
nothing, but allowed or approved Write/Edit steps really change files inside the cwd (`apply_file_step`).
"""

from __future__ import annotations

import json
import os
import queue
import re
import shlex
import stat
import sys
import threading
import time
import uuid
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness_core.offline.scenarios import (
    SCENARIOS,
    EditFile,
    Fail,
    ReadFile,
    RunCommand,
    Say,
    Scenario,
    Stall,
    Step,
    TakeLong,
    Think,
    WriteFile,
    apply_file_step,
)

__all__ = ["VERSION", "main", "write_fake_claude"]

VERSION = "2.1.328"
MODEL = "claude-opus-5-5"
_USAGE = {
    "input_tokens": 100,
    "output_tokens": 1,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
}
DEFAULT_TOOLS = (
    "Task", "Bash", "CronCreate", "CronDelete", "CronList", "Edit", "EnterWorktree", "ExitWorktree",
    "ListAgents", "Monitor", "NotebookEdit", "Read", "ReportFindings", "ScheduleWakeup", "SendMessage", "Skill",
    "TaskCreate", "TaskGet", "TaskList", "TaskStop", "TaskUpdate", "ToolSearch", "WebFetch", "WebSearch",
    "Workflow", "Write",
)  # fmt: skip
"""`system/init.tools` of 2.1.328 without `--tools` (recorded, permission mode default)."""
KNOWN_TOOLS = frozenset((*DEFAULT_TOOLS, "Glob", "Grep"))
"""Built-in tools `--tools` can name (Glob and Grep exist only when named); other names are ignored."""
_INTERRUPT = object()
_SLEEP = re.compile(r"(?:^|[;&|]\s*)sleep (\d+(?:\.\d+)?)\b")
_INIT_EXTRA: dict[str, Any] = {
    "additional_directories": [],
    "analytics_disabled": True,
    "capabilities": [],
    "fast_mode_state": "off",
    "fast_mode_disabled_reason": "sdk_opt_in_required",
    "per_turn_effort_active": True,
    "product_feedback_disabled": True,
    "terminal_slash_commands": [],
    "ultrathink_available": False,
    "ultrathink_typed_raises": False,
    "view_mode": "default",
}
_RESULT_EXTRA: dict[str, Any] = {
    "fast_mode_state": "off",
    "fast_mode_disabled_reason": "sdk_opt_in_required",
    "queued_turn_count": 0,
    "result_index": 0,
    "safety_stops": 0,
    "subagent_stats": {},
    "model_usage_since_last_result": {},
}


def write_fake_claude(
    directory: str | Path, name: str = "claude", *, env: Mapping[str, str] | None = None
) -> Path:
    """Write an executable `claude` wrapper running this fake with the current interpreter; return its path
    (for `-o claude_bin=PATH`). `env` is baked into the wrapper (e.g. `HARNESS_FAKE_CLAUDE_VERSION`, which
    must hold for the `--version` probe too, where a run's environment does not reach)."""
    path = Path(directory) / name
    exports = "".join(f"export {key}={shlex.quote(value)}\n" for key, value in (env or {}).items())
    path.write_text(f'#!/bin/sh\n{exports}exec "{sys.executable}" -m harness_claude.testing.fake "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


class _Fake:
    def __init__(self, argv: list[str]) -> None:
        self.args = argv
        self.session = self._opt("--resume") or str(uuid.uuid4())
        self.cwd = os.getcwd()
        # `--permission-prompts none` wins over a prompt tool (2.1.328): nobody is asked, anything that
        # would prompt is denied; without a prompt tool `claude -p` denies the same way
        self.prompt_tool = (
            self._opt("--permission-prompt-tool") == "stdio" and self._opt("--permission-prompts") != "none"
        )
        allowed = self._opt("--allowedTools") or ""
        self.allowed = {t.strip() for t in allowed.split(",") if t.strip()}
        self.mode = self._opt("--permission-mode") or "default"
        denied = self._opt("--disallowedTools") or ""
        self.denied = {t.strip() for t in denied.split(",") if t.strip()}
        only = self._opt("--tools")
        self.tools = (
            list(DEFAULT_TOOLS)
            if only is None or only == "default"
            else sorted({t.strip() for t in only.split(",") if t.strip() in KNOWN_TOOLS})
        )
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.responses: dict[str, dict[str, Any]] = {}
        self.interrupted = False
        self.msg_no = 0
        self.tool_no = 0
        self.turns = 0
        self.out_tokens = 0

    def _opt(self, name: str) -> str | None:
        if name in self.args:
            i = self.args.index(name)
            return self.args[i + 1] if i + 1 < len(self.args) else None
        return None

    # --- output -------------------------------------------------------------------------------------

    def emit(self, obj: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    def base(self) -> dict[str, Any]:
        return {"session_id": self.session, "uuid": str(uuid.uuid4())}

    def stream(self, mid: str, event: dict[str, Any], **extra: Any) -> None:
        self.emit(
            {
                "type": "stream_event",
                "event": event,
                **self.base(),
                "parent_tool_use_id": None,
                "api_message_id": mid,
                **extra,
            }
        )

    def assistant(self, mid: str, block: dict[str, Any], **extra: Any) -> None:
        message = {
            "id": mid,
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [block],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": _USAGE,
            "context_management": None,
        }
        self.emit(
            {
                "type": "assistant",
                "message": message,
                "parent_tool_use_id": None,
                **self.base(),
                "timestamp": _now(),
                **extra,
            }
        )

    def user(self, content: list[dict[str, Any]], **extra: Any) -> None:
        self.emit(
            {
                "type": "user",
                "message": {"role": "user", "content": content},
                "parent_tool_use_id": None,
                **self.base(),
                "timestamp": _now(),
                **extra,
            }
        )

    # --- input --------------------------------------------------------------------------------------

    def _read_stdin(self) -> None:
        for line in sys.stdin:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if msg.get("type") == "control_request" and msg.get("request", {}).get("subtype") == "interrupt":
                self.interrupted = True
                self.emit(
                    {
                        "type": "control_response",
                        "response": {
                            "subtype": "success",
                            "request_id": msg.get("request_id"),
                            "response": {"still_queued": []},
                        },
                    }
                )
            self.inbox.put(msg)
        self.inbox.put(None)

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; False if an interrupt arrived."""
        deadline = time.monotonic() + seconds
        while not self.interrupted and time.monotonic() < deadline:
            time.sleep(min(0.02, max(deadline - time.monotonic(), 0)))
        return not self.interrupted

    def ask(self, name: str, tool_input: dict[str, Any], tool_id: str) -> dict[str, Any] | None:
        request_id = str(uuid.uuid4())
        self.emit(
            {
                "type": "control_request",
                "request_id": request_id,
                "request": {
                    "subtype": "can_use_tool",
                    "tool_name": name,
                    "display_name": name,
                    "input": tool_input,
                    "description": tool_input.get("description", name),
                    "permission_suggestions": [],
                    "tool_use_id": tool_id,
                    "blocked_path": self.cwd,
                },
            }
        )
        while not self.interrupted:
            try:
                msg = self.inbox.get(timeout=0.02)
            except queue.Empty:
                continue
            if msg is None:
                return None
            resp = msg.get("response", {}) if msg.get("type") == "control_response" else {}
            if resp.get("request_id") == request_id:
                return dict(resp.get("response") or {})
        return None

    # --- the turn -----------------------------------------------------------------------------------

    def run(self) -> int:
        if "--version" in self.args:
            print(f"{os.environ.get('HARNESS_FAKE_CLAUDE_VERSION', VERSION)} (Claude Code)")
            return 0
        threading.Thread(target=self._read_stdin, daemon=True).start()
        first = self.inbox.get()
        if first is None:
            return 0
        content = first.get("message", {}).get("content", "")
        text = (
            content
            if isinstance(content, str)
            else " ".join(b.get("text", "") for b in content if isinstance(b, dict))
        )
        name = (
            text.split("SCENARIO:", 1)[1].split()[0]
            if "SCENARIO:" in text
            else os.environ.get("HARNESS_FAKE_CLAUDE_SCENARIO", "say")
        )
        scenario = SCENARIOS.get(name) or Scenario(name, (Say(f"echo: {text}"),))
        self.emit(
            {
                "type": "system",
                "subtype": "init",
                "cwd": self.cwd,
                **self.base(),
                "tools": self.tools,
                "mcp_servers": [],
                "model": MODEL,
                "permissionMode": self.mode,
                "slash_commands": [],
                "apiKeySource": "ANTHROPIC_API_KEY",
                "claude_code_version": VERSION,
                "output_style": "default",
                "agents": [],
                "skills": [],
                "plugins": [],
                "original_cwd": self.cwd,
                "memory_paths": {},
                "messaging_socket_path": "",
                **_INIT_EXTRA,
            }
        )
        code = self.play(scenario)
        while self.inbox.get() is not None:  # like the real CLI: stay until stdin closes
            pass
        return code

    def play(self, scenario: Scenario) -> int:
        start = time.monotonic()
        final = ""
        thinking: list[str] = []
        for step in scenario.steps:
            if isinstance(step, Think):
                thinking.append(step.text)
                continue
            if isinstance(step, TakeLong) and not self.wait(step.seconds):
                return self.result_interrupted(start, "aborted_streaming")
            if isinstance(step, Stall):
                self.wait(step.seconds)
                return self.result_interrupted(start, "aborted_streaming")
            if isinstance(step, Fail):
                return self.result_error(start, step)
            self.emit({"type": "system", "subtype": "status", "status": "requesting", **self.base()})
            outcome = self.respond(step, thinking)
            thinking = []
            if outcome is _INTERRUPT:
                return self.result_interrupted(
                    start, "aborted_tools" if not isinstance(step, Say) else "aborted_streaming"
                )
            if isinstance(step, Say):
                final = step.text
        self.result(
            start,
            "success",
            is_error=False,
            result=final,
            terminal_reason="completed",
            api_error_status=None,
            ttft_ms=10,
            ttft_stream_ms=10,
            time_to_request_ms=5,
        )
        return 0

    def respond(self, step: Step, thinking: list[str]) -> object:
        mid = f"msg_fake_{self.msg_no:04d}"
        self.msg_no += 1
        self.turns += 1
        self.stream(
            mid,
            {
                "type": "message_start",
                "message": {
                    "id": mid,
                    "type": "message",
                    "role": "assistant",
                    "model": MODEL,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": _USAGE,
                },
            },
            ttft_ms=10,
            thinking_display="updates",
        )
        index = 0
        for thought in thinking:
            self.stream(
                mid,
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                },
            )
            self.stream(
                mid,
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "thinking_delta", "thinking": thought},
                },
            )
            self.assistant(
                mid,
                {"type": "thinking", "thinking": thought, "signature": "sig"},
                thinking_duration_ms=1,
                thinking_display="updates",
            )
            self.stream(mid, {"type": "content_block_stop", "index": index})
            index += 1
        if isinstance(step, Say):
            return self.say(mid, index, step)
        return self.tool(mid, index, step)

    def say(self, mid: str, index: int, step: Say) -> object:
        self.stream(
            mid,
            {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
        )
        size = max(1, -(-len(step.text) // max(step.chunks, 1)))
        sent = ""
        for i in range(0, len(step.text), size):
            if i and (not self.wait(step.delay) or os.environ.get("HARNESS_FAKE_CLAUDE_CRASH")):
                if not self.interrupted:
                    sys.stderr.write("fatal: simulated crash of the fake claude\n")
                    sys.stderr.flush()
                    os._exit(3)
                self.assistant(mid, {"type": "text", "text": sent}, aborted=True)
                self.user([{"type": "text", "text": "[Request interrupted by user]"}])
                return _INTERRUPT
            piece = step.text[i : i + size]
            sent += piece
            self.stream(
                mid,
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": piece},
                },
            )
        self.assistant(mid, {"type": "text", "text": step.text})
        self.finish_message(mid, index, "end_turn")
        return None

    def finish_message(self, mid: str, index: int, stop: str) -> None:
        self.out_tokens += 20
        self.stream(mid, {"type": "content_block_stop", "index": index})
        self.stream(
            mid,
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 20},
            },
        )
        self.stream(mid, {"type": "message_stop"})

    def tool(self, mid: str, index: int, step: Step) -> object:
        name, tool_input, output = _tool_call(step, self.cwd)
        tool_id = f"toolu_fake_{self.tool_no:04d}"
        self.tool_no += 1
        self.stream(
            mid,
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "tool_use", "id": tool_id, "name": name, "input": {}},
            },
        )
        self.stream(
            mid,
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": json.dumps(tool_input)},
            },
        )
        self.assistant(mid, {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
        self.finish_message(mid, index, "tool_use")
        meta: dict[str, Any] = {
            "id": tool_id,
            "permission_decision": {"decision": "accept", "source": "config"},
        }
        if name in self.denied or name not in self.tools:
            # 2.1.328's words for a tool left out by --tools or refused by --disallowedTools
            why = f"No such tool available: {name}. {name} is disabled for this session, in subagents as well as here."
            self.user(
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": tool_id,
                        "is_error": True,
                        "content": f"<tool_use_error>Error: {why}</tool_use_error>",
                    }
                ],
                tool_use_result=f"Error: {why}",
            )
            return None
        needs = (name == "Bash" and name not in self.allowed) or (
            name in ("Write", "Edit") and self.mode != "acceptEdits"
        )
        if needs and self.mode != "bypassPermissions" and not self.prompt_tool:
            return self.denied_automatically(name, tool_id)
        if needs and self.mode != "bypassPermissions":
            answer = self.ask(name, tool_input, tool_id)
            if answer is None:
                return self.tool_interrupted(tool_id)
            if answer.get("behavior") != "allow":
                message = str(answer.get("message") or "denied")
                self.user(
                    [{"type": "tool_result", "content": message, "is_error": True, "tool_use_id": tool_id}],
                    tool_use_result=f"Error: {message}",
                    tool_result_meta=[
                        {
                            "id": tool_id,
                            "non_execution_kind": "permission-rule",
                            "permission_decision": {"decision": "reject", "source": "user_reject"},
                        }
                    ],
                )
                return _INTERRUPT if answer.get("interrupt") else None
        if isinstance(step, (WriteFile, EditFile)):
            apply_file_step(step, self.cwd)  # allowed or approved: the edit really changes the cwd
        sleeps = _SLEEP.search(step.command) if isinstance(step, RunCommand) else None
        if sleeps and not self.wait(float(sleeps.group(1))):
            return self.tool_interrupted(tool_id)
        is_error = isinstance(step, RunCommand) and step.exit_code != 0
        content = f"Exit code {step.exit_code}\n{output}" if is_error else output  # type: ignore[union-attr]
        rich = {
            "stdout": output,
            "stderr": "",
            "interrupted": False,
            "isImage": False,
            "noOutputExpected": False,
        }
        self.user(
            [{"tool_use_id": tool_id, "type": "tool_result", "content": content, "is_error": is_error}],
            tool_use_result=rich,
            tool_result_meta=[meta],
        )
        return None

    def denied_automatically(self, name: str, tool_id: str) -> object:
        """A permission nobody can answer (no prompt tool, or `--permission-prompts none`), as 2.1.328 says it."""
        message = (
            "Permission for this tool use was denied. It requires approval, and this session has no approval "
            "surface — nobody can answer a permission prompt here — so it was denied automatically. The action "
            f"was NOT performed; do not claim it succeeded, and do not retry it. What required approval: {name}."
        )
        self.emit(
            {
                "type": "system",
                "subtype": "permission_denied",
                "tool_name": name,
                "tool_use_id": tool_id,
                "decision_reason_type": "asyncAgent",
                "decision_reason": "no approval surface in this session; permission request denied automatically",
                "message": message,
                **self.base(),
            }
        )
        self.user(
            [{"type": "tool_result", "content": message, "is_error": True, "tool_use_id": tool_id}],
            tool_use_result=f"Error: {message}",
            tool_result_meta=[
                {
                    "id": tool_id,
                    "non_execution_kind": "permission-rule",
                    "permission_decision": {"decision": "reject", "source": "config", "reason_type": "asyncAgent"},
                }
            ],
        )
        return None

    def tool_interrupted(self, tool_id: str) -> object:
        self.user(
            [
                {
                    "type": "tool_result",
                    "content": "The user doesn't want to proceed with this tool use.",
                    "is_error": True,
                    "tool_use_id": tool_id,
                }
            ],
            tool_use_result="User rejected tool use",
            tool_result_meta=[{"id": tool_id, "non_execution_kind": "user-rejected"}],
        )
        self.user([{"type": "text", "text": "[Request interrupted by user for tool use]"}])
        return _INTERRUPT

    # --- results ------------------------------------------------------------------------------------

    def result(self, start: float, subtype: str, **fields: Any) -> None:
        usage = {
            "input_tokens": 100 * max(self.turns, 1),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": self.out_tokens,
            "output_tokens_details": {"thinking_tokens": 0},
        }
        cost = round(0.0004 * max(self.turns, 1), 6)
        self.emit(
            {
                "type": "result",
                "subtype": subtype,
                "duration_ms": int((time.monotonic() - start) * 1000),
                "duration_api_ms": 10,
                "num_turns": self.turns + 1,
                "stop_reason": "end_turn",
                "session_id": self.session,
                "total_cost_usd": cost,
                "usage": usage,
                "modelUsage": {
                    MODEL: {
                        "inputTokens": usage["input_tokens"],
                        "outputTokens": self.out_tokens,
                        "costUSD": cost,
                        "contextWindow": 1000000,
                    }
                },
                "permission_denials": [],
                "uuid": str(uuid.uuid4()),
                **_RESULT_EXTRA,
                **fields,
            }
        )

    def result_interrupted(self, start: float, reason: str) -> int:
        self.result(
            start,
            "error_during_execution",
            is_error=True,
            terminal_reason=reason,
            errors=[f"[ede_diagnostic] result_type=user stop_reason={reason}"],
        )
        return 0

    def result_error(self, start: float, step: Fail) -> int:
        text = f"API Error: {step.status} {step.message}"
        message = {
            "id": str(uuid.uuid4()),
            "model": "<synthetic>",
            "stop_sequence": "",
            "context_management": None,
            "role": "assistant",
            "type": "message",
            "stop_reason": "stop_sequence",
            "usage": _USAGE,
            "content": [{"type": "text", "text": text}],
        }
        self.emit(
            {
                "type": "assistant",
                "message": message,
                "parent_tool_use_id": None,
                **self.base(),
                "timestamp": _now(),
                "error": "unknown",
                "is_api_error_message": True,
                "api_error_status": step.status,
            }
        )
        self.result(
            start,
            "success",
            is_error=True,
            result=text,
            api_error_status=step.status,
            api_error_type="api_error",
            terminal_reason="api_error",
        )
        return 1


def _tool_call(step: Step, cwd: str) -> tuple[str, dict[str, Any], str]:
    def absolute(path: str) -> str:
        return path if path.startswith("/") else f"{cwd}/{path}"

    if isinstance(step, RunCommand):
        return "Bash", {"command": step.command, "description": "Run a scripted command"}, step.output
    if isinstance(step, ReadFile):
        lines = step.content.splitlines() or [""]
        return (
            "Read",
            {"file_path": absolute(step.path)},
            "\n".join(f"{i}\t{x}" for i, x in enumerate(lines, 1)),
        )
    if isinstance(step, WriteFile):
        return (
            "Write",
            {"file_path": absolute(step.path), "content": step.content},
            (f"File created successfully at: {absolute(step.path)}"),
        )
    assert isinstance(step, EditFile)
    return (
        "Edit",
        {
            "replace_all": False,
            "file_path": absolute(step.path),
            "old_string": step.old,
            "new_string": step.new,
        },
        f"The file {absolute(step.path)} has been updated successfully.",
    )


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def main(argv: list[str] | None = None) -> int:
    return _Fake(sys.argv[1:] if argv is None else argv).run()


if __name__ == "__main__":
    sys.exit(main())
