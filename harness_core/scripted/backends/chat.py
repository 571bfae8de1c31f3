"""A scripted OpenAI Chat Completions API (`POST /v1/chat/completions`, SSE or JSON) that plays a `Scenario`.

Layer: offline. Knows the Chat Completions wire format and OpenAI's error bodies; which tool a step becomes and
what a side call is told are the `ChatDialect`'s business. Knows no agent, nothing of Harness providers or
`HarnessEvent`s. Stdlib only. What it answers: docs/providers.md (offline).
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from harness_core.scripted.backends.dialects import TOOL_STEPS, FunctionCall, ToolStep
from harness_core.scripted.backends.http import Handler, ScriptedBackend, Turn, split_chunks
from harness_core.scripted.backends.messages import SIDE_TEXT
from harness_core.scripted.mcp_calls import McpCall, base64_size, data_url_type, texts_in
from harness_core.scripted.scenarios import EditFile, Fail, ReadFile, RunCommand, Say, Scenario, Stall, WriteFile

__all__ = ["ChatCompletionsBackend", "ChatDialect"]

_DEFERRED_LINE = re.compile(r'^- "([^"\s]+)":', re.MULTILINE)
_SCHEMA_BLOCK = re.compile(r"<function>(.*?)</function>", re.DOTALL)

_JSON = dict[str, Any]

_ERROR_KINDS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


class ChatDialect:
    """How tool steps become Chat Completions `tool_calls`, and what a request tells about the agent. Chat
    Completions has no built-in tools, so the defaults are plain function tools: `shell` (`{"command": "..."}`)
    runs commands, `read_file` (`{"path"}`), `write_file` (`{"path", "content"}`) and `edit_file`
    (`{"path", "old_string", "new_string"}`) handle files.

    `cwd` is the working directory when known (the backend's `cwd`, else what `find_cwd` learnt from a request):
    file paths are made absolute against it, and stay relative, as in the scenario, without it.

        class MyAgentTools(ChatDialect):
            def read_file(self, step: ReadFile, cwd: str | None) -> FunctionCall:
                return FunctionCall("view", {"file": self.path(step.path, cwd)})
    """

    def tool_call(self, step: ToolStep, cwd: str | None) -> FunctionCall:
        """The function call for `step`: dispatches to the method for its kind."""
        if isinstance(step, RunCommand):
            return self.run_command(step, cwd)
        if isinstance(step, ReadFile):
            return self.read_file(step, cwd)
        if isinstance(step, WriteFile):
            return self.write_file(step, cwd)
        return self.edit_file(step, cwd)

    def run_command(self, step: RunCommand, cwd: str | None) -> FunctionCall:
        return FunctionCall("shell", {"command": step.command})

    def read_file(self, step: ReadFile, cwd: str | None) -> FunctionCall:
        return FunctionCall("read_file", {"path": self.path(step.path, cwd)})

    def write_file(self, step: WriteFile, cwd: str | None) -> FunctionCall:
        return FunctionCall("write_file", {"path": self.path(step.path, cwd), "content": step.content})

    def edit_file(self, step: EditFile, cwd: str | None) -> FunctionCall:
        return FunctionCall(
            "edit_file", {"path": self.path(step.path, cwd), "old_string": step.old, "new_string": step.new}
        )

    @staticmethod
    def path(path: str, cwd: str | None) -> str:
        """`path` made absolute against `cwd` (unchanged if already absolute or `cwd` is None)."""
        if cwd is None or PurePosixPath(path).is_absolute():
            return path
        return str(PurePosixPath(cwd) / path)

    def find_cwd(self, body: Mapping[str, Any]) -> str | None:
        """The working directory the agent states in a request (its system prompt, say), if it states one.
        Asked only while the backend knows none. Default: None (paths stay relative)."""
        return None

    def is_turn(self, body: Mapping[str, Any]) -> bool:
        """Whether a `POST /v1/chat/completions` with this body is a turn of the agent loop (it plays the next
        scenario step) rather than a side call of the agent's own (a title, a summary, a check), answered
        without consuming one. Default: every such call is a turn."""
        return True

    def deferred_tools(self, body: Mapping[str, Any]) -> list[str]:
        """The tools a request names as deferred: by default the `- "NAME": "description"` lines of a text that
        speaks of `tool_search` (an agent that lists MCP tools so, reached through `tool_search` and `tool_call`),
        and the tools whose schemas a `tool_search` result shows (`<function>{"name": ...}</function>` blocks of
        the `tool` messages: what a keyword search found)."""
        names: list[str] = []
        for message in body.get("messages") or []:
            content = message.get("content") if isinstance(message, Mapping) else None
            for part in content if isinstance(content, list) else [content]:
                text = part.get("text") if isinstance(part, Mapping) else part
                if isinstance(text, str) and "tool_search" in text:
                    names += _DEFERRED_LINE.findall(text)
                if isinstance(text, str) and message.get("role") == "tool":
                    names += _schema_names(text)
        return names

    def tool_search(self, name: str) -> FunctionCall:
        """The call that shows deferred tool `name`'s schema: by default `tool_search` with `select:NAME`."""
        return FunctionCall("tool_search", {"query": f"select:{name}", "max_results": 1})

    def tool_lookup(self, server: str, tool: str) -> FunctionCall:
        """The call that looks up tool `tool` of MCP server `server` when a request neither offers nor names it
        (the deferred-tool lookup of a model that knows which tool it wants): by default `tool_search` with the
        keywords `SERVER TOOL`, answered with the schemas of the deferred tools that match (`deferred_tools`)."""
        return FunctionCall("tool_search", {"query": f"{server} {tool}"})

    def deferred_call(self, name: str, arguments: Mapping[str, Any]) -> FunctionCall:
        """The call of deferred tool `name` the request does not declare: by default through the bridge tool
        `tool_call` (`{"name": NAME, "arguments": {...}}`)."""
        return FunctionCall("tool_call", {"name": name, "arguments": dict(arguments)})

    def side_reply(self, body: Mapping[str, Any]) -> str | FunctionCall:
        """What answers a side call: assistant text, or one function call (an agent whose side calls force a
        tool to get structured output). Default: the text `SIDE_TEXT`, short and plausible as a title."""
        return SIDE_TEXT


class ChatCompletionsBackend(ScriptedBackend):
    """The OpenAI Chat Completions API on 127.0.0.1, one scenario step per turn call.

    `cwd` is the directory the agent runs in (the dialect makes tool paths absolute against it); without it the
    backend asks the dialect's `find_cwd` on each request until one states it. `dialect` names the agent's
    tools (default: `ChatDialect()`). Completions name the request's `model`, or `default_model`; `GET
    /v1/models` lists `default_model` and every model a request named.
    """

    turn_path: ClassVar[str] = "/v1/chat/completions"
    default_model: ClassVar[str] = "scripted-model"  # only when a request names none

    def __init__(self, scenario: Scenario, cwd: str | Path | None = None, dialect: ChatDialect | None = None) -> None:
        super().__init__(scenario)
        self.cwd = str(cwd) if cwd is not None else None
        self.dialect = dialect if dialect is not None else ChatDialect()
        self._models: dict[str, None] = {self.default_model: None}
        self._side_ids = itertools.count()

    def __enter__(self) -> ChatCompletionsBackend:
        self.start()
        return self

    @property
    def base_url(self) -> str:
        """The API root including `/v1` (what OpenAI clients call `base_url`)."""
        return f"{self.url}/v1"

    # -- routing ---------------------------------------------------------------------------------------

    def is_turn_request(self, path: str, body: _JSON | None) -> bool:
        """A turn is a `/v1/chat/completions` call the dialect counts as one (`ChatDialect.is_turn`)."""
        return path.split("?", 1)[0] == self.turn_path and self.dialect.is_turn(body or {})

    def answer_side(self, http: Handler, method: str, path: str, body: _JSON | None) -> None:
        route = path.split("?", 1)[0].rstrip("/")
        if method == "GET" and route == "/v1/models":
            http.send_json(200, {"object": "list", "data": [_model(name) for name in self._models]})
        elif method == "GET" and route.startswith("/v1/models/"):
            http.send_json(200, _model(route[len("/v1/models/"):]))
        elif route == self.turn_path and method == "POST" and body is not None:
            self._answer_side_call(http, body)
        else:
            super().answer_side(http, method, path, body)

    def prompts_in(self, body: _JSON) -> int:
        """The `user` messages (a tool's result is a `tool` message, not a prompt)."""
        messages = body.get("messages")
        if not isinstance(messages, list):
            return 0
        return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "user")

    def tool_names_in(self, body: _JSON) -> list[str]:
        """The `function.name` of each of the request's `tools`."""
        tools = body.get("tools")
        return [str(t["function"]["name"]) for t in tools if isinstance(t, dict) and isinstance(t.get("function"), dict)
                and t["function"].get("name")] if isinstance(tools, list) else []

    def tool_results_in(self, body: _JSON) -> list[str]:
        """The `content` of each `tool` message."""
        messages = body.get("messages")
        return [texts_in(m.get("content")) for m in messages if isinstance(m, dict) and m.get("role") == "tool"] \
            if isinstance(messages, list) else []

    def deferred_tools_in(self, body: _JSON) -> list[str]:
        """The dialect's `deferred_tools` of the request."""
        return self.dialect.deferred_tools(body)

    def tool_search(self, body: _JSON, name: str) -> tuple[str, dict[str, Any]] | None:
        """The dialect's `tool_search` call, when the request offers that tool."""
        call = self.dialect.tool_search(name)
        return (call.name, dict(call.arguments)) if call.name in self.tool_names_in(body) else None

    def tool_lookup(self, body: _JSON, server: str, tool: str) -> tuple[str, dict[str, Any]] | None:
        """The dialect's `tool_lookup` call, when the request offers that tool."""
        call = self.dialect.tool_lookup(server, tool)
        return (call.name, dict(call.arguments)) if call.name in self.tool_names_in(body) else None

    def deferred_call(self, body: _JSON, name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The dialect's `deferred_call`, when the request offers its bridge tool (else by the tool's name)."""
        call = self.dialect.deferred_call(name, arguments)
        return (call.name, dict(call.arguments)) if call.name in self.tool_names_in(body) else (name, arguments)

    def attachments_in(self, body: _JSON) -> list[tuple[str, int]]:
        """Each `image_url` / `file` part of the user messages (a `data:` URL)."""
        found: list[tuple[str, int]] = []
        for message in body.get("messages") or []:
            content = message.get("content") if isinstance(message, dict) and message.get("role") == "user" else None
            for part in content if isinstance(content, list) else []:
                if not isinstance(part, dict):
                    continue
                inner = part.get("image_url") if part.get("type") == "image_url" else \
                    part.get("file") if part.get("type") == "file" else None
                url = inner.get("url") or inner.get("file_data") if isinstance(inner, dict) else None
                if isinstance(url, str):
                    found.append((data_url_type(url), base64_size(url) if url.startswith("data:") else -1))
        return found

    # -- answering -------------------------------------------------------------------------------------

    def answer_turn(self, http: Handler, turn: Turn, body: _JSON) -> None:
        step = turn.step
        calls = [FunctionCall(step.name, step.arguments)] if isinstance(step, McpCall) else \
            [self.dialect.tool_call(step, self._cwd_for(body))] if isinstance(step, TOOL_STEPS) else []
        self._answer(http, turn, body, calls, f"{turn.index:04d}")

    def _answer_side_call(self, http: Handler, body: _JSON) -> None:
        reply = self.dialect.side_reply(body)
        name = f"side-{next(self._side_ids):04d}"
        if isinstance(reply, str):
            self._answer(http, Turn(-1, (), Say(reply, chunks=1)), body, [], name)
        else:
            self._answer(http, Turn(-1, (), Say("", chunks=1)), body, [reply], name)

    def _answer(self, http: Handler, turn: Turn, body: _JSON, calls: list[FunctionCall], name: str) -> None:
        """Answer with `turn`'s step: an error, a stall, or one completion that says the `Say` text or makes
        `calls` (`name` makes its ids)."""
        step = turn.step
        if isinstance(step, Fail):
            kind, code = _ERROR_KINDS.get(step.status, ("server_error", None))
            http.send_json(step.status, {"error": {"message": step.message, "type": kind, "param": None, "code": code}},
                           self.retry_headers(step.status))
            return
        model = str(body.get("model") or self.default_model)
        self._models.setdefault(model, None)
        reply = _Reply(name, model, turn, calls)
        if not body.get("stream"):
            if isinstance(step, Stall):  # a hung API: not even a status line
                self.wait(step.seconds)
                return
            http.send_json(200, reply.completion())
            return
        http.start_sse()
        if isinstance(step, Stall):
            http.send_data(reply.chunk({"role": "assistant", "content": ""}))
            self.wait(step.seconds)
            return
        for chunk in self._chunks(reply, body):
            http.send_data(chunk)
        http.send_data("[DONE]")

    def _cwd_for(self, body: _JSON) -> str | None:
        if self.cwd is None:
            self.cwd = self.dialect.find_cwd(body)
        return self.cwd

    def _chunks(self, reply: _Reply, body: _JSON) -> Iterator[_JSON]:
        """The chunks of one streamed completion; stops early (no `finish_reason`) if the backend stops."""
        yield reply.chunk({"role": "assistant", "content": ""})
        for text in reply.turn.thinks:
            for piece in split_chunks(text, 3):
                yield reply.chunk({"reasoning_content": piece})
        step = reply.turn.step
        if reply.calls:
            for k, call in enumerate(reply.tool_calls()):
                function = call["function"]
                yield reply.chunk({"tool_calls": [{"index": k, "id": call["id"], "type": "function",
                                                   "function": {"name": function["name"], "arguments": ""}}]})
                for piece in split_chunks(function["arguments"], 2):
                    yield reply.chunk({"tool_calls": [{"index": k, "function": {"arguments": piece}}]})
        elif isinstance(step, Say):
            for i, piece in enumerate(split_chunks(step.text, step.chunks)):
                if i and self.wait(step.delay):
                    return
                yield reply.chunk({"content": piece})
        yield reply.chunk({}, finish_reason=reply.finish_reason)
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            yield {**reply.chunk({}), "choices": [], "usage": reply.usage()}


class _Reply:
    """One completion being rendered: its ids, model, step and function calls, as a whole or as chunks."""

    def __init__(self, name: str, model: str, turn: Turn, calls: list[FunctionCall]) -> None:
        self.name = name
        self.id = f"chatcmpl-scripted-{name}"
        self.created = int(time.time())
        self.model = model
        self.turn = turn
        self.calls = calls
        self.finish_reason = "tool_calls" if calls else "stop"

    def tool_calls(self) -> list[_JSON]:
        return [
            {
                "id": f"call_{self.name}" + (f"_{k}" if k else ""),
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(dict(call.arguments))},
            }
            for k, call in enumerate(self.calls)
        ]

    def usage(self) -> _JSON:
        prompt, completion = 100 + 10 * max(self.turn.index, 0), 20
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 5 if self.turn.thinks else 0},
        }

    def completion(self) -> _JSON:
        step = self.turn.step
        message: _JSON = {"role": "assistant", "content": step.text if isinstance(step, Say) and not self.calls
                          else None}
        if self.turn.thinks:
            message["reasoning_content"] = "".join(self.turn.thinks)
        if self.calls:
            message["tool_calls"] = self.tool_calls()
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
            "usage": self.usage(),
        }

    def chunk(self, delta: _JSON, finish_reason: str | None = None) -> _JSON:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }


def _schema_names(text: str) -> list[str]:
    """The `name` of each `<function>{JSON schema}</function>` block of `text` (a tool search's answer)."""
    names: list[str] = []
    for block in _SCHEMA_BLOCK.findall(text):
        try:
            schema = json.loads(block)
        except ValueError:
            continue
        if isinstance(schema, dict) and isinstance(schema.get("name"), str):
            names.append(schema["name"])
    return names


def _model(name: str) -> _JSON:
    return {"id": name, "object": "model", "created": 0, "owned_by": "scripted"}
