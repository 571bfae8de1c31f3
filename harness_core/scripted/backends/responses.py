"""A scripted OpenAI Responses API (`POST /v1/responses`, SSE) that plays a `Scenario` for any agent.

Layer: offline. Knows the Responses streaming events and OpenAI's error bodies; how a tool step becomes a
`function_call` or `custom_tool_call` item is the `ResponsesDialect`'s business (default: `exec_command` and
`apply_patch`). Knows no agent, nothing of Harness providers or `HarnessEvent`s. Stdlib only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from harness_core.scripted.backends.dialects import TOOL_STEPS, CustomToolCall, ResponsesDialect
from harness_core.scripted.backends.http import Handler, ScriptedBackend, Turn, split_chunks
from harness_core.scripted.mcp_calls import McpCall, base64_size, data_url_type, texts_in
from harness_core.scripted.scenarios import Fail, Say, Scenario, Stall

__all__ = ["ResponsesBackend"]

_JSON = dict[str, Any]

_NAMESPACED = "::"
"""Between a namespace and the name of one of its tools, in the names `tool_names_in` gives."""
_DEFERRED = re.compile(r"^- ([A-Za-z0-9_.-]+):", re.MULTILINE)
_ERROR_KINDS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


class ResponsesBackend(ScriptedBackend):
    """The OpenAI Responses API on 127.0.0.1, one scenario step per `POST /v1/responses`.

    `cwd` (optional) is the agent's workspace: the dialect may read files there (the default one does, so that
    an edit of part of a line becomes an exact patch hunk). `dialect` names the agent's tools (default:
    `ResponsesDialect()`). Responses name the request's `model`, or `default_model` when it sends none.
    """

    turn_path: ClassVar[str] = "/v1/responses"
    default_model: ClassVar[str] = "gpt-5.5"
    _issued: ClassVar[set[str]] = set()
    """Response ids any backend of this process has completed: the responses the API would have stored (so a
    `previous_response_id` chains across backends, as across API sessions)."""
    refuse_unknown_previous: bool = False
    """Answer a `previous_response_id` no backend of this process issued with the API's 404, as the real API
    does (the contract suite sets it; off by default, so a test may chain onto any id)."""

    def __init__(
        self, scenario: Scenario, cwd: str | Path | None = None, dialect: ResponsesDialect | None = None
    ) -> None:
        super().__init__(scenario)
        self._chained_prompts: dict[str, int] = {}
        """The prompts of the conversation each response this backend gave answers (for `prompts_in`)."""
        self.cwd = Path(cwd) if cwd is not None else None
        self.dialect = dialect if dialect is not None else ResponsesDialect()

    @property
    def base_url(self) -> str:
        """The API root including `/v1` (what OpenAI clients call `base_url`)."""
        return f"{self.url}/v1"

    def prompts_in(self, body: _JSON) -> int:
        """The user-role messages of `input` (a tool call's output is not one), plus those of the responses it
        chains onto (`previous_response_id`: an agent that chains sends only the new input)."""
        items = body.get("input")
        previous = body.get("previous_response_id")
        before = self._chained_prompts.get(previous, 0) if isinstance(previous, str) else 0
        if not isinstance(items, list):
            return before
        return before + sum(1 for item in items if isinstance(item, dict) and item.get("role") == "user"
                            and item.get("type", "message") == "message")

    def tool_names_in(self, body: _JSON) -> list[str]:
        """The `name` of each of the request's `tools` and of the tools a `tool_search_output` item of its `input`
        loaded (a tool of a `namespace` as `NAMESPACE` + `::` + its name: the call names both)."""
        names: list[str] = []
        loaded = [item.get("tools") for item in body.get("input") or []
                  if isinstance(item, dict) and item.get("type") == "tool_search_output"]
        for tool in [*(body.get("tools") or []), *(t for found in loaded if isinstance(found, list) for t in found)]:
            if not isinstance(tool, dict):
                continue
            if isinstance(tool.get("tools"), list):
                prefix = str(tool.get("name") or "")
                names += [f"{prefix}{_NAMESPACED}{t['name']}" for t in tool["tools"]
                          if isinstance(t, dict) and isinstance(t.get("name"), str)]
            elif isinstance(tool.get("name"), str):
                names.append(tool["name"])
        return names

    def deferred_tools_in(self, body: _JSON) -> list[str]:
        """The namespaces an input text lists under `Deferred tool namespaces:` (`- mcp__server: ...`)."""
        found: list[str] = []
        for item in body.get("input") or []:
            content = item.get("content") if isinstance(item, dict) else None
            for part in content if isinstance(content, list) else []:
                text = part.get("text") if isinstance(part, dict) else None
                if isinstance(text, str) and "Deferred tool namespaces:" in text:
                    found += _DEFERRED.findall(text.partition("Deferred tool namespaces:")[2])
        return found

    def tool_search(self, body: _JSON, name: str) -> tuple[str, dict[str, Any]] | None:
        """A `tool_search_call` (client-executed) for the tool, when the request has a `tool_search` tool."""
        if not any(isinstance(t, dict) and t.get("type") == "tool_search" for t in body.get("tools") or []):
            return None
        namespace, _, tool = name.rpartition("__")
        return "tool_search", {"query": f"{namespace} {tool}".strip(), "limit": 1}

    def tool_results_in(self, body: _JSON) -> list[str]:
        """The result each `function_call_output` / `custom_tool_call_output` item of the `input` carries, as the
        dialect reads its `output` (`ResponsesDialect.tool_result_text`)."""
        items = body.get("input")
        return [self.dialect.tool_result_text(texts_in(item.get("output"))) for item in items if isinstance(item, dict)
                and item.get("type") in ("function_call_output", "custom_tool_call_output")] \
            if isinstance(items, list) else []

    def attachments_in(self, body: _JSON) -> list[tuple[str, int]]:
        """Each `input_image` / `input_file` part of the user messages of the `input` (a `data:` URL or base64)."""
        found: list[tuple[str, int]] = []
        for item in body.get("input") or []:
            content = item.get("content") if isinstance(item, dict) and item.get("role") == "user" else None
            for part in content if isinstance(content, list) else []:
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "input_image" and isinstance(part.get("image_url"), str):
                    url = part["image_url"]
                    found.append((data_url_type(url, "image/*"), base64_size(url) if url.startswith("data:") else -1))
                elif part.get("type") == "input_file" and isinstance(part.get("file_data"), str):
                    data = part["file_data"]
                    found.append((data_url_type(data), base64_size(data)))
        return found

    # -- answering -------------------------------------------------------------------------------------

    def answer_turn(self, http: Handler, turn: Turn, body: _JSON) -> None:
        step = turn.step
        previous = body.get("previous_response_id")
        if previous and self.refuse_unknown_previous and previous not in ResponsesBackend._issued:
            http.send_json(404, {"error": {"message": f"Previous response with id '{previous}' not found.",
                                           "type": "invalid_request_error", "param": "previous_response_id",
                                           "code": "previous_response_not_found"}})
            return
        if isinstance(step, Fail):
            kind, code = _ERROR_KINDS.get(step.status, ("server_error", None))
            http.send_json(
                step.status, {"error": {"message": step.message, "type": kind, "param": None, "code": code}},
                self.retry_headers(step.status),
            )
            return
        model = str(body.get("model") or self.default_model)
        self._chained_prompts[f"resp_{turn.index}"] = self.prompts_in(body)  # before a chained request can come
        http.start_sse()
        if isinstance(step, Stall):
            http.send_event(self._created(turn, model))
            self.wait(step.seconds)
            return
        http.send_events(self._events(turn, model))

    def _created(self, turn: Turn, model: str) -> _JSON:
        return {
            "type": "response.created",
            "response": {
                "id": f"resp_{turn.index}",
                "object": "response",
                "status": "in_progress",
                "model": model,
                "output": [],
            },
        }

    def _events(self, turn: Turn, model: str) -> Iterator[_JSON]:
        """The whole stream of one response; stops early (no `response.completed`) if the backend stops."""
        yield self._created(turn, model)
        out = 0
        for k, text in enumerate(turn.thinks):
            yield from self._reasoning(turn, out, f"rs_{turn.index}_{k}", text)
            out += 1
        step = turn.step
        if isinstance(step, Say):
            item_id = f"msg_{turn.index}"
            yield {
                "type": "response.output_item.added",
                "output_index": out,
                "item": {
                    "type": "message",
                    "id": item_id,
                    "role": "assistant",
                    "status": "in_progress",
                    "content": [],
                },
            }
            yield {
                "type": "response.content_part.added",
                "item_id": item_id,
                "output_index": out,
                "content_index": 0,
                "part": {"type": "output_text", "text": "", "annotations": []},
            }
            for i, piece in enumerate(split_chunks(step.text, step.chunks)):
                if i and self.wait(step.delay):
                    return
                yield {
                    "type": "response.output_text.delta",
                    "item_id": item_id,
                    "output_index": out,
                    "content_index": 0,
                    "delta": piece,
                }
            part = {"type": "output_text", "text": step.text, "annotations": []}
            yield {
                "type": "response.output_text.done",
                "item_id": item_id,
                "output_index": out,
                "content_index": 0,
                "text": step.text,
            }
            yield {
                "type": "response.content_part.done",
                "item_id": item_id,
                "output_index": out,
                "content_index": 0,
                "part": part,
            }
            yield {
                "type": "response.output_item.done",
                "output_index": out,
                "item": {
                    "type": "message",
                    "id": item_id,
                    "role": "assistant",
                    "status": "completed",
                    "content": [part],
                },
            }
        else:
            yield {"type": "response.output_item.done", "output_index": out, "item": self._tool_item(turn)}
        ResponsesBackend._issued.add(f"resp_{turn.index}")
        yield {
            "type": "response.completed",
            "response": {
                "id": f"resp_{turn.index}",
                "object": "response",
                "status": "completed",
                "model": model,
                "usage": self._usage(turn),
            },
        }

    def _reasoning(self, turn: Turn, out: int, item_id: str, text: str) -> Iterator[_JSON]:
        yield {
            "type": "response.output_item.added",
            "output_index": out,
            "item": {"type": "reasoning", "id": item_id, "summary": []},
        }
        yield {
            "type": "response.reasoning_summary_part.added",
            "item_id": item_id,
            "output_index": out,
            "summary_index": 0,
            "part": {"type": "summary_text", "text": ""},
        }
        for piece in split_chunks(text, 3):
            yield {
                "type": "response.reasoning_summary_text.delta",
                "item_id": item_id,
                "output_index": out,
                "summary_index": 0,
                "delta": piece,
            }
        yield {
            "type": "response.reasoning_summary_text.done",
            "item_id": item_id,
            "output_index": out,
            "summary_index": 0,
            "text": text,
        }
        yield {
            "type": "response.reasoning_summary_part.done",
            "item_id": item_id,
            "output_index": out,
            "summary_index": 0,
            "part": {"type": "summary_text", "text": text},
        }
        yield {
            "type": "response.output_item.done",
            "output_index": out,
            "item": {"type": "reasoning", "id": item_id, "summary": [{"type": "summary_text", "text": text}]},
        }

    def _tool_item(self, turn: Turn) -> _JSON:
        step = turn.step
        if isinstance(step, McpCall) and step.search:
            return {"type": "tool_search_call", "id": f"ts_{turn.index}", "call_id": f"call_{turn.index}",
                    "execution": "client", "arguments": dict(step.arguments), "status": "completed"}
        if isinstance(step, McpCall):
            namespace, _, name = step.name.rpartition(_NAMESPACED)
            item = {"type": "function_call", "id": f"fc_{turn.index}", "call_id": f"call_{turn.index}",
                    "name": name, "arguments": json.dumps(dict(step.arguments)), "status": "completed"}
            return {**item, "namespace": namespace} if namespace else item
        if not isinstance(step, TOOL_STEPS):
            raise TypeError(f"cannot play step {step!r} as a Responses item")
        call = self.dialect.tool_call(step, self.cwd)
        if isinstance(call, CustomToolCall):
            return {
                "type": "custom_tool_call",
                "id": f"ctc_{turn.index}",
                "call_id": f"call_{turn.index}",
                "name": call.name,
                "input": call.input,
                "status": "completed",
            }
        return {
            "type": "function_call",
            "id": f"fc_{turn.index}",
            "call_id": f"call_{turn.index}",
            "name": call.name,
            "arguments": json.dumps(dict(call.arguments)),
            "status": "completed",
        }

    @staticmethod
    def _usage(turn: Turn) -> _JSON:
        inp, out = 100 + 10 * turn.index, 20
        return {
            "input_tokens": inp,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": out,
            "output_tokens_details": {"reasoning_tokens": 5 if turn.thinks else 0},
            "total_tokens": inp + out,
        }

