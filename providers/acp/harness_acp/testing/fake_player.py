"""The fake ACP agent's prompt turn: a `Scenario`'s steps as `session/update`s and permission requests.

Layer: testing (fake CLI), stdlib only. Knows the ACP updates an agent sends and the permission round trip, shaped
as the recorded real agents' (`tests/transcripts/`). File steps are real, commands are not run (but `sleep N` runs
a real `sleep`). Its steps and `--modes`: providers/acp/README.md, "The fake agent".
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any, Protocol

from harness_core.scripted.command import command_process
from harness_core.scripted.scenarios import (
    SCENARIOS,
    TOOL_RESULT,
    CallMcpTool,
    EditFile,
    Fail,
    ReadFile,
    ReportAttachments,
    RunCommand,
    Say,
    Scenario,
    Stall,
    TakeLong,
    Think,
    WriteFile,
    apply_file_step,
)

from harness_acp.testing.fake_mcp import McpCallFailed, call_tool

__all__ = ["DEFAULT_MODES", "FakeTurn", "TurnWire", "modes_state", "scenario_for"]


class TurnWire(Protocol):
    """What a turn uses of the fake agent's wire (`fake_agent.Wire` is one): send a notification, ask the client
    (None when the turn was cancelled meanwhile), and the sessions cancelled so far."""

    cancelled: set[str]
    cancel_event: threading.Event

    def notify(self, method: str, params: dict[str, Any]) -> None: ...

    def ask(self, method: str, params: dict[str, Any], timeout: float = 3600.0) -> dict[str, Any] | None: ...

DEFAULT_MODES: dict[str, str] = {"ask": "ask", "auto": "auto", "read-only": "read-only"}
MODES = dict(DEFAULT_MODES)
"""Mode id → behaviour of this process (`--modes` replaces it)."""
NO_EXIT_CODES = False
LATE_TOOL_UPDATES = False
"""Set by `--late-tool-updates`: a tool call's final update goes out 0.3 s late, from another thread, so it may
follow the prompt's answer (as codex-acp's can on a loaded machine: its updates and answers are sent apart)."""
"""Set by `--no-exit-codes`: command results carry no exit status (as some agents' do not)."""
NO_COMMAND_OUTPUT = False
"""Set by `--no-command-output`: command results carry no output (Gemini CLI 0.61.0's do not)."""

OPTIONS = [
    {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
    {"optionId": "allow-always", "name": "Always allow", "kind": "allow_always"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


def modes_state(current: str) -> dict[str, Any]:
    return {"currentModeId": current, "availableModes": [
        {"id": mode, "name": mode.title(), "description": f"behaves as {kind}"} for mode, kind in MODES.items()]}


def scenario_for(prompt: str, default: str | None, *, history: list[Any]) -> Scenario:
    """`SCENARIO:<name>` in the prompt, else `default`, else `say`; `RECALL` answers with the session's first
    prompt (a loaded session remembers it)."""
    if "RECALL" in prompt:
        first = next((text for role, text in history if role == "user"), "nothing")
        return Scenario("recall", (Say(f"You first said: {first}"),))
    words = prompt.split("SCENARIO:", 1)[1].split() if "SCENARIO:" in prompt else []
    name = words[0] if words else (default or "say")
    return SCENARIOS.get(name) or Scenario(name, (Say(f"echo: {prompt}"),))


class FakeTurn:
    def __init__(self, wire: TurnWire, session_id: str, state: dict[str, Any], *, cwd: str, crash: bool,
                 attachments: tuple[tuple[str, int], ...] = ()) -> None:
        self.wire, self.sid, self.state, self.cwd, self.crash = wire, session_id, state, cwd, crash
        self.attachments = attachments  # (mime type, size) of each image block of the prompt
        self.results: list[str] = []  # the MCP tool results, for `{tool_result}`
        self.calls = 0
        self.used = int(state.get("used", 1000))
        self.said: list[str] = []

    @property
    def behaviour(self) -> str:
        return MODES.get(str(self.state.get("mode")), "ask")

    def update(self, update: dict[str, Any]) -> None:
        self.wire.notify("session/update", {"sessionId": self.sid, "update": update})

    def cancelled(self) -> bool:
        return self.sid in self.wire.cancelled

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True when cancelled meanwhile."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.cancelled():
                return True
            self.wire.cancel_event.wait(min(0.05, max(0.0, deadline - time.monotonic())))
        return self.cancelled()

    def play(self, scenario: Scenario) -> tuple[str, str, tuple[str, Any] | None]:
        """(stop reason, what was said, failure (message, data) or None)."""
        for step in scenario.steps:
            if self.cancelled():
                return "cancelled", "".join(self.said), None
            if isinstance(step, ReportAttachments):
                lines = [f"{mime} {size} bytes" for mime, size in self.attachments]
                step = Say("\n".join(lines) or "no attachments", chunks=step.chunks)
            if isinstance(step, Say) and TOOL_RESULT in step.text:
                step = Say(step.text.replace(TOOL_RESULT, self.results[-1] if self.results else "(no tool result)"),
                           step.chunks, step.delay)
            if isinstance(step, CallMcpTool):
                stop = self._mcp(step)
                if stop is not None:
                    return stop, "".join(self.said), None
                self._usage()
                continue
            if isinstance(step, Say):
                if self._say(step):
                    return "cancelled", "".join(self.said), None
                self._usage()
                return "end_turn", "".join(self.said), None
            if isinstance(step, Think):
                self.update({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": step.text}})
            elif isinstance(step, (TakeLong, Stall)):
                if self.wait(step.seconds):
                    return "cancelled", "".join(self.said), None
            elif isinstance(step, Fail):
                return "end_turn", "", (f"Internal error: API Error: {step.status} {step.message}",
                                        {"status": step.status, "message": step.message})
            elif isinstance(step, (RunCommand, ReadFile, WriteFile, EditFile)):
                stop = self._tool(step)
                if stop is not None:
                    return stop, "".join(self.said), None
                self._usage()
        done = "(scenario finished)"
        self.update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": done}})
        return "end_turn", done, None

    def _say(self, step: Say) -> bool:
        from harness_core.scripted.backends import split_chunks

        for i, chunk in enumerate(split_chunks(step.text, step.chunks)):
            if i and step.delay and self.wait(step.delay):
                return True
            if self.cancelled():
                return True
            self.said.append(chunk)
            self.update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": chunk}})
        return False

    def _usage(self) -> None:
        self.used += 10
        self.state["used"] = self.used
        self.update({"sessionUpdate": "usage_update", "used": self.used, "size": 200000})

    def _call(self, step: RunCommand | ReadFile | WriteFile | EditFile) -> dict[str, Any]:
        self.calls += 1
        cid = f"call_{self.calls}"
        if isinstance(step, RunCommand):
            return {"toolCallId": cid, "title": step.command, "kind": "execute",
                    "rawInput": {"command": ["/bin/bash", "-lc", step.command], "cwd": self.cwd}}
        full = str(Path(self.cwd) / step.path)
        if isinstance(step, ReadFile):
            return {"toolCallId": cid, "title": f"Read {step.path}", "kind": "read", "locations": [{"path": full}],
                    "rawInput": {"path": full}}
        if isinstance(step, WriteFile):
            diff: dict[str, Any] = {"type": "diff", "path": full, "oldText": None, "newText": step.content}
        else:
            old = Path(full).read_text() if Path(full).exists() else step.old
            diff = {"type": "diff", "path": full, "oldText": old, "newText": old.replace(step.old, step.new)}
        return {"toolCallId": cid, "title": f"Edit {full}", "kind": "edit", "locations": [{"path": full}],
                "content": [diff], "rawInput": {"path": full}}

    def _tool(self, step: RunCommand | ReadFile | WriteFile | EditFile) -> str | None:
        call = self._call(step)
        cid = call["toolCallId"]
        self.update({"sessionUpdate": "tool_call", **call, "status": "pending"})
        if isinstance(step, RunCommand) and "Bash" in (self.state.get("disallowed") or ()):
            return self._finish(cid, "failed", "<tool_use_error>Error: No such tool available: Bash</tool_use_error>",
                                None)  # as Claude Code answers a tool `disallowedTools` removed
        if self.crash:
            os._exit(137)
        changes = isinstance(step, (WriteFile, EditFile))
        behaviour = self.behaviour
        if changes and behaviour == "read-only":
            return self._finish(cid, "failed", "refused: this session is read-only", None)
        asks = changes or (isinstance(step, RunCommand) and behaviour != "ask-edits")
        if behaviour != "auto" and asks:
            params = {"sessionId": self.sid, "toolCall": {**call, "status": "pending"}, "options": OPTIONS}
            answer = self.wire.ask("session/request_permission", params)
            outcome = ((answer or {}).get("result") or {}).get("outcome") or {}
            if outcome.get("outcome") != "selected":
                self._finish(cid, "failed", "cancelled before it ran", None)
                return "cancelled"
            if outcome.get("optionId") == "reject":
                return self._finish(cid, "failed", "The user rejected this tool call", None)
        self.update({"sessionUpdate": "tool_call_update", "toolCallId": cid, "status": "in_progress"})
        if isinstance(step, RunCommand):
            with command_process(step.command) as seconds:
                if self.wait(seconds):
                    return "cancelled"
            if NO_COMMAND_OUTPUT:
                self.update({"sessionUpdate": "tool_call_update", "toolCallId": cid, "status": "completed",
                             "content": []})
                return None
            raw = {"stdout": step.output} if NO_EXIT_CODES else {"exit_code": step.exit_code, "stdout": step.output}
            return self._finish(cid, "completed", step.output, raw)
        output = apply_file_step(step, self.cwd)
        return self._finish(cid, "completed", output if isinstance(step, ReadFile) else "Success", None)

    def _mcp(self, step: CallMcpTool) -> str | None:
        """Call the tool on the session's server (asking first unless the mode asks nothing); None: go on."""
        self.calls += 1
        cid = f"call_{self.calls}"
        name = f"mcp__{step.server}__{step.tool}"
        call = {"toolCallId": cid, "title": name, "kind": "other", "rawInput": dict(step.args),
                "_meta": {"claudeCode": {"toolName": name}}}
        self.update({"sessionUpdate": "tool_call", **call, "status": "pending"})
        if self.behaviour != "auto":
            params = {"sessionId": self.sid, "toolCall": {**call, "status": "pending"}, "options": OPTIONS}
            outcome = ((self.wire.ask("session/request_permission", params) or {}).get("result") or {}).get(
                "outcome") or {}
            if outcome.get("outcome") != "selected":
                self._finish(cid, "failed", "cancelled before it ran", None)
                return "cancelled"
            if outcome.get("optionId") == "reject":
                return self._finish(cid, "failed", "The user rejected this tool call", None)
        servers = {s.get("name"): s for s in self.state.get("mcp_servers") or () if isinstance(s, dict)}
        server = servers.get(step.server)
        self.update({"sessionUpdate": "tool_call_update", "toolCallId": cid, "status": "in_progress"})
        if server is None or "command" not in server:
            text, failed = (f"no stdio MCP server {step.server!r} in this session (it has: "
                            f"{', '.join(sorted(map(str, servers))) or 'none'})"), True
        else:
            try:
                text, failed = call_tool(server, step.tool, dict(step.args))
            except McpCallFailed as exc:
                text, failed = str(exc), True
        self.results.append(text)
        return self._finish(cid, "failed" if failed else "completed", text, None)

    def _finish(self, cid: str, status: str, text: str, raw_output: dict[str, Any] | None) -> str | None:
        """Send the call's final update; None (the turn goes on)."""
        update: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": cid, "status": status,
                                  "content": [{"type": "content", "content": {"type": "text", "text": text}}]}
        if raw_output is not None:
            update["rawOutput"] = raw_output
        if LATE_TOOL_UPDATES:
            threading.Timer(0.3, self.update, (update,)).start()
            return None
        self.update(update)
        return None
