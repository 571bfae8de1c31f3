"""A fake `codex` executable that speaks the app-server protocol (codex-cli 0.169.0) for a `Scenario`.

Layer: testing. Knows the app-server's JSON-RPC messages (shapes copied from real transcripts and checked
against `codex app-server generate-json-schema` by the provider's tests) and the scenario vocabulary; knows
nothing of Harness providers or events. Stdlib only, threads only: it must start fast and run anywhere. The
message shapes themselves are built in `fake_codex_appserver_shapes`.

    python -m harness_codex_appserver.testing.fake --scenario tools --version
    python -m harness_codex_appserver.testing.fake --scenario tools app-server --listen stdio://

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
import shlex
import sys
import threading
from pathlib import Path
from typing import Any

from harness_core.testing import fake_codex_appserver_shapes as shapes
from harness_codex_appserver.testing.shapes import FAKE_VERSION
from harness_core.offline.scenarios import (
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
    apply_file_step,
    command_sleep,
)

__all__ = ["FAKE_VERSION", "main", "write_fake_codex"]

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
        self.total = shapes.empty_total()
        self.turn_id: str | None = None
        self.turn_thread: threading.Thread | None = None
        self.interrupt = threading.Event()
        self.next_request = 0
        self.waiting: dict[int, tuple[threading.Event, list[Any]]] = {}
        self.resolve_after_turn: list[int] = []
        self.calls = 0

    # -- output --------------------------------------------------------------------------------------------

    def send(self, msg: dict[str, Any]) -> None:
        with self.out_lock:
            sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
            sys.stdout.flush()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"method": method, "params": params, "emittedAtMs": shapes.now_ms()})

    def request(self, method: str, params: dict[str, Any]) -> Any:
        """A server→client request; blocks until the answer (or an interrupt)."""
        rid = self.next_request
        self.next_request += 1
        done: tuple[threading.Event, list[Any]] = (threading.Event(), [])
        self.waiting[rid] = done
        self.send({"method": method, "id": rid, "params": params})
        while not done[0].wait(0.02):
            if self.interrupt.is_set():
                # real codex: `turn/completed` (interrupted) first, then `serverRequest/resolved`
                self.resolve_after_turn.append(rid)
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
            self.notify("thread/started", {"thread": self._response()["thread"]})
        elif method == "thread/resume":
            last_turn = (self.thread or {}).get("_lastTurn") or shapes.new_id()
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
            self.thread = shapes.new_thread(params, self.home)
            self._save()
            return self._response()
        if method == "thread/resume":
            stored = self.home / "fake-threads" / f"{params.get('threadId')}.json"
            if not stored.exists():
                raise ValueError(f"no rollout found for thread id {params.get('threadId')}")
            saved = json.loads(stored.read_text())
            self.thread, self.total = saved["thread"], saved["total"]
            self.settings = params
            return self._response()
        if method == "turn/start":
            if self.thread is None or params.get("threadId") != self.thread_id:
                raise ValueError(f"thread not found: {params.get('threadId')}")
            if "input" not in params:
                raise ValueError("Invalid request: missing field `input`")
            self.turn_id = shapes.new_id()
            self.interrupt.clear()
            return {"turn": self._turn("inProgress", started=False)}
        if method == "turn/interrupt":
            if self.turn_id is None or params.get("turnId") != self.turn_id:
                raise ValueError("no active turn to interrupt")
            self.interrupt.set()
            return {}
        raise ValueError(f"Invalid request: unknown variant `{method}`")

    def _response(self) -> dict[str, Any]:
        assert self.thread is not None
        return shapes.thread_response(self.thread, self.settings)

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
        return shapes.turn(self.turn_id, status, started=started, error=error, items=items)

    def _ids(self) -> dict[str, Any]:
        return {"threadId": self.thread_id, "turnId": self.turn_id}

    def _usage(self, turn_id: str, add: int | None) -> dict[str, Any]:
        last = dict(shapes.LAST_USAGE)
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
        body = {"item": item, **self._ids(), key: shapes.now_ms()}
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
        user = shapes.user_message(text)
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
        for rid in self.resolve_after_turn:
            self.notify("serverRequest/resolved", {"threadId": self.thread_id, "requestId": rid})
        self.resolve_after_turn.clear()
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
        base = shapes.agent_message(item_id)
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

    def _ask(self, method: str, params: dict[str, Any], item: dict[str, Any]) -> str | None:
        """Under `untrusted`, ask the client about `item` and return its decision ("accept" otherwise); an
        item not accepted completes as declined."""
        if str(self.settings.get("approvalPolicy") or "on-request") != "untrusted":
            return "accept"
        ids = {**self._ids(), "itemId": item["id"], "startedAtMs": shapes.now_ms()}
        answer = self.request(method, {**ids, **params})
        decision = answer.get("decision") if isinstance(answer, dict) else None
        if decision != "accept":
            self._item(str(item["type"]), {**item, "status": "declined"}, started=False)
        return str(decision) if decision is not None else None

    def _command(self, step: RunCommand | ReadFile, call: str) -> Any:
        cwd = str(self.settings.get("cwd") or self.thread["cwd"])  # type: ignore[index]
        if isinstance(step, ReadFile):
            script, output, code = f"cat {step.path}", step.content, 0
            item = shapes.command_item(call, script, cwd, read_path=step.path)
        else:
            script, output, code = step.command, step.output, step.exit_code
            item = shapes.command_item(call, script, cwd)
        self._item("commandExecution", item, started=True)
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
        seconds = command_sleep(script)
        if seconds:
            self._sleep(seconds)
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
            item, diff = shapes.file_change_item(call, path, content=step.content)
        else:
            item, diff = shapes.file_change_item(call, path, old=step.old, new=step.new)
        self._item("fileChange", item, started=True)
        decision = self._ask("item/fileChange/requestApproval", {"reason": None, "grantRoot": None}, item)
        if decision != "accept":
            return "cancel" if decision == "cancel" else None
        sandbox = self.settings.get("sandbox") or "read-only"
        apply_file_step(step, cwd, read_only=sandbox == "read-only")  # approved edits really change the cwd
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
