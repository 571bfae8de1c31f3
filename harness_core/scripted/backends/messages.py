"""A scripted Anthropic Messages API (`POST /v1/messages`, SSE or JSON) that plays a `Scenario`.

Layer: offline. Knows the Messages streaming events, non-streaming messages, token counting and Anthropic's error
bodies; which tools a step becomes, what is a turn and where the agent works are the `MessagesDialect`'s
business. Knows no agent, nothing of Harness providers or `HarnessEvent`s. Stdlib only. docs/providers.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from harness_core.scripted.backends.dialects import TOOL_STEPS, MessagesDialect
from harness_core.scripted.backends.http import Handler, ScriptedBackend, Turn, split_chunks
from harness_core.scripted.mcp_calls import McpCall, base64_size, texts_in
from harness_core.scripted.scenarios import Fail, Say, Scenario, Stall

__all__ = ["SIDE_TEXT", "MessagesBackend"]

SIDE_TEXT = "Scripted session"
"""The answer to side calls (titles, summaries): short, and plausible as a title."""

_JSON = dict[str, Any]

_ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


class MessagesBackend(ScriptedBackend):
    """The Anthropic Messages API on 127.0.0.1, one scenario step per turn call.

    `cwd` is the directory the agent runs in (the dialect makes tool paths absolute against it); without it the
    backend asks the dialect's `find_cwd` on each request until one states it. `dialect` names the agent's
    tools (default: `MessagesDialect()`). Messages name the request's `model`, or `default_model`.
    """

    turn_path: ClassVar[str] = "/v1/messages"
    default_model: ClassVar[str] = "scripted-model"  # only when a request names none

    def __init__(
        self, scenario: Scenario, cwd: str | Path | None = None, dialect: MessagesDialect | None = None
    ) -> None:
        super().__init__(scenario)
        self.cwd = str(cwd) if cwd is not None else None
        self.dialect = dialect if dialect is not None else MessagesDialect()

    # -- routing ---------------------------------------------------------------------------------------

    def is_turn_request(self, path: str, body: _JSON | None) -> bool:
        """A turn is a `/v1/messages` call the dialect counts as one (`MessagesDialect.is_turn`)."""
        return path.split("?", 1)[0] == self.turn_path and self.dialect.is_turn(body or {})

    def answer_side(self, http: Handler, method: str, path: str, body: _JSON | None) -> None:
        route = path.split("?", 1)[0]
        if route == "/v1/messages/count_tokens":
            http.send_json(200, {"input_tokens": 100})
        elif route == self.turn_path and method == "POST" and body is not None:
            self._answer(http, Turn(-1, (), Say(SIDE_TEXT, chunks=1)), body)
        else:
            super().answer_side(http, method, path, body)

    def prompts_in(self, body: _JSON) -> int:
        """The user messages that carry no tool result (a prompt, not the answer to a tool call)."""
        messages = body.get("messages")
        if not isinstance(messages, list):
            return 0
        return sum(1 for message in messages if isinstance(message, dict) and message.get("role") == "user"
                   and not _has_tool_result(message.get("content")))

    def tool_names_in(self, body: _JSON) -> list[str]:
        """The `name` of each of the request's `tools`."""
        tools = body.get("tools")
        return [t["name"] for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)] \
            if isinstance(tools, list) else []

    def tool_results_in(self, body: _JSON) -> list[str]:
        """The text of each `tool_result` block of the request's messages."""
        return [texts_in(block.get("content")) for block in _blocks_of(body, None)
                if block.get("type") == "tool_result"]

    def deferred_tools_in(self, body: _JSON) -> list[str]:
        """The dialect's `deferred_tools` of the request."""
        return self.dialect.deferred_tools(body)

    def tool_search(self, body: _JSON, name: str) -> tuple[str, dict[str, Any]] | None:
        """The dialect's `tool_search` call for `name`, when the request offers that tool."""
        call = self.dialect.tool_search(name)
        return call if call is not None and call[0] in self.tool_names_in(body) else None

    def attachments_in(self, body: _JSON) -> list[tuple[str, int]]:
        """Each `image` and `document` block of the user messages: its media type and decoded size."""
        found: list[tuple[str, int]] = []
        for block in _blocks_of(body, "user"):
            source = block.get("source")
            if block.get("type") not in ("image", "document") or not isinstance(source, dict):
                continue
            data = source.get("data")
            if source.get("type") == "base64" and isinstance(data, str):
                found.append((str(source.get("media_type")), base64_size(data)))
            elif source.get("type") == "text" and isinstance(data, str):
                found.append((str(source.get("media_type") or "text/plain"), len(data.encode())))
        return found

    # -- answering -------------------------------------------------------------------------------------

    def answer_turn(self, http: Handler, turn: Turn, body: _JSON) -> None:
        self._answer(http, turn, body)

    def _answer(self, http: Handler, turn: Turn, body: _JSON) -> None:
        step = turn.step
        if isinstance(step, Fail):
            kind = _ERROR_TYPES.get(step.status, "api_error")
            http.send_json(step.status, {"type": "error", "error": {"type": kind, "message": step.message}},
                           self.retry_headers(step.status))
            return
        model = str(body.get("model") or self.default_model)
        if not body.get("stream"):
            if isinstance(step, Stall):  # a hung API: not even a status line
                self.wait(step.seconds)
                return
            http.send_json(200, self._message(turn, body, model))
            return
        http.start_sse()
        if isinstance(step, Stall):
            http.send_event(self._message_start(turn, model))
            self.wait(step.seconds)
            return
        http.send_events(self._events(turn, body, model))

    def _cwd_for(self, body: _JSON) -> str | None:
        if self.cwd is None:
            self.cwd = self.dialect.find_cwd(body)
        return self.cwd

    def _blocks(self, turn: Turn, body: _JSON) -> list[_JSON]:
        """The content blocks of the response (complete, as in a non-streaming message)."""
        blocks: list[_JSON] = [
            {"type": "thinking", "thinking": text, "signature": f"sig_{turn.index}_{k}"}
            for k, text in enumerate(turn.thinks)
        ]
        step = turn.step
        if isinstance(step, Say):
            blocks.append({"type": "text", "text": step.text})
        elif isinstance(step, McpCall):
            blocks.append({"type": "tool_use", "id": f"toolu_{turn.index:04d}", "name": step.name,
                           "input": dict(step.arguments)})
        elif isinstance(step, TOOL_STEPS):
            call = self.dialect.tool_use(step, self._cwd_for(body))
            blocks.append(
                {"type": "tool_use", "id": f"toolu_{turn.index:04d}", "name": call.name, "input": dict(call.input)}
            )
        else:
            raise TypeError(f"cannot play step {step!r} as a Messages response")
        return blocks

    @staticmethod
    def _stop_reason(turn: Turn) -> str:
        return "end_turn" if isinstance(turn.step, Say) else "tool_use"

    @staticmethod
    def _usage(turn: Turn, output: int) -> _JSON:
        return {
            "input_tokens": 100 + 10 * max(turn.index, 0),
            "output_tokens": output,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }

    def _message(self, turn: Turn, body: _JSON, model: str) -> _JSON:
        return {
            "id": f"msg_scripted_{turn.index:04d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": self._blocks(turn, body),
            "stop_reason": self._stop_reason(turn),
            "stop_sequence": None,
            "usage": self._usage(turn, 20),
        }

    def _message_start(self, turn: Turn, model: str) -> _JSON:
        return {
            "type": "message_start",
            "message": {
                "id": f"msg_scripted_{turn.index:04d}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": self._usage(turn, 1),
            },
        }

    def _events(self, turn: Turn, body: _JSON, model: str) -> Iterator[_JSON]:
        """The whole stream of one message; stops early (no `message_stop`) if the backend stops."""
        yield self._message_start(turn, model)
        for index, block in enumerate(self._blocks(turn, body)):
            kind = block["type"]
            if kind == "thinking":
                yield {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                }
                for piece in split_chunks(block["thinking"], 3):
                    yield {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "thinking_delta", "thinking": piece},
                    }
                yield {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "signature_delta", "signature": block["signature"]},
                }
            elif kind == "text":
                yield {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                }
                step = turn.step
                chunks, delay = (step.chunks, step.delay) if isinstance(step, Say) else (1, 0.0)
                for i, piece in enumerate(split_chunks(block["text"], chunks)):
                    if i and self.wait(delay):
                        return
                    yield {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": piece},
                    }
            else:
                yield {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {
                        "type": "tool_use",
                        "id": block["id"],
                        "name": block["name"],
                        "input": {},
                    },
                }
                for piece in split_chunks(json.dumps(block["input"]), 2):
                    yield {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    }
            yield {"type": "content_block_stop", "index": index}
        yield {
            "type": "message_delta",
            "delta": {"stop_reason": self._stop_reason(turn), "stop_sequence": None},
            "usage": {"output_tokens": 20},
        }
        yield {"type": "message_stop"}


def _blocks_of(body: _JSON, role: str | None) -> list[_JSON]:
    """The content blocks of the request's messages (of `role`'s only, unless None), in order."""
    messages = body.get("messages")
    blocks: list[_JSON] = []
    for message in messages if isinstance(messages, list) else []:
        if isinstance(message, dict) and (role is None or message.get("role") == role):
            content = message.get("content")
            blocks.extend(b for b in content if isinstance(b, dict)) if isinstance(content, list) else None
    return blocks


def _has_tool_result(content: Any) -> bool:
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
