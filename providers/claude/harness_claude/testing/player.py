"""The fake `claude`'s turn: a `Scenario` played as Claude Code 2.1.328 plays a model's answers.

Layer: testing (fake CLI). Knows the scenario vocabulary, what the permission flags decide (which tool
calls exist, run, are refused, denied automatically or asked about with `can_use_tool`) and the order of
Claude Code's lines in a turn; the lines themselves come from `shapes`, the pipes from `control`. Knows
nothing of Harness providers or events. Stdlib only (plus the scenarios).

Tool steps are simulated: a command's `sleep N` parts (`echo waiting; sleep 30`) take N seconds
(interruptible), a real `sleep` running meanwhile in a session of its own (`command_process`), as a command
Claude Code runs would; commands touch nothing, but allowed or approved Write/Edit steps really change files inside
the cwd (`apply_file_step`). `crash=True` writes to stderr and exits 3 in the middle of the turn: while a
text answer streams (after its first chunk), or else just before the `result` line.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from harness_core.scripted.command import command_process
from harness_core.scripted.scenarios import (
    TOOL_RESULT,
    CallMcpTool,
    EditFile,
    Fail,
    ReportAttachments,
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

from harness_claude.testing import shapes
from harness_claude.testing.control import Wire

__all__ = ["Flags", "Player"]


def _option(argv: Sequence[str], name: str) -> str | None:
    if name in argv:
        i = list(argv).index(name)
        return argv[i + 1] if i + 1 < len(argv) else None
    return None


def _names(value: str | None) -> frozenset[str]:
    return frozenset(t.strip() for t in (value or "").split(",") if t.strip())


@dataclass(frozen=True)
class Flags:
    """What the command line says about the session, its tools and its permissions."""

    resume: str | None = None
    prompt_tool: bool = False
    """Permission questions become `can_use_tool` requests (else they are denied automatically)."""
    mode: str = "default"
    allowed: frozenset[str] = frozenset()
    denied: frozenset[str] = frozenset()
    tools: tuple[str, ...] = shapes.DEFAULT_TOOLS
    model: str = shapes.MODEL
    json_schema: bool = False
    max_turns: int | None = None
    max_budget: float | None = None

    @classmethod
    def parse(cls, argv: Sequence[str]) -> Flags:
        only = _option(argv, "--tools")
        turns, budget = _option(argv, "--max-turns"), _option(argv, "--max-budget-usd")
        return cls(
            model=_option(argv, "--model") or shapes.MODEL,
            json_schema=_option(argv, "--json-schema") is not None,
            max_turns=int(turns) if turns else None,
            max_budget=float(budget) if budget else None,
            resume=_option(argv, "--resume"),
            # `--permission-prompts none` wins over a prompt tool (2.1.328): nobody is asked, anything that
            # would prompt is denied; without a prompt tool `claude -p` denies the same way
            prompt_tool=_option(argv, "--permission-prompt-tool") == "stdio"
            and _option(argv, "--permission-prompts") != "none",
            mode=_option(argv, "--permission-mode") or "default",
            allowed=_names(_option(argv, "--allowedTools")),
            denied=_names(_option(argv, "--disallowedTools")),
            tools=shapes.DEFAULT_TOOLS
            if only is None or only == "default"
            else tuple(sorted(_names(only) & shapes.KNOWN_TOOLS)),
        )


class _Stopped(Exception):
    """A native limit (`--max-turns`, `--max-budget-usd`) ended the turn: its result subtype and error."""

    def __init__(self, subtype: str, said: str) -> None:
        super().__init__(said)
        self.subtype, self.said = subtype, said


class _Interrupted(Exception):
    """The turn was stopped (an interrupt, or a denial that asked to stop); the result line says how."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Player:
    """Plays one scenario as one turn on `wire`; `play` returns the process exit status. On one process it plays
    one turn per user message: `flags` (the model, the permission mode) change with control requests."""

    def __init__(self, flags: Flags, wire: Wire, *, cwd: str, crash: bool = False) -> None:
        self.flags, self.wire, self.cwd, self.crash = flags, wire, cwd, crash
        self.cost = 0.0
        """What the process's earlier turns cost (`total_cost_usd` is the process's)."""
        self.session = flags.resume or str(uuid.uuid4())
        self.msg_no = 0
        self.tool_no = 0
        self.turns = 0
        self.out_tokens = 0
        self._start = time.monotonic()
        self.attachments: list[tuple[str, int]] = []
        """The media type and size of each image or document block of the latest user message."""
        self.results: list[str] = []
        """The MCP tool results reported so far (what `{tool_result}` quotes)."""

    def init(self) -> None:
        self.wire.emit(shapes.init(self.session, self.cwd, list(self.flags.tools), self.flags.mode, self.flags.model))

    def _limits(self, more: bool) -> None:
        """After a model call: over `--max-budget-usd` (the process's cost) or, with steps left, at `--max-turns`."""
        budget, most = self.flags.max_budget, self.flags.max_turns
        if budget is not None and self.cost + 0.0004 * self.turns > budget:
            raise _Stopped("error_max_budget_usd", f"Reached maximum budget (${budget:g})")
        if more and most is not None and self.turns >= most:
            raise _Stopped("error_max_turns", f"Reached maximum number of turns ({most})")

    def play(self, scenario: Scenario) -> int:
        self._start = time.monotonic()
        self.turns = self.out_tokens = 0
        self.wire.reset()
        final = ""
        thinking: list[str] = []
        try:
            if self.flags.max_budget is not None and self.cost > self.flags.max_budget:
                raise _Stopped("error_max_budget_usd", f"Reached maximum budget (${self.flags.max_budget:g})")
            for n, step in enumerate(scenario.steps):
                if isinstance(step, ReportAttachments):  # what the prompt's image and document blocks carried
                    lines = [f"{mime} {size} bytes" for mime, size in self.attachments]
                    step = Say("\n".join(lines) or "no attachments", chunks=step.chunks)
                if isinstance(step, Say) and TOOL_RESULT in step.text:
                    said = self.results[-1] if self.results else "(no tool result)"
                    step = Say(step.text.replace(TOOL_RESULT, said), step.chunks, step.delay)
                if isinstance(step, Think):
                    thinking.append(step.text)
                elif isinstance(step, TakeLong):
                    if not self.wire.wait(step.seconds):
                        raise _Interrupted("aborted_streaming")
                elif isinstance(step, Stall):
                    self.wire.wait(step.seconds)
                    raise _Interrupted("aborted_streaming")
                elif isinstance(step, Fail):
                    return self._api_error(step)
                else:
                    self.wire.emit(shapes.status_requesting(self.session))
                    self._message(step, thinking)
                    thinking = []
                    if isinstance(step, Say):
                        final = step.text
                    self._limits(more=n + 1 < len(scenario.steps))
        except _Stopped as stop:
            self._result(stop.subtype, is_error=True, errors=[stop.said], terminal_reason="max_turns"
                         if stop.subtype == "error_max_turns" else "budget_exhausted")
            return 1
        except _Interrupted as stop:
            self._result(
                "error_during_execution",
                is_error=True,
                terminal_reason=stop.reason,
                errors=[f"[ede_diagnostic] result_type=user stop_reason={stop.reason}"],
            )
            return 0
        structured: dict[str, Any] = {}
        if self.flags.json_schema:  # as a model that calls StructuredOutput when its answer is JSON
            try:
                structured = {"structured_output": json.loads(final)}
                final = json.dumps(structured["structured_output"], separators=(",", ":"))
            except ValueError:
                pass  # 2.1.328 asks once more, then ends the turn with the text
        self._result(
            "success",
            is_error=False,
            result=final,
            **structured,
            terminal_reason="completed",
            api_error_status=None,
            ttft_ms=10,
            ttft_stream_ms=10,
            time_to_request_ms=5,
        )
        return 0

    # --- one model message ------------------------------------------------------------------------------

    def _stream(self, mid: str, event: dict[str, Any], **extra: Any) -> None:
        self.wire.emit(shapes.stream(self.session, mid, event, **extra))

    def _assistant(self, mid: str, block: dict[str, Any], **extra: Any) -> None:
        self.wire.emit(shapes.assistant(self.session, mid, block, **extra))

    def _user(self, content: list[dict[str, Any]], **extra: Any) -> None:
        self.wire.emit(shapes.user(self.session, content, **extra))

    def _message(self, step: Step, thinking: list[str]) -> None:
        mid = f"msg_fake_{self.msg_no:04d}"
        self.msg_no += 1
        self.turns += 1
        self._stream(mid, shapes.message_start(mid), ttft_ms=10, thinking_display="updates")
        for index, thought in enumerate(thinking):
            block = {"type": "thinking", "thinking": "", "signature": ""}
            self._stream(mid, {"type": "content_block_start", "index": index, "content_block": block})
            delta = {"type": "thinking_delta", "thinking": thought}
            self._stream(mid, {"type": "content_block_delta", "index": index, "delta": delta})
            full = {"type": "thinking", "thinking": thought, "signature": "sig"}
            self._assistant(mid, full, thinking_duration_ms=1, thinking_display="updates")
            self._stream(mid, {"type": "content_block_stop", "index": index})
        if isinstance(step, Say):
            self._say(mid, len(thinking), step)
        else:
            self._tool(mid, len(thinking), step)

    def _say(self, mid: str, index: int, step: Say) -> None:
        block = {"type": "text", "text": ""}
        self._stream(mid, {"type": "content_block_start", "index": index, "content_block": block})
        size = max(1, -(-len(step.text) // max(step.chunks, 1)))
        sent = ""
        for i in range(0, len(step.text), size):
            if i and (self.crash or not self.wire.wait(step.delay)):
                if not self.wire.interrupted:
                    self._die()
                self._assistant(mid, {"type": "text", "text": sent}, aborted=True)
                self._user([{"type": "text", "text": "[Request interrupted by user]"}])
                raise _Interrupted("aborted_streaming")
            piece = step.text[i : i + size]
            sent += piece
            delta = {"type": "text_delta", "text": piece}
            self._stream(mid, {"type": "content_block_delta", "index": index, "delta": delta})
        self._assistant(mid, {"type": "text", "text": step.text})
        self._finish_message(mid, index, "end_turn")

    def _finish_message(self, mid: str, index: int, stop: str) -> None:
        self.out_tokens += 20
        self._stream(mid, {"type": "content_block_stop", "index": index})
        delta = {"stop_reason": stop, "stop_sequence": None}
        self._stream(mid, {"type": "message_delta", "delta": delta, "usage": {"output_tokens": 20}})
        self._stream(mid, {"type": "message_stop"})

    # --- one tool call ----------------------------------------------------------------------------------

    def _tool(self, mid: str, index: int, step: Step) -> None:
        name, tool_input, output = shapes.tool_call(step, self.cwd)
        tool_id = f"toolu_fake_{self.tool_no:04d}"
        self.tool_no += 1
        block = {"type": "tool_use", "id": tool_id, "name": name, "input": {}}
        self._stream(mid, {"type": "content_block_start", "index": index, "content_block": block})
        delta = {"type": "input_json_delta", "partial_json": shapes.partial_json(tool_input)}
        self._stream(mid, {"type": "content_block_delta", "index": index, "delta": delta})
        self._assistant(mid, {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
        self._finish_message(mid, index, "tool_use")
        if isinstance(step, CallMcpTool):
            self.results.append(output)
        mcp = name.startswith("mcp__")
        denied = name in self.flags.denied or (mcp and any(name.startswith(d + "__") for d in self.flags.denied))
        if denied or (not mcp and name not in self.flags.tools):
            why = shapes.policy_refusal(name)
            error = shapes.tool_result(tool_id, f"<tool_use_error>Error: {why}</tool_use_error>", is_error=True)
            self._user([error], tool_use_result=f"Error: {why}")
            return
        if self._needs_permission(name, tool_input):
            if not self.flags.prompt_tool:
                self._denied_automatically(name, tool_id)
                return
            if not self._ask(name, tool_input, tool_id):
                return
        if isinstance(step, (WriteFile, EditFile)) and self._inside(tool_input):
            apply_file_step(step, self.cwd)  # allowed or approved: the edit really changes the cwd (never outside)
        content, is_error = output, False
        if isinstance(step, RunCommand):
            with command_process(step.command) as seconds:
                if seconds and not self.wire.wait(seconds):
                    self._tool_interrupted(tool_id)
            if step.exit_code != 0:
                content, is_error = f"Exit code {step.exit_code}\n{output}", True
        rich = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}
        meta = {"id": tool_id, "permission_decision": {"decision": "accept", "source": "config"}}
        result = shapes.tool_result(tool_id, content, is_error=is_error)
        self._user([result], tool_use_result=rich, tool_result_meta=[meta])

    def _needs_permission(self, name: str, tool_input: dict[str, Any]) -> bool:
        if self.flags.mode == "bypassPermissions":
            return False
        if name == "Bash":
            return name not in self.flags.allowed
        # acceptEdits accepts edits inside the working directory only, as 2.1.328's
        return name in ("Write", "Edit") and (self.flags.mode != "acceptEdits" or not self._inside(tool_input))

    def _inside(self, tool_input: dict[str, Any]) -> bool:
        path = os.path.realpath(str(tool_input.get("file_path") or ""))
        return os.path.commonpath([path, os.path.realpath(self.cwd)]) == os.path.realpath(self.cwd)

    def _ask(self, name: str, tool_input: dict[str, Any], tool_id: str) -> bool:
        """Ask with `can_use_tool`: True when allowed; else print the denial and return False (or stop the turn,
        when the denial asks to)."""
        request = shapes.can_use_tool(str(uuid.uuid4()), name, tool_input, tool_id, self.cwd)
        answer = self.wire.ask(request)
        if answer is None:
            self._tool_interrupted(tool_id)
        if answer.get("behavior") == "allow":
            return True
        message = str(answer.get("message") or "denied")
        decision = {"decision": "reject", "source": "user_reject"}
        meta = {"id": tool_id, "non_execution_kind": "permission-rule", "permission_decision": decision}
        error = shapes.tool_result(tool_id, message, is_error=True)
        self._user([error], tool_use_result=f"Error: {message}", tool_result_meta=[meta])
        if answer.get("interrupt"):
            raise _Interrupted("aborted_tools")
        return False

    def _denied_automatically(self, name: str, tool_id: str) -> None:
        """A permission nobody can answer (no prompt tool, or `--permission-prompts none`), as 2.1.328 says it."""
        message = shapes.denied_automatically(name)
        self.wire.emit(shapes.permission_denied(self.session, name, tool_id, message))
        decision = {"decision": "reject", "source": "config", "reason_type": "asyncAgent"}
        meta = {"id": tool_id, "non_execution_kind": "permission-rule", "permission_decision": decision}
        error = shapes.tool_result(tool_id, message, is_error=True)
        self._user([error], tool_use_result=f"Error: {message}", tool_result_meta=[meta])

    def _tool_interrupted(self, tool_id: str) -> NoReturn:
        refused = shapes.tool_result(tool_id, "The user doesn't want to proceed with this tool use.", is_error=True)
        meta = {"id": tool_id, "non_execution_kind": "user-rejected"}
        self._user([refused], tool_use_result="User rejected tool use", tool_result_meta=[meta])
        self._user([{"type": "text", "text": "[Request interrupted by user for tool use]"}])
        raise _Interrupted("aborted_tools")

    # --- the end of the turn ----------------------------------------------------------------------------

    def _die(self) -> NoReturn:
        sys.stderr.write("fatal: simulated crash of the fake claude\n")
        sys.stderr.flush()
        os._exit(3)

    def _result(self, subtype: str, **fields: Any) -> None:
        if self.crash and not self.wire.interrupted:
            self._die()
        duration = int((time.monotonic() - self._start) * 1000)
        line = shapes.result(
            self.session, subtype, turns=self.turns, out_tokens=self.out_tokens, duration_ms=duration,
            model=self.flags.model, cost_before=self.cost, **fields
        )
        self.cost = float(line["total_cost_usd"])
        self.wire.emit(line)

    def _api_error(self, step: Fail) -> int:
        if self.crash:
            self._die()
        text = f"API Error: {step.status} {step.message}"
        self.wire.emit(shapes.api_error_assistant(self.session, step.status, text))
        self._result(
            "success",
            is_error=True,
            result=text,
            api_error_status=step.status,
            api_error_type="api_error",
            terminal_reason="api_error",
        )
        return 1
