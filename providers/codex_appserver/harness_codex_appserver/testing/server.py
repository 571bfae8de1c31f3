"""The fake app-server's JSON-RPC side: requests and responses, threads remembered under `$CODEX_HOME`.

Layer: testing. Knows the app-server's client requests, its error replies and how it answers server→client requests
(codex-cli 0.169.0, shapes from `shapes`); a turn is played by `player.TurnPlayer` on a thread of its own.
Knows nothing of Harness providers or events. What it does as the real one, and its misbehaviours: its README.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from harness_core.scripted.scenarios import Scenario

from harness_codex_appserver.testing import shapes
from harness_codex_appserver.testing.player import Interrupted, TurnPlayer
from harness_codex_appserver.testing.shapes import FAKE_VERSION

__all__ = ["TRACES_FILE", "TURNS_FILE", "FakeAppServer", "traces_seen", "turns_asked"]

TRACES_FILE = "fake-traces.jsonl"
"""Under `$CODEX_HOME`: the trace context the fake was given: one line when the process starts (`env`: its
`TRACEPARENT` and `TRACESTATE`, null when unset), then one per client request (`method`, and `trace`: the request's
top-level W3C carrier as sent, null without one)."""

TURNS_FILE = "fake-turns.jsonl"
"""Under `$CODEX_HOME`: one line per `turn/start` (`method`, `turnId`, `text`, and the `model`, `effort`,
`approvalPolicy`, `sandbox` the turn runs with, its `outputSchema`) and per accepted steer (`text`)."""
_SANDBOX_MODES = {
    "readOnly": "read-only",
    "workspaceWrite": "workspace-write",
    "dangerFullAccess": "danger-full-access",
}


def turns_asked(codex_home: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """What the fake's turns asked for, in order (see `TURNS_FILE`): for tests."""
    path = Path(codex_home) / TURNS_FILE
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def traces_seen(codex_home: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """What the fake was given as trace context, in order (see `TRACES_FILE`): for tests."""
    path = Path(codex_home) / TRACES_FILE
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _bad_trace(trace: Any) -> bool:
    """Not a `W3cTraceContext` (an object of optional strings `traceparent`, `tracestate`), nor null."""
    if trace is None:
        return False
    return not isinstance(trace, dict) or any(
        value is not None and not isinstance(value, str) for value in trace.values())


def _text(params: dict[str, Any]) -> str:
    return "".join(str(i.get("text", "")) for i in params.get("input") or [] if isinstance(i, dict))


class FakeAppServer:
    """One app-server process: reads requests from stdin, writes responses and notifications to stdout."""

    def __init__(
        self, scenario: Scenario, *, crash: str | None = None, interrupt: str | None = None, steer: str | None = None
    ) -> None:
        self.scenario = scenario
        self.crash = crash
        """When set, the process dies right after the turn's first item starts, with this on stderr."""
        self.interrupt_mode = interrupt  # None (as the real one), "ignore" or "early": see the module docstring
        self.steer_mode = steer  # None (as the real one) or "late"
        self.late: list[dict[str, Any]] = []  # steer answers held back until the next turn/start
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
        self.turn_lock = threading.Lock()  # turn_id and steers: the player's thread ends a turn, stdin starts one
        self.steers: list[str] = []
        self.playing: str | None = None  # the turn a player thread was started for

    # -- output --------------------------------------------------------------------------------------------

    def send(self, msg: dict[str, Any]) -> None:
        with self.out_lock:
            sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
            sys.stdout.flush()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"method": method, "params": params, "emittedAtMs": shapes.now_ms()})

    def request(self, method: str, params: dict[str, Any]) -> Any:
        """A server→client request; blocks until the answer (or an interrupt: then `Interrupted`)."""
        rid = self.next_request
        self.next_request += 1
        done: tuple[threading.Event, list[Any]] = (threading.Event(), [])
        self.waiting[rid] = done
        self.send({"method": method, "id": rid, "params": params})
        while not done[0].wait(0.02):
            if self.interrupt.is_set():
                # real codex: `turn/completed` (interrupted) first, then `serverRequest/resolved`
                self.resolve_after_turn.append(rid)
                raise Interrupted
        self.notify("serverRequest/resolved", {"threadId": self.thread_id, "requestId": rid})
        return done[1][0] if done[1] else None

    @property
    def thread_id(self) -> str:
        assert self.thread is not None
        return str(self.thread["id"])

    def ids(self) -> dict[str, Any]:
        """The `threadId`/`turnId` pair every turn notification carries."""
        return {"threadId": self.thread_id, "turnId": self.turn_id}

    def usage(self, turn_id: str, add: int | None) -> dict[str, Any]:
        """A `thread/tokenUsage/updated` payload; `add` model calls are added to the thread's total first."""
        last = dict(shapes.LAST_USAGE)
        if add:
            for key in ("totalTokens", "inputTokens", "outputTokens"):
                self.total[key] += last[key]
        return {
            "threadId": self.thread_id,
            "turnId": turn_id,
            "tokenUsage": {"total": dict(self.total), "last": last, "modelContextWindow": 258400},
        }

    def rollout_path(self) -> Path | None:
        """The thread's rollout file (None for an ephemeral thread). Unlike codex's, it is not filed under
        `sessions/YYYY/MM/DD/`, and its records carry only the fields the provider reads."""
        path = (self.thread or {}).get("path")
        return Path(path) if isinstance(path, str) else None

    def rollout(self, path: Path | None, payload: dict[str, Any]) -> None:
        """Append an `event_msg` with `payload` to the rollout file `path` (nothing for None), as codex records a
        turn's `task_started` and its end (`task_complete`, or `turn_aborted`): the provider reads the turn there."""
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        record = {"timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()), "type": "event_msg",
                  "payload": payload}
        with open(path, "a") as out:
            out.write(json.dumps(record) + "\n")

    def save(self) -> None:
        """Remember the thread and its token total (unless ephemeral), for `thread/resume` in a later run."""
        if self.thread is None or self.thread.get("ephemeral"):
            return
        folder = self.home / "fake-threads"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{self.thread_id}.json").write_text(
            json.dumps({"thread": self.thread, "total": self.total})
        )

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
        self._trace_log({"method": method, "trace": msg.get("trace")})
        if _bad_trace(msg.get("trace")):
            self.send({"error": {"code": -32600, "message": "Invalid request: invalid type for `trace`, expected "
                                 "struct W3cTraceContext"}, "id": rid})
            return
        if method == "turn/start":
            for answer in self.late:
                self.send(answer)
            self.late.clear()
        try:
            result = self.dispatch(method, params)
        except ValueError as exc:
            self.send({"error": {"code": -32600, "message": str(exc)}, "id": rid})
            return
        if method == "turn/steer" and self.steer_mode == "late":
            self.late.append({"id": rid, "result": result})
            return
        self.send({"id": rid, "result": result})
        if method == "thread/start":
            self.notify("thread/started", {"thread": self._response()["thread"]})
        elif method == "thread/resume":
            last_turn = (self.thread or {}).get("_lastTurn") or shapes.new_id()
            self.notify("thread/tokenUsage/updated", self.usage(str(last_turn), None))
        elif method == "turn/start" and result.get("turn", {}).get("id") != self.playing:
            self.playing = result["turn"]["id"]
            player = TurnPlayer(self)
            self.turn_thread = threading.Thread(target=player.play, args=(params,), daemon=True)
            self.turn_thread.start()
        elif method == "turn/interrupt" and self.interrupt_mode == "early":
            self.notify("turn/completed", {"threadId": self.thread_id,
                                           "turn": shapes.turn(str(params.get("turnId")), "interrupted")})

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
            self.save()
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
            with self.turn_lock:
                if self.turn_id is not None:  # a turn is running: this steers it, as the real server does
                    self._steer(params)
                    return {"turn": shapes.turn(self.turn_id, "inProgress", started=False)}
                self.turn_id = shapes.new_id()
            self.interrupt.clear()
            self._apply_overrides(params)
            self._record({"method": "turn/start", "turnId": self.turn_id, "text": _text(params),
                          "model": self.settings.get("model") or self.thread.get("model"),
                          "effort": self.settings.get("effort"), "approvalPolicy": self.settings.get("approvalPolicy"),
                          "sandbox": self.settings.get("sandbox"), "outputSchema": params.get("outputSchema")})
            return {"turn": shapes.turn(self.turn_id, "inProgress", started=False)}
        if method == "turn/steer":
            with self.turn_lock:
                if self.turn_id is None:
                    raise ValueError("no active turn to steer")
                if params.get("expectedTurnId") != self.turn_id:
                    raise ValueError(f"expected active turn id `{params.get('expectedTurnId')}` but found "
                                     f"`{self.turn_id}`")
                self._steer(params)
                return {"turnId": self.turn_id}
        if method == "model/list":
            return {"data": [shapes.model_entry()], "nextCursor": None}
        if method == "turn/interrupt":
            if self.turn_id is None or params.get("turnId") != self.turn_id:
                raise ValueError("no active turn to interrupt")
            if self.interrupt_mode is None:
                self.interrupt.set()
            return {}
        raise ValueError(f"Invalid request: unknown variant `{method}`")

    def _apply_overrides(self, params: dict[str, Any]) -> None:
        """The sticky settings of a `turn/start` (the real server keeps them for later turns)."""
        self.settings = dict(self.settings)
        for key in ("model", "approvalPolicy", "effort"):
            if params.get(key) is not None:
                self.settings[key] = params[key]
        policy = params.get("sandboxPolicy")
        if isinstance(policy, dict):
            self.settings["sandbox"] = _SANDBOX_MODES.get(str(policy.get("type")), "read-only")

    def _steer(self, params: dict[str, Any]) -> None:
        """Input for the running turn (call with `turn_lock` held)."""
        self.steers.append(_text(params))
        self._record({"method": "steer", "turnId": self.turn_id, "text": _text(params)})

    def _record(self, entry: dict[str, Any]) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        with (self.home / TURNS_FILE).open("a") as out:
            out.write(json.dumps(entry) + "\n")

    def _trace_log(self, entry: dict[str, Any]) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        with (self.home / TRACES_FILE).open("a") as out:
            out.write(json.dumps(entry) + "\n")

    def _response(self) -> dict[str, Any]:
        assert self.thread is not None
        return shapes.thread_response(self.thread, self.settings)

    # -- main loop -----------------------------------------------------------------------------------------

    def serve(self) -> int:
        self._trace_log({"env": {name: os.environ.get(name) for name in ("TRACEPARENT", "TRACESTATE")}})
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
