"""A fake `codex` executable that speaks the app-server protocol (codex-cli 0.169.0) for a `Scenario`.

Layer: testing. Knows the app-server's JSON-RPC messages (shapes copied from real transcripts and checked
against `codex app-server generate-json-schema` by the provider's tests) and the scenario vocabulary; knows
nothing of Harness providers or events. Stdlib only, threads only: it must start fast and run anywhere.

    python -m harness_core.testing.fake_codex_appserver --scenario tools --version
    python -m harness_core.testing.fake_codex_appserver --scenario tools app-server --listen stdio://

Simulates what the model would do and what Codex would run: commands are not executed (a `sleep N` command
waits N seconds, interruptibly), files are not touched. Threads are remembered under `$CODEX_HOME` so a second
process can `thread/resume`. `--crash-mid-turn` (or HARNESS_FAKE_CODEX_CRASH=1) exits with status 101 and a
stderr message right after the turn's first item starts. `write_fake_codex(dir, scenario)` writes an
executable wrapper to pass as `-o codex_bin=PATH`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from harness_core.testing.scenarios import (
    SCENARIOS,
    EditFile,
    Fail,
    ReadFile,
    RunCommand,
    Say,
    Scenario,
    Stall,
    TakeLong,
    Think,
    WriteFile,
)

__all__ = ["FAKE_VERSION", "main", "write_fake_codex"]

FAKE_VERSION = "0.169.0"
_ERROR_INFO: dict[int, Any] = {
    500: "internalServerError",
    401: {"httpConnectionFailed": {"httpStatusCode": 401}},
    429: {"responseTooManyFailedAttempts": {"httpStatusCode": 429}},
}


def write_fake_codex(
    directory: str | Path, scenario: str, *, version: str | None = None, crash_mid_turn: bool = False
) -> Path:
    """Write an executable `codex` wrapper running this fake for `scenario`; return its path."""
    path = Path(directory) / "codex"
    extra = [f"--fake-version={version}"] if version else []
    if crash_mid_turn:
        extra.append("--crash-mid-turn")
    args = " ".join(shlex.quote(a) for a in [sys.executable, "-m", __name__, "--scenario", scenario, *extra])
    path.write_text(f'#!/bin/sh\nexec {args} "$@"\n')
    path.chmod(0o755)
    return path


def _now_ms() -> int:
    return int(time.time() * 1000)


def _uuid() -> str:
    return str(uuid.uuid4())


class _Interrupted(Exception):
    pass


class FakeAppServer:
    def __init__(self, scenario: Scenario, *, crash_mid_turn: bool = False) -> None:
        self.scenario = scenario
        self.crash = crash_mid_turn
        self.home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
        self.out_lock = threading.Lock()
        self.initialized = False
        self.thread: dict[str, Any] | None = None
        self.settings: dict[str, Any] = {}
        self.total = {
            "totalTokens": 0,
            "inputTokens": 0,
            "cachedInputTokens": 0,
            "cacheWriteInputTokens": 0,
            "outputTokens": 0,
            "reasoningOutputTokens": 0,
        }
        self.turn_id: str | None = None
        self.turn_thread: threading.Thread | None = None
        self.interrupt = threading.Event()
        self.next_request = 0
        self.waiting: dict[int, tuple[threading.Event, list[Any]]] = {}
        self.calls = 0

    # -- output --------------------------------------------------------------------------------------------

    def send(self, msg: dict[str, Any]) -> None:
        with self.out_lock:
            sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
            sys.stdout.flush()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"method": method, "params": params, "emittedAtMs": _now_ms()})

    def request(self, method: str, params: dict[str, Any]) -> Any:
        """A server→client request; blocks until the answer (or an interrupt)."""
        rid = self.next_request
        self.next_request += 1
        done: tuple[threading.Event, list[Any]] = (threading.Event(), [])
        self.waiting[rid] = done
        self.send({"method": method, "id": rid, "params": params})
        while not done[0].wait(0.02):
            if self.interrupt.is_set():
                self.notify("serverRequest/resolved", {"threadId": self.thread_id, "requestId": rid})
                raise _Interrupted
        self.notify("serverRequest/resolved", {"threadId": self.thread_id, "requestId": rid})
        return done[1][0] if done[1] else None

    @property
    def thread_id(self) -> str:
        assert self.thread is not None
        return str(self.thread["id"])

    # -- requests ------------------------------------------------------------------------------------------

    def handle(self, msg: dict[str, Any]) -> None:
        if "method" not in msg:  # a response to one of our requests
            waiter = self.waiting.pop(msg.get("id"), None)  # type: ignore[arg-type]
            if waiter is not None:
                waiter[1].append(msg.get("result", msg.get("error")))
                waiter[0].set()
            return
        method, params, rid = msg["method"], msg.get("params") or {}, msg.get("id")
        if rid is None:
            return  # notifications: `initialized`
        try:
            result = self.dispatch(method, params)
        except ValueError as exc:
            self.send({"error": {"code": -32600, "message": str(exc)}, "id": rid})
            return
        self.send({"id": rid, "result": result})
        if method == "thread/start":
            self.notify("thread/started", {"thread": self._thread_response()["thread"]})
        elif method == "thread/resume":
            last_turn = (self.thread or {}).get("_lastTurn") or _uuid()
            self.notify("thread/tokenUsage/updated", self._usage(str(last_turn), None))
        elif method == "turn/start":
            self.turn_thread = threading.Thread(target=self.play_turn, args=(params,), daemon=True)
            self.turn_thread.start()

    def dispatch(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            if self.initialized:
                raise ValueError("Already initialized")
            self.initialized = True
            name = (params.get("clientInfo") or {}).get("name", "client")
            return {
                "userAgent": f"{name}/{FAKE_VERSION} (fake)",
                "codexHome": str(self.home),
                "platformFamily": "unix",
                "platformOs": "linux",
            }
        if not self.initialized:
            raise ValueError("Not initialized")
        if method == "thread/start":
            self.settings = params
            self.thread = self._new_thread(params)
            self._save()
            return self._thread_response()
        if method == "thread/resume":
            stored = self.home / "fake-threads" / f"{params.get('threadId')}.json"
            if not stored.exists():
                raise ValueError(f"no rollout found for thread id {params.get('threadId')}")
            saved = json.loads(stored.read_text())
            self.thread, self.total = saved["thread"], saved["total"]
            self.settings = params
            return self._thread_response()
        if method == "turn/start":
            if self.thread is None or params.get("threadId") != self.thread_id:
                raise ValueError(f"thread not found: {params.get('threadId')}")
            if "input" not in params:
                raise ValueError("Invalid request: missing field `input`")
            self.turn_id = _uuid()
            self.interrupt.clear()
            return {"turn": self._turn("inProgress", started=False)}
        if method == "turn/interrupt":
            if self.turn_id is None or params.get("turnId") != self.turn_id:
                raise ValueError("no active turn to interrupt")
            self.interrupt.set()
            return {}
        raise ValueError(f"Invalid request: unknown variant `{method}`")

    def _new_thread(self, params: dict[str, Any]) -> dict[str, Any]:
        tid, now, cwd = _uuid(), int(time.time()), str(params.get("cwd") or os.getcwd())
        ephemeral = bool(params.get("ephemeral"))
        return {
            "id": tid,
            "environments": [{"environmentId": "local", "cwd": cwd, "runtimeWorkspaceRoots": [cwd]}],
            "extra": None,
            "sessionId": tid,
            "forkedFromId": None,
            "attachedToThreadId": None,
            "parentThreadId": None,
            "preview": "",
            "ephemeral": ephemeral,
            "section": None,
            "sectionEnteredAt": None,
            "projectId": None,
            "historyMode": "paginated",
            "modelProvider": "mock",
            "model": params.get("model") or "gpt-5.5",
            "reasoningEffort": None,
            "createdAt": now,
            "updatedAt": now,
            "recencyAt": now,
            "status": {"type": "idle"},
            "path": None if ephemeral else str(self.home / "sessions" / f"rollout-{tid}.jsonl"),
            "cwd": cwd,
            "cliVersion": FAKE_VERSION,
            "originator": "harness",
            "source": "vscode",
            "canAcceptDirectInput": True,
            "threadSource": None,
            "agentNickname": None,
            "agentRole": None,
            "gitInfo": None,
            "name": None,
            "daybreakEnabled": None,
            "turns": [],
        }

    def _thread_response(self) -> dict[str, Any]:
        assert self.thread is not None
        thread = {k: v for k, v in self.thread.items() if not k.startswith("_")}
        sandbox = {
            "read-only": {"type": "readOnly", "networkAccess": False},
            "danger-full-access": {"type": "dangerFullAccess"},
        }.get(
            str(self.settings.get("sandbox")),
            {
                "type": "workspaceWrite",
                "writableRoots": [],
                "networkAccess": False,
                "excludeTmpdirEnvVar": False,
                "excludeSlashTmp": False,
            },
        )
        return {
            "thread": thread,
            "model": thread["model"],
            "modelProvider": "mock",
            "serviceTier": None,
            "disabledPluginIds": [],
            "cwd": thread["cwd"],
            "runtimeWorkspaceRoots": [thread["cwd"]],
            "instructionSources": [],
            "approvalPolicy": self.settings.get("approvalPolicy") or "on-request",
            "approvalsReviewer": "user",
            "sandbox": sandbox,
            "activePermissionProfile": None,
            "reasoningEffort": None,
            "multiAgentMode": "explicitRequestOnly",
        }

    def _save(self) -> None:
        if self.thread is None or self.thread.get("ephemeral"):
            return
        folder = self.home / "fake-threads"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{self.thread_id}.json").write_text(
            json.dumps({"thread": self.thread, "total": self.total})
        )

    # -- the turn ------------------------------------------------------------------------------------------

    def _turn(
        self, status: str, *, started: bool = True, error: Any = None, items: list[Any] | None = None
    ) -> dict[str, Any]:
        done = status != "inProgress"
        now = int(time.time())
        return {
            "id": self.turn_id,
            "rootTurnId": self.turn_id,
            "items": items or [],
            "itemsView": "summary" if items else "notLoaded",
            "status": status,
            "error": error,
            "startedAt": now if started else None,
            "completedAt": now if done else None,
            "durationMs": 1 if done else None,
        }

    def _ids(self) -> dict[str, Any]:
        return {"threadId": self.thread_id, "turnId": self.turn_id}

    def _usage(self, turn_id: str, add: int | None) -> dict[str, Any]:
        last = {
            "totalTokens": 15,
            "inputTokens": 10,
            "cachedInputTokens": 0,
            "cacheWriteInputTokens": 0,
            "outputTokens": 5,
            "reasoningOutputTokens": 0,
        }
        if add:
            for key in ("totalTokens", "inputTokens", "outputTokens"):
                self.total[key] += last[key]
        return {
            "threadId": self.thread_id,
            "turnId": turn_id,
            "tokenUsage": {"total": dict(self.total), "last": last, "modelContextWindow": 258400},
        }

    def _item(self, kind: str, item: dict[str, Any], *, started: bool) -> None:
        key = "startedAtMs" if started else "completedAtMs"
        body = {"item": item, **self._ids(), key: _now_ms()}
        self.notify("item/started" if started else "item/completed", body)
        if started and self.crash and item["type"] != "userMessage":
            sys.stderr.write("fake codex: simulated crash in the middle of a turn\n")
            sys.stderr.flush()
            os._exit(101)

    def _sleep(self, seconds: float) -> None:
        if self.interrupt.wait(seconds):
            raise _Interrupted

    def play_turn(self, params: dict[str, Any]) -> None:
        ids = self._ids()
        self.notify(
            "thread/status/changed",
            {"threadId": self.thread_id, "status": {"type": "active", "activeFlags": []}},
        )
        self.notify("turn/started", {"threadId": self.thread_id, "turn": self._turn("inProgress")})
        text = "".join(str(i.get("text", "")) for i in params.get("input") or [])
        user = {
            "type": "userMessage",
            "id": _uuid(),
            "clientId": None,
            "content": [{"type": "text", "text": text, "text_elements": []}],
        }
        self._item("userMessage", user, started=True)
        self._item("userMessage", user, started=False)
        status, error, final = "completed", None, []
        try:
            for step in self.scenario.steps:
                outcome = self.play_step(step)
                if isinstance(outcome, dict):
                    final = [outcome]
                elif outcome == "cancel":
                    status = "interrupted"
                    break
                elif outcome is not None:
                    status, error = "failed", outcome[1]
                    break
        except _Interrupted:
            status = "interrupted"
        self.thread["_lastTurn"] = self.turn_id  # type: ignore[index]
        self._save()
        self.notify("thread/status/changed", {"threadId": self.thread_id, "status": {"type": "idle"}})
        items = final if status == "completed" else []
        self.notify(
            "turn/completed",
            {"threadId": ids["threadId"], "turn": self._turn(status, error=error, items=items)},
        )
        self.turn_id = None

    def play_step(self, step: object) -> Any:
        self.calls += 1
        call = f"call_{self.calls}"
        if isinstance(step, Say):
            return self._say(step, f"msg_{self.calls}")
        if isinstance(step, Think):
            item = {"type": "reasoning", "id": f"rs_{self.calls}", "summary": [], "content": []}
            self._item("reasoning", item, started=True)
            self.notify(
                "item/reasoning/summaryTextDelta",
                {**self._ids(), "itemId": item["id"], "delta": step.text, "summaryIndex": 0},
            )
            self._item("reasoning", {**item, "summary": [step.text]}, started=False)
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
            self.notify("error", {"error": err, "willRetry": False, **self._ids()})
            return ("failed", err)
        if isinstance(step, (Stall, TakeLong)):
            self._sleep(step.seconds)
            return None
        raise ValueError(f"the fake app-server cannot play {step!r}")

    def _say(self, step: Say, item_id: str) -> dict[str, Any]:
        base = {
            "type": "agentMessage",
            "moderation": None,
            "id": item_id,
            "text": "",
            "phase": None,
            "memoryCitation": None,
            "delivery": None,
            "questions": None,
        }
        self._item("agentMessage", base, started=True)
        size = max(1, -(-len(step.text) // max(1, step.chunks)))
        for start in range(0, len(step.text), size):
            if start and step.delay:
                self._sleep(step.delay)
            self.notify(
                "item/agentMessage/delta",
                {**self._ids(), "itemId": item_id, "delta": step.text[start : start + size]},
            )
        done = {**base, "text": step.text}
        self._item("agentMessage", done, started=False)
        self.notify("thread/tokenUsage/updated", self._usage(str(self.turn_id), 1))
        return done

    def _approval_policy(self) -> str:
        return str(self.settings.get("approvalPolicy") or "on-request")

    def _command(self, step: RunCommand | ReadFile, call: str) -> Any:
        cwd = str(self.settings.get("cwd") or self.thread["cwd"])  # type: ignore[index]
        if isinstance(step, ReadFile):
            script, output, code = f"cat {step.path}", step.content, 0
            actions = [
                {
                    "type": "read",
                    "command": script,
                    "name": Path(step.path).name,
                    "path": str(Path(cwd) / step.path),
                }
            ]
        else:
            script, output, code = step.command, step.output, step.exit_code
            actions = [{"type": "unknown", "command": script}]
        item = {
            "type": "commandExecution",
            "id": call,
            "pluginId": None,
            "scriptPath": None,
            "command": f"/bin/bash -lc {shlex.quote(script)}",
            "cwd": cwd,
            "processId": None,
            "source": "agent",
            "status": "inProgress",
            "commandActions": actions,
            "aggregatedOutput": None,
            "exitCode": None,
            "durationMs": None,
        }
        self._item("commandExecution", item, started=True)
        if self._approval_policy() == "untrusted":
            answer = self.request(
                "item/commandExecution/requestApproval",
                {
                    "kind": "command",
                    **self._ids(),
                    "itemId": call,
                    "startedAtMs": _now_ms(),
                    "environmentId": "local",
                    "command": item["command"],
                    "cwd": cwd,
                    "commandActions": actions,
                    "availableDecisions": ["accept", "cancel"],
                },
            )
            decision = (answer or {}).get("decision") if isinstance(answer, dict) else None
            if decision != "accept":
                self._item("commandExecution", {**item, "status": "declined"}, started=False)
                return "cancel" if decision == "cancel" else None
        sleep = re.fullmatch(r"sleep (\d+(?:\.\d+)?)", script.strip())
        if sleep:
            self._sleep(float(sleep.group(1)))
        for line in output.splitlines(keepends=True):
            self.notify("item/commandExecution/outputDelta", {**self._ids(), "itemId": call, "delta": line})
        done = {
            **item,
            "status": "completed" if code == 0 else "failed",
            "aggregatedOutput": output,
            "exitCode": code,
            "durationMs": 3,
            "processId": "4242",
            "source": "unifiedExecStartup",
        }
        self._item("commandExecution", done, started=False)
        self.notify("thread/tokenUsage/updated", self._usage(str(self.turn_id), 1))
        return None

    def _patch(self, step: WriteFile | EditFile, call: str) -> Any:
        cwd = str(self.settings.get("cwd") or self.thread["cwd"])  # type: ignore[index]
        path = str(Path(cwd) / step.path)
        if isinstance(step, WriteFile):
            kind: dict[str, Any] = {"type": "add"}
            diff = "".join(f"+{line}\n" for line in step.content.splitlines())
        else:
            kind = {"type": "update", "move_path": None}
            diff = f"@@ -1 +1 @@\n-{step.old}\n+{step.new}\n"
        item = {
            "type": "fileChange",
            "id": call,
            "changes": [{"path": path, "kind": kind, "diff": diff}],
            "status": "inProgress",
        }
        self._item("fileChange", item, started=True)
        if self._approval_policy() == "untrusted":
            answer = self.request(
                "item/fileChange/requestApproval",
                {**self._ids(), "itemId": call, "startedAtMs": _now_ms(), "reason": None, "grantRoot": None},
            )
            decision = (answer or {}).get("decision") if isinstance(answer, dict) else None
            if decision != "accept":
                self._item("fileChange", {**item, "status": "declined"}, started=False)
                return "cancel" if decision == "cancel" else None
        self._item("fileChange", {**item, "status": "completed"}, started=False)
        self.notify(
            "turn/diff/updated", {**self._ids(), "diff": f"--- a/{step.path}\n+++ b/{step.path}\n{diff}"}
        )
        self.notify("thread/tokenUsage/updated", self._usage(str(self.turn_id), 1))
        return None

    # -- main loop -----------------------------------------------------------------------------------------

    def serve(self) -> int:
        for raw in sys.stdin:
            line = raw.strip()
            if not line:
                continue
            try:
                msg = json.loads(line)
            except json.JSONDecodeError:
                self.send({"error": {"code": -32700, "message": "Parse error"}, "id": None})
                continue
            if isinstance(msg, dict):
                self.handle(msg)
        return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fake-codex", add_help=False)
    parser.add_argument("--scenario", default=os.environ.get("HARNESS_FAKE_CODEX_SCENARIO", "say"))
    parser.add_argument("--fake-version", default=os.environ.get("HARNESS_FAKE_CODEX_VERSION", FAKE_VERSION))
    parser.add_argument(
        "--crash-mid-turn", action="store_true", default=bool(os.environ.get("HARNESS_FAKE_CODEX_CRASH"))
    )
    parser.add_argument("--version", action="store_true")
    args, rest = parser.parse_known_args(argv)
    if args.version:
        print(f"codex-cli {args.fake_version}")
        return 0
    if not rest or rest[0] != "app-server":
        sys.stderr.write(f"fake codex: only `--version` and `app-server` are supported, got {rest}\n")
        return 2
    scenario = SCENARIOS.get(args.scenario)
    if scenario is None:
        sys.stderr.write(f"fake codex: unknown scenario {args.scenario!r}; known: {', '.join(SCENARIOS)}\n")
        return 2
    return FakeAppServer(scenario, crash_mid_turn=args.crash_mid_turn).serve()


if __name__ == "__main__":
    sys.exit(main())
