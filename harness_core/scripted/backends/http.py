"""The loopback HTTP server and step cursor shared by every scripted model backend.

Layer: offline. Knows HTTP, Server-Sent Events framing and the scenario vocabulary; knows no model API's wire
format (subclasses translate steps), no agent, and nothing of Harness providers, runners or events. Stdlib only.
Its thread, when it binds and how `stop()` ends every wait: docs/providers.md (offline).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar

from harness_core.scripted.mcp_calls import McpCall, attachment_lines, find_mcp_tool
from harness_core.scripted.scenarios import (
    TOOL_RESULT,
    CallMcpTool,
    Fail,
    ReportAttachments,
    Say,
    Scenario,
    Stall,
    Step,
    TakeLong,
    Think,
)

__all__ = ["FINISHED_TEXT", "Exchange", "Handler", "McpCall", "ScriptedBackend", "Turn", "split_chunks"]

FINISHED_TEXT = "(scenario finished)"
"""What a backend says once the scenario's steps are exhausted, so a CLI never hangs waiting."""

LOOKUPS = 60
"""How many times the model looks up by keywords a tool the request neither offers nor names (`tool_lookup`)
before it says the tool is not there: an agent that connects its MCP servers in the background finds them only once
they are up (an agent may give a stdio server 30 s to start)."""
LOOKUP_PAUSE = 0.5
"""Seconds the model takes before it looks a tool up again (the first lookup is at once)."""
_JSON = dict[str, Any]


@dataclass(frozen=True)
class Turn:
    """One model response to play: the reasoning that precedes it and the step itself.

    `step` is never a `Think` or a `TakeLong` (those are folded into `thinks` and `delay`): it is a `Say`, a
    tool step, a `Fail` or a `Stall`, and `answer_turn` renders it in the API's wire format. By then a
    `CallMcpTool` is an `McpCall` (the tool's name as the request lists it), a `ReportAttachments` a `Say`, and
    a `Say`'s `{tool_result}` the text of the last tool result in the request.
    """

    index: int
    """0-based count of turn requests answered before this one (drives deterministic ids and usage)."""
    thinks: tuple[str, ...]
    """The texts of the `Think` steps just before `step`: reasoning that opens the same response."""
    step: Step | McpCall
    delay: float = 0.0
    """Seconds to wait (interruptibly) before answering: the sum of the `TakeLong` steps before it."""


@dataclass(frozen=True)
class Exchange:
    """One HTTP request as received, for assertions: method, path (with query), parsed JSON body or None."""

    method: str
    path: str
    body: _JSON | None
    turn: bool
    """Whether it played a scenario step (a model turn) or was a side request answered on the side."""


def _nothing_left_out(server: str, tool: str) -> None:
    """`ScriptedBackend.left_out` of a backend that knows no run: no filter."""


def split_chunks(text: str, chunks: int) -> list[str]:
    """Split `text` into at most `chunks` non-empty consecutive pieces (at least one, even for "")."""
    n = max(1, min(chunks, len(text)))
    size, extra = divmod(len(text), n)
    pieces: list[str] = []
    pos = 0
    for i in range(n):
        end = pos + size + (1 if i < extra else 0)
        pieces.append(text[pos:end])
        pos = end
    return pieces


