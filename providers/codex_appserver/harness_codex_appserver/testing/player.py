"""The fake app-server's turn: a `Scenario` played as the notifications (and approval requests) of one turn.

Layer: testing. Knows the order and payloads of a real turn's notifications (codex-cli 0.169.0), how `untrusted`
asks for approvals, and the scenario vocabulary; the JSON-RPC side is `server`. Commands are simulated, approved
file steps really change the workspace. Knows nothing of Harness providers or events.
"""

from __future__ import annotations

import base64
import mimetypes
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, Protocol

from harness_core.scripted.command import command_process
from harness_core.scripted.scenarios import (
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

from harness_codex_appserver.testing import shapes

__all__ = ["Interrupted", "TurnPlayer", "TurnServer"]

_ERROR_INFO: dict[int, Any] = {
    500: "internalServerError",
    401: {"httpConnectionFailed": {"httpStatusCode": 401}},
    429: {"responseTooManyFailedAttempts": {"httpStatusCode": 429}},
}


class Interrupted(Exception):
    """The client interrupted the turn (raised out of a wait)."""


class TurnServer(Protocol):
    """What a turn uses of the fake app-server (`server.FakeAppServer` is one): its wire (`notify`, `request`), the
    thread and turn it plays (`ids`, `usage`, `save`), the scenario and the state shared with stdin's thread."""

    scenario: Scenario
    crash: str | None
    thread: dict[str, Any] | None
    settings: dict[str, Any]
    turn_id: str | None
    interrupt: threading.Event
    resolve_after_turn: list[int]
    calls: int
    turn_lock: threading.Lock
    steers: list[str]

    @property
    def thread_id(self) -> str: ...

    def notify(self, method: str, params: dict[str, Any]) -> None: ...

    def request(self, method: str, params: dict[str, Any]) -> Any: ...

    def ids(self) -> dict[str, Any]: ...

    def usage(self, turn_id: str, add: int | None) -> dict[str, Any]: ...

    def save(self) -> None: ...

    def rollout_path(self) -> Path | None: ...

    def rollout(self, path: Path | None, payload: dict[str, Any]) -> None: ...


class TurnPlayer:
    """Plays the server's scenario as the turn `server.turn_id` of `server.thread`."""

    def __init__(self, server: TurnServer) -> None:
        self.server = server
        self.attachments: list[tuple[str, int]] = []
        """The media type and size of each image input item of the turn."""
        self.results: list[str] = []
        """The MCP tool results reported so far (what `{tool_result}` quotes)."""

    def play(self, params: dict[str, Any]) -> None:
        srv = self.server
        thread_id = srv.thread_id
        srv.notify("thread/status/changed", {"threadId": thread_id, "status": {"type": "active", "activeFlags": []}})
        srv.notify("turn/started", {"threadId": thread_id, "turn": shapes.turn(srv.turn_id, "inProgress")})
        rollout = srv.rollout_path()  # this turn's file, whatever the stdin thread does meanwhile
        srv.rollout(rollout, {"type": "task_started", "turn_id": srv.turn_id, "started_at": int(time.time())})
        text = "".join(str(i.get("text", "")) for i in params.get("input") or [])
        self.attachments = [_image(i) for i in params.get("input") or [] if i.get("type") in ("localImage", "image")]
        user = shapes.user_message(text)
        self._item(user, started=True)
        self._item(user, started=False)
        status, error, final = "completed", None, []
        turn_id = srv.turn_id
        try:
            for index, step in enumerate(srv.scenario.steps):
                if index:
                    self._take_steers()  # as Codex does: steering input is read before the next model call
                outcome = self.play_step(step)
                if isinstance(outcome, dict):
                    final = [outcome]
                elif outcome == "cancel":
                    status = "interrupted"
                    break
                elif outcome is not None:
                    status, error = "failed", outcome[1]
                    break
        except Interrupted:
            status = "interrupted"
        srv.thread["_lastTurn"] = turn_id  # type: ignore[index]
        # as codex records the turn's end: an interrupted turn is aborted (`turn_aborted`, no `task_complete`)
        srv.rollout(rollout, {"type": "turn_aborted", "turn_id": turn_id, "reason": "interrupted"}
                    if status == "interrupted" else
                    {"type": "task_complete", "turn_id": turn_id, "completed_at": int(time.time())})
        srv.save()
        srv.notify("thread/status/changed", {"threadId": thread_id, "status": {"type": "idle"}})
        items = final if status == "completed" else []
        with srv.turn_lock:  # over before the client hears it: its next turn/start starts a new turn
            srv.turn_id = None
            srv.steers.clear()
        srv.notify(
            "turn/completed",
            {"threadId": thread_id, "turn": shapes.turn(turn_id, status, error=error, items=items)},
        )
        for rid in srv.resolve_after_turn:
            srv.notify("serverRequest/resolved", {"threadId": thread_id, "requestId": rid})
        srv.resolve_after_turn.clear()

    def _take_steers(self) -> None:
        srv = self.server
        with srv.turn_lock:
            texts, srv.steers[:] = list(srv.steers), []
        for text in texts:
            user = shapes.user_message(text)
            self._item(user, started=True)
            self._item(user, started=False)

    def play_step(self, step: object) -> Any:
        """Play one step; returns the final message item (Say), "cancel", ("failed", error) or None."""
        srv = self.server
        srv.calls += 1
        call = f"call_{srv.calls}"
        if isinstance(step, ReportAttachments):
            lines = [f"{mime} {size} bytes" for mime, size in self.attachments]
            step = Say("\n".join(lines) or "no attachments", chunks=step.chunks)
        if isinstance(step, Say) and TOOL_RESULT in step.text:
            said = self.results[-1] if self.results else "(no tool result)"
            step = Say(step.text.replace(TOOL_RESULT, said), step.chunks, step.delay)
        if isinstance(step, Say):
            return self._say(step, f"msg_{srv.calls}")
        if isinstance(step, CallMcpTool):  # the step's output, as the server would answer (the fake starts none)
            item: dict[str, Any] = {"type": "mcpToolCall", "id": call, "server": step.server, "tool": step.tool,
                                    "status": "inProgress", "arguments": dict(step.args), "result": None,
                                    "error": None, "durationMs": None}
            self._item(item, started=True)
            result: dict[str, Any] = {"content": [{"type": "text", "text": step.output}], "structuredContent": None}
            self._item({**item, "status": "completed", "result": result, "durationMs": 1}, started=False)
            self.results.append(step.output)
            return None
        if isinstance(step, Think):
            item = {"type": "reasoning", "id": f"rs_{srv.calls}", "summary": [], "content": []}
            self._item(item, started=True)
            srv.notify(
                "item/reasoning/summaryTextDelta",
                {**srv.ids(), "itemId": item["id"], "delta": step.text, "summaryIndex": 0},
            )
            self._item({**item, "summary": [step.text]}, started=False)
            return None
        if isinstance(step, (RunCommand, ReadFile)):
            return self._command(step, call)
        if isinstance(step, (WriteFile, EditFile)):
            return self._patch(step, call)
        if isinstance(step, Fail):
            err = {
                "message": f"unexpected status {step.status}: {step.message}",
                "codexErrorInfo": _ERROR_INFO.get(step.status, "other"),
                "additionalDetails": None,
            }
            srv.notify("error", {"error": err, "willRetry": False, **srv.ids()})
            return ("failed", err)
        if isinstance(step, (Stall, TakeLong)):
            self._sleep(step.seconds)
            return None
        raise ValueError(f"the fake app-server cannot play {step!r}")

    # -- pieces --------------------------------------------------------------------------------------------

    def _item(self, item: dict[str, Any], *, started: bool) -> None:
        srv = self.server
        key = "startedAtMs" if started else "completedAtMs"
        srv.notify("item/started" if started else "item/completed", {"item": item, **srv.ids(), key: shapes.now_ms()})
        if started and srv.crash and item["type"] != "userMessage":
            sys.stderr.write(srv.crash + "\n")
            sys.stderr.flush()
            os._exit(101)

    def _sleep(self, seconds: float) -> None:
        if self.server.interrupt.wait(seconds):
            raise Interrupted

    def _usage(self) -> None:
        srv = self.server
        srv.notify("thread/tokenUsage/updated", srv.usage(str(srv.turn_id), 1))

    def _say(self, step: Say, item_id: str) -> dict[str, Any]:
        srv = self.server
        base = shapes.agent_message(item_id)
        self._item(base, started=True)
        size = max(1, -(-len(step.text) // max(1, step.chunks)))
        for start in range(0, len(step.text), size):
            if start and step.delay:
                self._sleep(step.delay)
            srv.notify(
                "item/agentMessage/delta",
                {**srv.ids(), "itemId": item_id, "delta": step.text[start : start + size]},
            )
        done = {**base, "text": step.text}
        self._item(done, started=False)
        self._usage()
        return done

    def _ask(self, method: str, params: dict[str, Any], item: dict[str, Any]) -> str | None:
        """Under `untrusted`, ask the client about `item` and return its decision ("accept" otherwise); an
        item not accepted completes as declined."""
        srv = self.server
        if str(srv.settings.get("approvalPolicy") or "on-request") != "untrusted":
            return "accept"
        ids = {**srv.ids(), "itemId": item["id"], "startedAtMs": shapes.now_ms()}
        answer = srv.request(method, {**ids, **params})
        decision = answer.get("decision") if isinstance(answer, dict) else None
        if decision != "accept":
            self._item({**item, "status": "declined"}, started=False)
        return str(decision) if decision is not None else None

    def _cwd(self) -> str:
        return str(self.server.settings.get("cwd") or self.server.thread["cwd"])  # type: ignore[index]

    def _command(self, step: RunCommand | ReadFile, call: str) -> Any:
        srv = self.server
        cwd = self._cwd()
        if isinstance(step, ReadFile):
            script, output, code = f"cat {step.path}", step.content, 0
            item = shapes.command_item(call, script, cwd, read_path=step.path)
        else:
            script, output, code = step.command, step.output, step.exit_code
            item = shapes.command_item(call, script, cwd)
        self._item(item, started=True)
        decision = self._ask(
            "item/commandExecution/requestApproval",
            {
                "kind": "command",
                "environmentId": "local",
                "command": item["command"],
                "cwd": cwd,
                "commandActions": item["commandActions"],
                "availableDecisions": ["accept", "cancel"],
            },
            item,
        )
        if decision != "accept":
            return "cancel" if decision == "cancel" else None
        with command_process(script) as seconds:
            if seconds:
                self._sleep(seconds)
        for line in output.splitlines(keepends=True):
            srv.notify("item/commandExecution/outputDelta", {**srv.ids(), "itemId": call, "delta": line})
        done = {
            **item,
            "status": "completed" if code == 0 else "failed",
            "aggregatedOutput": output,
            "exitCode": code,
            "durationMs": 3,
            "processId": "4242",
            "source": "unifiedExecStartup",
        }
        self._item(done, started=False)
        self._usage()
        return None

    def _patch(self, step: WriteFile | EditFile, call: str) -> Any:
        srv = self.server
        cwd = self._cwd()
        path = str(Path(cwd) / step.path)
        if isinstance(step, WriteFile):
            item, diff = shapes.file_change_item(call, path, content=step.content)
        else:
            item, diff = shapes.file_change_item(call, path, old=step.old, new=step.new)
        self._item(item, started=True)
        decision = self._ask("item/fileChange/requestApproval", {"reason": None, "grantRoot": None}, item)
        if decision != "accept":
            return "cancel" if decision == "cancel" else None
        sandbox = srv.settings.get("sandbox") or "read-only"  # as the latest turn/start's sandboxPolicy left it
        apply_file_step(step, cwd, read_only=sandbox == "read-only")  # approved edits really change the cwd
        self._item({**item, "status": "completed"}, started=False)
        srv.notify("turn/diff/updated", {**srv.ids(), "diff": f"--- a/{step.path}\n+++ b/{step.path}\n{diff}"})
        self._usage()
        return None


def _image(item: dict[str, Any]) -> tuple[str, int]:
    """An image input item's media type and size: a `localImage` file's, or a data URL's."""
    if item.get("type") == "localImage":
        path = Path(str(item.get("path")))
        return mimetypes.guess_type(path.name)[0] or "application/octet-stream", path.stat().st_size
    url = str(item.get("url") or "")
    head, _, data = url.partition(",")
    return head[5:].partition(";")[0] or "application/octet-stream", len(base64.b64decode(data))
