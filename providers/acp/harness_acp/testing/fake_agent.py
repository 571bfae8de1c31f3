"""A fake ACP agent: speaks ACP v1 on stdio and plays a `Scenario` for each prompt (`python -m ...fake_agent`).

Layer: testing (ships with harness-acp). Knows the agent side of ACP and the scenario vocabulary; the turn itself
is `fake_player`. Stdlib only (plus `jsonschema` when `HARNESS_ACP_VALIDATE` is set). Knows nothing of Harness
providers. Its command line and variables: providers/acp/README.md, "The fake agent".
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import queue
import sys
import tempfile
import threading
import uuid
from pathlib import Path
from typing import Any

from harness_acp.testing import fake_player
from harness_acp.testing.fake_player import MODES, FakeTurn, modes_state, scenario_for

VALIDATE_ENV = "HARNESS_ACP_VALIDATE"
HOME_ENV = "HARNESS_ACP_FAKE_HOME"
TRACES_FILE = "traces.jsonl"
"""Under the fake's home: the trace context it was given: one line when it starts (`env`: its `TRACEPARENT` and
`TRACESTATE`, null when unset), then one per client request (`method`, and `meta`: the W3C keys of its
`params._meta` — `traceparent`, `tracestate` — null without any)."""


def traces_seen(home: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """What the fake agent with this home was given as trace context, in order (see `TRACES_FILE`): for tests."""
    path = Path(home) / TRACES_FILE
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
FAKE_VERSION = "1.4.2"


class Wire:
    """Both directions of stdio: one writer lock, a reader thread routing responses and cancels."""

    def __init__(self, validate: bool) -> None:
        self.lock = threading.Lock()
        self.requests: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.answers: dict[Any, queue.Queue[dict[str, Any]]] = {}
        self.cancelled: set[str] = set()
        self.cancel_event = threading.Event()
        self.checker: Any = None
        self.next_id = 0
        if validate:
            from harness_acp.testing.schema import WireChecker

            self.checker = WireChecker()

    def _check(self, msg: Any, sender: str) -> None:
        if self.checker is None:
            return
        try:
            self.checker.check(msg, sender=sender)
        except AssertionError as exc:
            sys.stderr.write(f"fake ACP agent: schema violation: {exc}\n")
            sys.stderr.flush()
            os._exit(3)

    def send(self, msg: dict[str, Any]) -> None:
        msg = {"jsonrpc": "2.0", **msg}
        self._check(msg, "agent")
        with self.lock:
            sys.stdout.write(json.dumps(msg) + "\n")
            sys.stdout.flush()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send({"method": method, "params": params})

    def ask(self, method: str, params: dict[str, Any], timeout: float = 3600.0) -> dict[str, Any] | None:
        """Send a request to the client and wait for its answer (None: the connection closed or timed out)."""
        with self.lock:
            self.next_id += 1
            rid = f"req-{self.next_id}"
        box: queue.Queue[dict[str, Any]] = queue.Queue()
        self.answers[rid] = box
        self.send({"id": rid, "method": method, "params": params})
        try:
            return box.get(timeout=timeout)
        except queue.Empty:
            return None
        finally:
            self.answers.pop(rid, None)

    def read_forever(self, ignore_cancel: bool) -> None:
        for line in sys.stdin:
            line = line.strip()
            if not line:
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                sys.stderr.write(f"fake ACP agent: not JSON: {line[:200]}\n")
                continue
            self._check(msg, "client")
            if "method" in msg and "id" not in msg:
                if msg["method"] == "session/cancel" and not ignore_cancel:
                    self.cancelled.add(str((msg.get("params") or {}).get("sessionId")))
                    self.cancel_event.set()
                continue
            if "method" in msg:
                self.requests.put(msg)
            elif msg.get("id") in self.answers:
                self.answers[msg["id"]].put(msg)
        self.requests.put(None)
        for box in list(self.answers.values()):
            box.put({})


class Agent:
    def __init__(self, args: argparse.Namespace, wire: Wire) -> None:
        self.args, self.wire = args, wire
        self.home = Path(args.home or os.environ.get(HOME_ENV) or tempfile.mkdtemp(prefix="fake-acp-"))
        (self.home / "sessions").mkdir(parents=True, exist_ok=True)
        self.sessions: dict[str, dict[str, Any]] = {}
        self.trace_lock = threading.Lock()  # prompts are handled in threads of their own
        self._trace({"env": {name: os.environ.get(name) for name in ("TRACEPARENT", "TRACESTATE")}})

    def _trace(self, entry: dict[str, Any]) -> None:
        with self.trace_lock, (self.home / TRACES_FILE).open("a") as out:
            out.write(json.dumps(entry) + "\n")

    def _path(self, sid: str) -> Path:
        return self.home / "sessions" / f"{sid}.json"

    def _save(self, sid: str) -> None:
        self._path(sid).write_text(json.dumps(self.sessions[sid]))

    def _setup(self, sid: str) -> dict[str, Any]:
        state = self.sessions[sid]
        return {"modes": modes_state(state["mode"]), "configOptions": [{
            "id": "model", "name": "Model", "category": "model", "type": "select", "currentValue": state["model"],
            "options": [{"value": m, "name": m} for m in ("fake-large", "fake-small")]}]}

    def handle(self, msg: dict[str, Any]) -> None:
        method, params, rid = msg["method"], msg.get("params") or {}, msg["id"]
        meta = params.get("_meta")
        found = {key: meta[key] for key in ("traceparent", "tracestate") if key in meta} if isinstance(meta, dict) \
            else {}
        self._trace({"method": method, "meta": found or None})
        try:
            result = self.dispatch(method, params)
        except LookupError as exc:
            self.wire.send({"id": rid, "error": {"code": -32002, "message": str(exc)}})
            return
        except ValueError as exc:
            self.wire.send({"id": rid, "error": {"code": -32602, "message": str(exc)}})
            return
        except _Failed as exc:
            error: dict[str, Any] = {"code": exc.code, "message": exc.message}
            if exc.data is not None:
                error["data"] = exc.data
            self.wire.send({"id": rid, "error": error})
            return
        if result is not _NO_ANSWER:
            self.wire.send({"id": rid, "result": result})

    def dispatch(self, method: str, params: dict[str, Any]) -> Any:
        args = self.args
        if method == "initialize":
            if args.never_initialize:
                return _NO_ANSWER
            return {"protocolVersion": 1, "agentCapabilities": {
                "loadSession": not args.no_load, "promptCapabilities": {"image": not args.no_image, "audio": False,
                                                                        "embeddedContext": False},
                "mcpCapabilities": {"http": not args.no_mcp_http, "sse": False}},
                "authMethods": [], "agentInfo": {"name": "fake-acp-agent", "title": "Fake ACP agent",
                                                 "version": args.version or FAKE_VERSION}}
        if method == "session/new":
            sid = f"fake-{uuid.uuid4()}"
            self.sessions[sid] = {"history": [], "mode": next(iter(MODES)), "model": "fake-large",
                                  "cwd": params.get("cwd"), "mcp_servers": self._servers(params),
                                  "disallowed": _disallowed(params)}
            self._save(sid)
            return {"sessionId": sid, **self._setup(sid)}
        if method == "session/load":
            sid = str(params.get("sessionId"))
            self._load(sid)
            self.sessions[sid]["mcp_servers"] = self._servers(params)
            for role, text in self.sessions[sid]["history"]:  # replayed before the answer, as the protocol says
                kind = "user_message_chunk" if role == "user" else "agent_message_chunk"
                self.wire.notify("session/update", {"sessionId": sid, "update": {
                    "sessionUpdate": kind, "content": {"type": "text", "text": text}}})
            return self._setup(sid)
        if method == "session/set_mode":
            state = self._state(params)
            if params.get("modeId") not in MODES:
                raise ValueError(f"unknown mode {params.get('modeId')!r}")
            state["mode"] = params["modeId"]
            self.wire.notify("session/update", {"sessionId": params["sessionId"], "update": {
                "sessionUpdate": "current_mode_update", "currentModeId": state["mode"]}})
            return {}
        if method == "session/set_config_option":
            state = self._state(params)
            if params.get("configId") != "model" or not isinstance(params.get("value"), str):
                raise ValueError(f"no config option {params.get('configId')!r} = {params.get('value')!r}")
            state["model"] = params["value"]
            return {"configOptions": self._setup(params["sessionId"])["configOptions"]}
        if method == "session/prompt":
            return self.prompt(params)
        raise _Failed(f"method not found: {method}", None, code=-32601)

    def _servers(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        """`mcpServers`, refused as a real agent should: a transport it did not offer."""
        servers = [s for s in params.get("mcpServers") or () if isinstance(s, dict)]
        for server in servers:
            kind = server.get("type", "stdio")
            if (kind == "http" and self.args.no_mcp_http) or kind == "sse":
                raise ValueError(f"MCP server {server.get('name')!r}: transport {kind} is not supported")
        return servers

    def _load(self, sid: str) -> None:
        if sid not in self.sessions:
            path = self._path(sid)
            if not path.exists():
                raise LookupError(f"Resource not found: session {sid}")
            self.sessions[sid] = json.loads(path.read_text())

    def _state(self, params: dict[str, Any]) -> dict[str, Any]:
        sid = str(params.get("sessionId"))
        self._load(sid)
        return self.sessions[sid]

    def prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        sid = str(params.get("sessionId"))
        state = self._state(params)
        blocks = [b for b in params.get("prompt") or [] if isinstance(b, dict)]
        text = " ".join(str(b.get("text", "")) for b in blocks if b.get("type", "text") == "text")
        images = tuple((str(b.get("mimeType")), len(base64.b64decode(str(b.get("data") or ""))))
                       for b in blocks if b.get("type") == "image")
        if images and self.args.no_image:
            raise ValueError("image content is not supported (promptCapabilities.image is false)")
        scenario = scenario_for(text, self.args.scenario or os.environ.get("HARNESS_FAKE_SCENARIO"),
                                history=state["history"])
        self.wire.cancelled.discard(sid)
        self.wire.cancel_event.clear()
        turn = FakeTurn(self.wire, sid, state, cwd=str(state.get("cwd") or os.getcwd()),
                        crash=self.args.crash or bool(os.environ.get("HARNESS_FAKE_CRASH")), attachments=images)
        stop, said, failure = turn.play(scenario)
        state["history"] += [("user", text), ("agent", said)]
        self._save(sid)
        if failure is not None:
            raise _Failed(*failure)
        return {"stopReason": stop}


def _disallowed(params: dict[str, Any]) -> list[str]:
    """The tools `session/new` forbids as claude-agent-acp takes them (`_meta.claudeCode.options.disallowedTools`)."""
    meta = params.get("_meta") or {}
    options = ((meta.get("claudeCode") or {}).get("options") or {}) if isinstance(meta, dict) else {}
    found = options.get("disallowedTools") if isinstance(options, dict) else None
    return [str(t) for t in found] if isinstance(found, list) else []


class _Failed(Exception):
    def __init__(self, message: str, data: Any, code: int = -32603) -> None:
        super().__init__(message)
        self.message, self.data, self.code = message, data, code


_NO_ANSWER = object()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fake-acp-agent")
    parser.add_argument("--scenario")
    parser.add_argument("--version", dest="version_flag", action="store_true")
    parser.add_argument("--agent-version", dest="version")
    parser.add_argument("--no-load", action="store_true")
    parser.add_argument("--never-initialize", action="store_true")
    parser.add_argument("--ignore-cancel", action="store_true")
    parser.add_argument("--crash", action="store_true")
    parser.add_argument("--home")
    parser.add_argument("--modes", help="id=ask|ask-edits|auto|read-only,... (the session modes it offers)")
    parser.add_argument("--no-exit-codes", action="store_true")
    parser.add_argument("--no-command-output", action="store_true")
    parser.add_argument("--late-tool-updates", action="store_true",
                        help="send each tool call's final update 0.3 s late, after the turn's answer if it ends")
    parser.add_argument("--no-image", action="store_true", help="promptCapabilities.image false")
    parser.add_argument("--no-mcp-http", action="store_true", help="mcpCapabilities.http false")
    args, _ = parser.parse_known_args(argv)
    args.version = args.version or os.environ.get("HARNESS_FAKE_VERSION")
    if args.version_flag:
        print(args.version or FAKE_VERSION)
        return 0
    fake_player.NO_EXIT_CODES = args.no_exit_codes
    fake_player.LATE_TOOL_UPDATES = args.late_tool_updates
    fake_player.NO_COMMAND_OUTPUT = args.no_command_output
    if args.modes:
        MODES.clear()
        MODES.update(dict(pair.split("=", 1) for pair in args.modes.split(",")))
    wire = Wire(validate=bool(os.environ.get(VALIDATE_ENV)))
    agent = Agent(args, wire)
    threading.Thread(target=wire.read_forever, args=(args.ignore_cancel,), daemon=True).start()
    while True:
        msg = wire.requests.get()
        if msg is None:
            return 0
        if msg["method"] == "session/prompt":  # its own thread: set_mode etc. are answered meanwhile
            threading.Thread(target=agent.handle, args=(msg,), daemon=True).start()
        else:
            agent.handle(msg)


if __name__ == "__main__":
    sys.exit(main())
