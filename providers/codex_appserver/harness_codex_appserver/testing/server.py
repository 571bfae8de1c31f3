"""The fake app-server's JSON-RPC side: requests and responses, threads remembered under `$CODEX_HOME`.

Layer: testing. Knows the app-server's client requests (initialize, thread/start|resume, turn/start,
turn/interrupt), its error replies and how it answers server→client requests (codex-cli 0.169.0, shapes from
`shapes`, checked against `codex app-server generate-json-schema` by the provider's tests); a turn itself is
played by `player.TurnPlayer` on a thread of its own. Knows nothing of Harness providers or events.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

from harness_core.offline.scenarios import Scenario

from harness_codex_appserver.testing import shapes
from harness_codex_appserver.testing.player import Interrupted, TurnPlayer
from harness_codex_appserver.testing.shapes import FAKE_VERSION

__all__ = ["FakeAppServer"]


class FakeAppServer:
    """One app-server process: reads requests from stdin, writes responses and notifications to stdout."""

    def __init__(self, scenario: Scenario, *, crash: str | None = None) -> None:
        self.scenario = scenario
        self.crash = crash
        """When set, the process dies right after the turn's first item starts, with this on stderr."""
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
            self.notify("thread/tokenUsage/updated", self.usage(str(last_turn), None))
        elif method == "turn/start":
            player = TurnPlayer(self)
            self.turn_thread = threading.Thread(target=player.play, args=(params,), daemon=True)
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
            self.turn_id = shapes.new_id()
            self.interrupt.clear()
            return {"turn": shapes.turn(self.turn_id, "inProgress", started=False)}
        if method == "turn/interrupt":
            if self.turn_id is None or params.get("turnId") != self.turn_id:
                raise ValueError("no active turn to interrupt")
            self.interrupt.set()
            return {}
        raise ValueError(f"Invalid request: unknown variant `{method}`")

    def _response(self) -> dict[str, Any]:
        assert self.thread is not None
        return shapes.thread_response(self.thread, self.settings)

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