class ScriptedBackend:
    """A scripted model API on 127.0.0.1 (ephemeral port) that plays a `Scenario`, one step per request.

    Consecutive `Think` steps attach to the following step's response; `TakeLong` delays the next one;
    every other step is one model response. When the steps are exhausted it answers `FINISHED_TEXT`; a
    `Fail` or a `Stall` that is the last step is played again for every later turn request (a down API stays
    down and a hung one stays hung, so a CLI's retries fail or hang too instead of meeting `FINISHED_TEXT`).

    Use as a context manager (`with Backend(scenario) as b: ... b.url ...`) or `start()`/`stop()`. `url`
    may be read before `start()` (it binds the port then); a stopped backend cannot be started again.

    A backend for another model API subclasses this: set `turn_path`, implement `answer_turn` (render the
    `Turn` with the `Handler`'s helpers: `send_json` for a whole response or an error, `start_sse` then
    `send_event`/`send_data` for a stream; wait with `wait()` so that `stop()` cuts a delay short), and
    refine `is_turn_request`/`answer_side` if the API has other endpoints. Every request arrives on its own
    server thread; `next_turn()` is the only shared state and takes a lock.
    """

    turn_path: ClassVar[str] = "/"
    """The POST path (without query) of a model turn request; subclasses set it."""
    retry_after: ClassVar[float | None] = 0.05
    """Seconds an error answer to be retried (429, 5xx) tells the client to wait, in `retry_headers`: an agent that
    honours them retries at once instead of backing off exponentially (an agent that retries a 429 7 times over
    ~75 s otherwise: docs/providers.md names it). None: no such headers."""
    replay_each_prompt: bool = False
    """Play the scenario again from its first step for every new user prompt once it is played out (a request
    carrying more user prompts than any before it: the next turn of a session, in the same conversation), so
    every turn of `harness chat --offline` gets an answer. Off by default (one scenario, one pass);
    `offline_spec`, which gives each conversation its own backend, turns it on."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.requests: list[_JSON] = []
        """Parsed JSON bodies of the turn requests received, in order."""
        self.exchanges: list[Exchange] = []
        """Every request received (turns and side requests), in order."""
        self.tool_results: list[str] = []
        """The text of the tool result each turn request after an MCP tool call carried, in order."""
        self.left_out: Callable[[str, str], str | None] = _nothing_left_out
        """Why the run's tool filter leaves out tool T of MCP server S (`left_out(S, T)`), or None: what the refusal
        of a call of a tool the request does not offer says (the offline setup sets it from the run's spec)."""
        self._after_mcp_call = False
        self._searched: set[str] = set()
        self._lookups: dict[tuple[str, str], int] = {}
        self._listeners: list[Callable[[Exchange], None]] = []
        self._cursor = 0
        self._turns = 0
        self._prompts = 0
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------------

    def _bind(self) -> _Server:
        """The listening server, bound to 127.0.0.1 on an ephemeral port on first use."""
        if self._stopped.is_set():
            raise RuntimeError("backend stopped; create a new one")
        if self._server is None:
            server = _Server(("127.0.0.1", 0), Handler)
            server.backend = self
            self._server = server
        return self._server

    def start(self) -> ScriptedBackend:
        """Serve in a daemon thread (binding first if `url` was not read yet). Returns self.

        Raises:
            RuntimeError: the backend was already started, or was stopped.
        """
        server = self._bind()
        if self._thread is not None:
            raise RuntimeError("backend already started")
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"{type(self).__name__}:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release every stalled or waiting stream, stop serving and close the socket. Idempotent."""
        self._stopped.set()
        server, self._server = self._server, None
        if server is None:
            return
        if self._thread is not None:
            server.shutdown()  # only once serve_forever runs: it would wait forever otherwise
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedBackend:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    @property
    def port(self) -> int:
        """The bound port (binds on first use).

        Raises:
            RuntimeError: the backend was stopped.
        """
        return int(self._bind().server_address[1])

    @property
    def url(self) -> str:
        """Base URL, e.g. `http://127.0.0.1:PORT` (subclasses may add the API prefix)."""
        return f"http://127.0.0.1:{self.port}"

    # -- the step cursor -------------------------------------------------------------------------------

    @property
    def remaining(self) -> int:
        """Steps not yet played."""
        with self._lock:
            return len(self.scenario.steps) - self._cursor

    def next_turn(self) -> Turn:
        """Take the next model response off the script (thread-safe; does not wait for delays)."""
        steps = self.scenario.steps
        with self._lock:
            index = self._turns
            self._turns += 1
            thinks: list[str] = []
            delay = 0.0
            while self._cursor < len(steps):
                step = steps[self._cursor]
                self._cursor += 1
                if isinstance(step, Think):
                    thinks.append(step.text)
                elif isinstance(step, TakeLong):
                    delay += step.seconds
                else:
                    return Turn(index, tuple(thinks), step, delay)
            if steps and isinstance(steps[-1], (Fail, Stall)) and not thinks and not delay:
                return Turn(index, (), steps[-1])
            return Turn(index, tuple(thinks), Say(FINISHED_TEXT, chunks=1), delay)

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`, waking early when the backend stops. Returns True if stopped."""
        if seconds <= 0:
            return self._stopped.is_set()
        return self._stopped.wait(seconds)

    def on_request(self, callback: Callable[[Exchange], None]) -> None:
        """Call `callback(exchange)` for every request as it arrives, after it is recorded and before it is
        answered (on the server's handler thread: keep it quick). The contract suite uses it to arm a fault
        when the first model request of a turn arrives."""
        self._listeners.append(callback)

    def _rewind_on_new_prompt(self, body: _JSON) -> None:
        prompts = self.prompts_in(body)
        with self._lock:
            if prompts > self._prompts:
                # A later prompt of the conversation, once the scenario is played out: play it again. A prompt that
                # arrives mid-scenario (input steered into the running turn, or the turn after an interrupted one)
                # goes on with the steps left.
                if self._prompts and self._cursor >= len(self.scenario.steps):
                    self._cursor = 0
                self._prompts = prompts

    def _resolved(self, turn: Turn, body: _JSON) -> Turn:
        """`turn` with its step made playable against this request: an MCP call named as the request lists the
        tool (an HTTP 400 saying why when it cannot be found), attachments reported, `{tool_result}` filled in."""
        results = self.tool_results_in(body)
        with self._lock:
            if self._after_mcp_call:
                self.tool_results.append(results[-1] if results else "")
            self._after_mcp_call = isinstance(turn.step, CallMcpTool)
        step = turn.step
        if isinstance(step, CallMcpTool):
            try:
                name = find_mcp_tool(self.tool_names_in(body), step.server, step.tool,
                                     left_out=self.left_out(step.server, step.tool))
            except LookupError as exc:
                found = self._deferred(body, step, exc)
                if isinstance(found, Fail):  # deterministic: an agent that sends the request again fails again,
                    with self._lock:       # rather than getting the next step (and "(no tool result)" as success)
                        self._cursor -= 1
                        self._after_mcp_call = False
                    return dataclasses.replace(turn, step=found)
                name, search = found
                if search is not None:  # load the tool first, then play this step again: the call itself
                    with self._lock:
                        self._cursor -= 1
                        self._after_mcp_call = False
                        again = self._lookups.get((step.server, step.tool), 0) > 1  # a model that looks again
                    return dataclasses.replace(turn, step=McpCall(search[0], search[1], step, search=True),
                                               delay=turn.delay + (LOOKUP_PAUSE if again else 0.0))
                if name not in self.tool_names_in(body):  # still hidden: through the agent's bridge, if it has one
                    via, arguments = self.deferred_call(body, name, dict(step.args))
                    return dataclasses.replace(turn, step=McpCall(via, arguments, step))
            return dataclasses.replace(turn, step=McpCall(name, dict(step.args), step))
        if isinstance(step, ReportAttachments):
            return dataclasses.replace(turn, step=Say(attachment_lines(self.attachments_in(body)), chunks=step.chunks))
        if isinstance(step, Say) and TOOL_RESULT in step.text:
            said = step.text.replace(TOOL_RESULT, results[-1] if results else "(no tool result)")
            return dataclasses.replace(turn, step=dataclasses.replace(step, text=said))
        return turn

    def _deferred(self, body: _JSON, step: CallMcpTool,
                  missing: LookupError) -> Fail | tuple[str, tuple[str, dict[str, Any]] | None]:
        """A tool the request does not list but names as deferred (loaded through the agent's tool search): its
        name and the search call that loads it (None once searched), or the `Fail` saying it is not there."""
        deferred = self.deferred_tools_in(body)  # names, or namespaces (`mcp__server`) whose tools are not listed
        try:
            name = find_mcp_tool([*deferred, *(f"{d}__{step.tool}" for d in deferred)], step.server, step.tool)
        except LookupError:
            return self._looked_up(body, step, missing)
        with self._lock:
            if name in self._searched or (step.server, step.tool) in self._lookups:  # a lookup found it: reviewed
                self._searched.add(name)
                return name, None
            self._searched.add(name)
        search = self.tool_search(body, name)
        return (name, search) if search is not None else Fail(400, str(missing))

    def _looked_up(self, body: _JSON, step: CallMcpTool,
                   missing: LookupError) -> Fail | tuple[str, tuple[str, dict[str, Any]] | None]:
        """A tool the request neither offers nor names as deferred: the keyword search that looks it up (once per
        tool, as a model that knows what it wants does), or the `Fail` saying it is not there."""
        lookup = self.tool_lookup(body, step.server, step.tool)
        if lookup is None:
            return Fail(400, str(missing))
        with self._lock:
            looked = self._lookups.get((step.server, step.tool), 0)
            if looked >= LOOKUPS:
                return Fail(400, f"{missing}; the agent's tool search did not find it either ({looked} searches over "
                                 f"{looked * LOOKUP_PAUSE:g} s)")
            self._lookups[(step.server, step.tool)] = looked + 1
        return "", lookup

    # -- subclass interface ----------------------------------------------------------------------------

    def deferred_tools_in(self, body: _JSON) -> list[str]:
        """The tools a turn request names without offering them yet (an agent that defers its tools behind a tool
        search), or the namespaces whose tools it defers (`mcp__server`: its tool `t` is `mcp__server__t`);
        subclasses read them in their API's shape (default: none)."""
        return []

    def tool_search(self, body: _JSON, name: str) -> tuple[str, dict[str, Any]] | None:
        """The call (tool name, arguments) that loads deferred tool `name` through the agent's tool search, or
        None when the agent has none (default)."""
        return None

    def tool_lookup(self, body: _JSON, server: str, tool: str) -> tuple[str, dict[str, Any]] | None:
        """The call (tool name, arguments) that looks up tool `tool` of MCP server `server` by keywords through the
        agent's tool search, when the request neither offers nor names it (an agent that connects its MCP servers
        late and lists their tools only once searched), or None when the request offers no such search (default).
        What the search answers must then name the tool in `deferred_tools_in` (or the agent offer it)."""
        return None

    def deferred_call(self, body: _JSON, name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The call of deferred tool `name` once searched, when the request still does not list it (default: by
        its name; an agent that calls hidden tools through a bridge tool names the bridge)."""
        return name, arguments

    def tool_names_in(self, body: _JSON) -> list[str]:
        """The names of the tools a turn request offers the model, as the agent spells them (for MCP calls);
        subclasses read them in their API's shape (default: none)."""
        return []

    def tool_results_in(self, body: _JSON) -> list[str]:
        """The texts of the tool results a turn request carries, in conversation order (for `{tool_result}`);
        subclasses read them in their API's shape (default: none)."""
        return []

    def attachments_in(self, body: _JSON) -> list[tuple[str, int]]:
        """The media type and size in bytes of each image or file the user's messages of a turn request carry
        (for `ReportAttachments`); subclasses read them in their API's shape (default: none)."""
        return []

    def prompts_in(self, body: _JSON) -> int:
        """How many user prompts the conversation in this turn request holds (for `replay_each_prompt`);
        subclasses count them in their API's shape (default: 0, never replays)."""
        return 0

    def is_turn_request(self, path: str, body: _JSON | None) -> bool:
        """Whether this POST plays a scenario step. Subclasses refine it to recognise side requests."""
        return path.split("?", 1)[0] == self.turn_path

    def answer_turn(self, http: Handler, turn: Turn, body: _JSON) -> None:
        """Answer a turn request (`body` is its parsed JSON) with `turn`, in the API's wire format.

        A `Fail` step is an HTTP error status with the API's error body; a `Stall` starts the response (or not,
        as the API's clients would see a hung server) and then `wait(step.seconds)`s; anything else is one
        whole model response. Stop early, without the final event, when `wait()` returns True.
        """
        raise NotImplementedError

    def recorded_body(self, path: str, body: _JSON) -> _JSON:
        """What `requests` keeps of a turn request (default: its body as sent; an API that names the model in
        the path adds it, so that `request["model"]` means the same for every backend)."""
        return body

    def retry_headers(self, status: int) -> dict[str, str]:
        """The headers of an error answer with `status` that tell the client when to retry, as the real APIs send
        them: for a 429 or a 5xx, `retry-after` (whole seconds, at least 1: the standard header) and `retry-after-ms`
        (what the OpenAI and Anthropic SDKs and the agents built on them read first), from `retry_after`. A backend
        whose API says it otherwise (in the error body) overrides this; none for other statuses."""
        if self.retry_after is None or not (status == 429 or status >= 500):
            return {}
        return {"retry-after": str(max(1, math.ceil(self.retry_after))),
                "retry-after-ms": str(max(0, round(self.retry_after * 1000)))}

    def answer_side(self, http: Handler, method: str, path: str, body: _JSON | None) -> None:
        """Answer a request that is not a model turn (default: a JSON 404)."""
        http.send_json(404, {"error": {"message": f"no such endpoint: {method} {path}", "type": "not_found"}})

    # -- request dispatch (called on the server's handler threads) -------------------------------------

    def _dispatch(self, http: Handler, method: str) -> None:
        body: _JSON | None = None
        raw = http.read_body()
        if raw:
            try:
                parsed = json.loads(raw)
            except ValueError:
                parsed = None
            body = parsed if isinstance(parsed, dict) else None
        turn = method == "POST" and body is not None and self.is_turn_request(http.path, body)
        exchange = Exchange(method, http.path, body, turn)
        with self._lock:
            self.exchanges.append(exchange)
            if turn and body is not None:
                self.requests.append(self.recorded_body(http.path, body))
        for listener in self._listeners:
            listener(exchange)
        if turn and body is not None:
            if self.replay_each_prompt:
                self._rewind_on_new_prompt(body)
            step = self._resolved(self.next_turn(), body)
            if self.wait(step.delay):
                http.close_connection = True
                return
            self.answer_turn(http, step, body)
        else:
            self.answer_side(http, method, http.path, body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    backend: ScriptedBackend


class Handler(BaseHTTPRequestHandler):
    """One connection; every response closes it (HTTP/1.0 style), so a stream ends at EOF at the latest."""

    server: _Server
    server_version = "HarnessScriptedBackend/1"

    def do_POST(self) -> None:
        self._run("POST")

    def do_GET(self) -> None:
        self._run("GET")

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _run(self, method: str) -> None:
        # The client may go away mid-stream (an interrupt or a killed CLI): then there is nothing to answer.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.server.backend._dispatch(self, method)
        self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: requests are recorded in ScriptedBackend.exchanges

    def read_body(self) -> bytes:
        """The request body, sized by Content-Length or sent with chunked transfer encoding."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            parts: list[bytes] = []
            while size := int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(parts)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    # -- response helpers ------------------------------------------------------------------------------

    def send_json(self, status: int, payload: Mapping[str, Any], headers: Mapping[str, str] = {}) -> None:
        """A whole JSON response with `status` (a model response, or an error body with an error status)."""
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def start_sse(self, headers: Mapping[str, str] = {}) -> None:
        """Status 200 and the headers of a Server-Sent Events stream; frames follow with `send_event`/`send_data`
        and the stream ends when the handler returns (the connection closes)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.flush()

    def send_event(self, event: Mapping[str, Any], *, name: str | None = None) -> None:
        """One named SSE frame: `event: NAME` and `data: <json of event>`. NAME defaults to `event["type"]`,
        as both OpenAI Responses and Anthropic Messages streams name their frames; for an API whose frames
        carry no name (Chat Completions, Gemini) use `send_data`."""
        self._frame(f"event: {name if name is not None else event['type']}\ndata: {_compact(event)}\n\n")

    def send_data(self, data: Mapping[str, Any] | str) -> None:
        """One unnamed SSE frame: `data: <json>` (or `data: <text>` for a string, e.g. `send_data("[DONE]")`)."""
        self._frame(f"data: {data if isinstance(data, str) else _compact(data)}\n\n")

    def send_events(self, events: Iterator[Mapping[str, Any]]) -> None:
        """`send_event` for each event, as the iterator yields them (a generator may `wait()` in between)."""
        for event in events:
            self.send_event(event)

    def _frame(self, frame: str) -> None:
        self.wfile.write(frame.encode())
        self.wfile.flush()


def _compact(payload: Mapping[str, Any]) -> str:
    return json.dumps(payload, separators=(",", ":"))
