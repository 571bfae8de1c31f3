"""A scripted Gemini API (v1beta `models/{model}:streamGenerateContent`, `:generateContent`, `:countTokens`).

Layer: offline. Knows the Gemini API's responses, its SSE stream, token counting and Google's error bodies;
which tools a step becomes, what is a turn and what a side call is answered are the `GeminiDialect`'s business.
Knows no agent, nothing of Harness providers or `HarnessEvent`s. Stdlib only. Details: docs/providers.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from harness_core.scripted.backends.dialects import TOOL_STEPS, FunctionCall, ToolStep
from harness_core.scripted.backends.http import Handler, ScriptedBackend, Turn, split_chunks
from harness_core.scripted.backends.messages import SIDE_TEXT
from harness_core.scripted.mcp_calls import McpCall, base64_size, texts_in
from harness_core.scripted.scenarios import EditFile, Fail, ReadFile, RunCommand, Say, Scenario, Stall, WriteFile

__all__ = ["GeminiBackend", "GeminiDialect", "schema_instance"]

_ENVELOPE = re.compile(r"<([a-z_]+)>\n(.*)\n</\1>", re.DOTALL)

_JSON = dict[str, Any]

_ROUTE = re.compile(r"^/(?P<version>v[^/]+)/(?:models|tunedModels)/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")
_TURN_METHODS = ("streamGenerateContent", "generateContent")

_STATUS: dict[int, str] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def schema_instance(schema: Any) -> Any:
    """The smallest value that satisfies a Gemini `Schema` / JSON Schema (types in either case): an object with
    its required properties (all of them if none is required), the first `enum` value, `minimum` or else 1 for a
    number (scores and counts are often 1-based), "", false, and arrays only as long as `minItems` asks. Enough
    for a client that parses a structured answer."""
    if not isinstance(schema, Mapping):
        return None
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return schema_instance(options[0])
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    kind = schema.get("type")
    kind = str(kind[0] if isinstance(kind, list) and kind else kind or "").lower()
    props = schema.get("properties")
    if kind == "object" or (not kind and isinstance(props, Mapping)):
        props = props if isinstance(props, Mapping) else {}
        required = schema.get("required")
        names = [n for n in required if n in props] if isinstance(required, list) and required else list(props)
        return {name: schema_instance(props[name]) for name in names}
    if kind == "array":
        return [schema_instance(schema.get("items")) for _ in range(int(schema.get("minItems") or 0))]
    if kind in ("integer", "number"):
        low = schema.get("minimum")
        return low if isinstance(low, (int, float)) else 1
    if kind == "boolean":
        return False
    if kind == "string":
        return ""
    return None


class GeminiDialect:
    """How tool steps become Gemini `functionCall` parts, and what a request tells about the agent. The Gemini
    API defines no client tools of its own, so the defaults are plain function tools: `run_command`
    (`{"command"}`), `read_file` (`{"path"}`), `write_file` (`{"path", "content"}`) and `edit_file`
    (`{"path", "old_text", "new_text"}`). Subclass and override a method per tool step for your agent's names.

    `cwd` is the working directory when known (the backend's `cwd`, else what `find_cwd` learnt from a
    request): file paths are made absolute against it, and stay relative, as in the scenario, without it.
    """

    def function_call(self, step: ToolStep, cwd: str | None) -> FunctionCall:
        """The `functionCall` for `step`: dispatches to the method for its kind."""
        if isinstance(step, RunCommand):
            return self.run_command(step, cwd)
        if isinstance(step, ReadFile):
            return self.read_file(step, cwd)
        if isinstance(step, WriteFile):
            return self.write_file(step, cwd)
        return self.edit_file(step, cwd)

    def run_command(self, step: RunCommand, cwd: str | None) -> FunctionCall:
        return FunctionCall("run_command", {"command": step.command})

    def tool_result_text(self, response: Any) -> str:
        """The text of a `functionResponse.response`: its `output` (or content texts), or its `error` when it has
        no output (the Gemini API's two keys: a failed or refused call), without the one envelope an agent may mark
        a tool's output with (`<untrusted_context>\n…\n</untrusted_context>`)."""
        error = response.get("error") if isinstance(response, Mapping) and "output" not in response else None
        text = texts_in(error if error is not None else response) or (json.dumps(error) if error is not None else "")
        found = _ENVELOPE.fullmatch(text)
        return found.group(2) if found else text

    def read_file(self, step: ReadFile, cwd: str | None) -> FunctionCall:
        return FunctionCall("read_file", {"path": self.path(step.path, cwd)})

    def write_file(self, step: WriteFile, cwd: str | None) -> FunctionCall:
        return FunctionCall("write_file", {"path": self.path(step.path, cwd), "content": step.content})

    def edit_file(self, step: EditFile, cwd: str | None) -> FunctionCall:
        return FunctionCall(
            "edit_file", {"path": self.path(step.path, cwd), "old_text": step.old, "new_text": step.new}
        )

    @staticmethod
    def path(path: str, cwd: str | None) -> str:
        """`path` made absolute against `cwd` (unchanged if already absolute or `cwd` is None)."""
        if cwd is None or PurePosixPath(path).is_absolute():
            return path
        return str(PurePosixPath(cwd) / path)

    def find_cwd(self, body: Mapping[str, Any]) -> str | None:
        """The working directory the agent states in a request (its system instruction or first message), if
        it states one. Asked only while the backend knows none. Default: None (paths stay relative)."""
        return None

    def is_turn(self, body: Mapping[str, Any], model: str) -> bool:
        """Whether a `generateContent`/`streamGenerateContent` call on `model` with this body is a turn of the
        agent loop (it plays the next scenario step) rather than a side call of the agent's own (routing, a
        next-speaker or loop check, a title, a summary), answered without consuming one. Default: every such
        call is a turn."""
        return True

    def side_text(self, body: Mapping[str, Any], model: str) -> str:
        """The text that answers a side call: the minimal instance of the `responseJsonSchema` (or
        `responseSchema`) the call asks for, as JSON, else `SIDE_TEXT`."""
        config = body.get("generationConfig")
        if isinstance(config, Mapping):
            for key in ("responseJsonSchema", "responseSchema", "response_json_schema", "response_schema"):
                if isinstance(config.get(key), Mapping):
                    return json.dumps(schema_instance(config[key]))
        return SIDE_TEXT


class GeminiBackend(ScriptedBackend):
    """The Gemini API on 127.0.0.1, one scenario step per turn call (`:streamGenerateContent` or
    `:generateContent` on any model the dialect counts as a turn).

    `cwd` is the directory the agent runs in (the dialect makes tool paths absolute against it); without it the
    backend asks the dialect's `find_cwd` on each request until one states it. `dialect` names the agent's tools
    (default: `GeminiDialect()`). Responses name the model of the request's path as `modelVersion`.
    """

    turn_path: ClassVar[str] = "/v1beta/models"
    """The prefix of the turn paths (`/v1beta/models/{model}:streamGenerateContent`); any `/vN...` is accepted."""

    def __init__(
        self, scenario: Scenario, cwd: str | Path | None = None, dialect: GeminiDialect | None = None
    ) -> None:
        super().__init__(scenario)
        self.cwd = str(cwd) if cwd is not None else None
        self.dialect = dialect if dialect is not None else GeminiDialect()

    # -- routing ---------------------------------------------------------------------------------------

    @staticmethod
    def route(path: str) -> tuple[str, str] | None:
        """`(model, method)` of a model API path (`/v1beta/models/M:method?...`), or None for any other path."""
        found = _ROUTE.match(path.split("?", 1)[0])
        return (found.group("model"), found.group("method")) if found else None

    def is_turn_request(self, path: str, body: _JSON | None) -> bool:
        """A turn is a content-generating call the dialect counts as one (`GeminiDialect.is_turn`)."""
        route = self.route(path)
        return route is not None and route[1] in _TURN_METHODS and self.dialect.is_turn(body or {}, route[0])

    def recorded_body(self, path: str, body: _JSON) -> _JSON:
        """The body with the model its path names (`models/{model}:...`) as `model`, as other APIs send it."""
        route = self.route(path)
        return {"model": route[0], **body} if route is not None and "model" not in body else body

    def answer_side(self, http: Handler, method: str, path: str, body: _JSON | None) -> None:
        route = self.route(path)
        if route is not None and route[1] == "countTokens":
            http.send_json(200, {"totalTokens": 100})
        elif route is not None and route[1] in _TURN_METHODS and method == "POST" and body is not None:
            model, kind = route
            self._answer(http, Turn(-1, (), Say(self.dialect.side_text(body, model), chunks=1)), body, model, kind)
        else:
            http.send_json(404, _error(404, f"no such endpoint: {method} {path}"))

    def prompts_in(self, body: _JSON) -> int:
        """The user contents that carry no `functionResponse` (a prompt, not the answer to a tool call)."""
        contents = body.get("contents")
        if not isinstance(contents, list):
            return 0
        return sum(1 for content in contents if isinstance(content, dict) and content.get("role", "user") == "user"
                   and not _has_function_response(content.get("parts")))

    def tool_names_in(self, body: _JSON) -> list[str]:
        """The `name` of each of the `functionDeclarations` of the request's `tools`."""
        names: list[str] = []
        for tool in body.get("tools") or []:
            declared = tool.get("functionDeclarations") if isinstance(tool, dict) else None
            names += [str(d["name"]) for d in declared or [] if isinstance(d, dict) and d.get("name")]
        return names

    def tool_results_in(self, body: _JSON) -> list[str]:
        """The `response` of each `functionResponse` part of the `contents`."""
        return [self.dialect.tool_result_text(part["functionResponse"].get("response"))
                for part in _parts_of(body, None) if isinstance(part.get("functionResponse"), dict)]

    def attachments_in(self, body: _JSON) -> list[tuple[str, int]]:
        """Each `inlineData` part of the user contents: its `mimeType` and decoded size."""
        return [(str(part["inlineData"].get("mimeType")), base64_size(str(part["inlineData"].get("data") or "")))
                for part in _parts_of(body, "user") if isinstance(part.get("inlineData"), dict)]

    # -- answering -------------------------------------------------------------------------------------

    def answer_turn(self, http: Handler, turn: Turn, body: _JSON) -> None:
        model, kind = self.route(http.path) or ("scripted-model", "streamGenerateContent")
        self._answer(http, turn, body, model, kind)

    def _answer(self, http: Handler, turn: Turn, body: _JSON, model: str, kind: str) -> None:
        step = turn.step
        if isinstance(step, Fail):
            http.send_json(step.status, _error(step.status, step.message))
            return
        if kind != "streamGenerateContent":
            if isinstance(step, Stall):  # a hung API: not even a status line
                self.wait(step.seconds)
                return
            http.send_json(200, self._response(turn, self._parts(turn, body), model, final=True))
            return
        http.start_sse()
        if isinstance(step, Stall):
            self.wait(step.seconds)
            return
        for chunk in self._chunks(turn, body, model):
            http.send_data(chunk)

    def _cwd_for(self, body: _JSON) -> str | None:
        if self.cwd is None:
            self.cwd = self.dialect.find_cwd(body)
        return self.cwd

    def _parts(self, turn: Turn, body: _JSON) -> list[_JSON]:
        """The parts of the whole response (as in a non-streaming one): thoughts, then the text or the call."""
        parts: list[_JSON] = [{"text": text, "thought": True} for text in turn.thinks]
        step = turn.step
        if isinstance(step, Say):
            parts.append({"text": step.text})
        elif isinstance(step, McpCall):
            parts.append({"functionCall": {"name": step.name, "args": dict(step.arguments)}})
        elif isinstance(step, TOOL_STEPS):
            call = self.dialect.function_call(step, self._cwd_for(body))
            parts.append({"functionCall": {"name": call.name, "args": dict(call.arguments)}})
        else:
            raise TypeError(f"cannot play step {step!r} as a Gemini response")
        return parts

    def _chunks(self, turn: Turn, body: _JSON, model: str) -> Iterator[_JSON]:
        """The stream of one response, one part per chunk (a `Think` is one whole thought part, as the API streams
        thought summaries; a `Say` is `chunks` text parts); stops early (no final chunk) if the backend stops."""
        pieces: list[_JSON] = []
        for part in self._parts(turn, body):
            if "text" in part and not part.get("thought"):
                step = turn.step
                chunks = step.chunks if isinstance(step, Say) else 1
                pieces.extend({"text": piece} for piece in split_chunks(part["text"], chunks))
            else:
                pieces.append(part)
        delay = turn.step.delay if isinstance(turn.step, Say) else 0.0
        for i, piece in enumerate(pieces):
            if i and "text" in piece and not piece.get("thought") and self.wait(delay):
                return
            yield self._response(turn, [piece], model, final=i == len(pieces) - 1)

    @staticmethod
    def _usage(turn: Turn) -> _JSON:
        prompt, out, thoughts = 100 + 10 * max(turn.index, 0), 20, 5 if turn.thinks else 0
        usage: _JSON = {"promptTokenCount": prompt, "candidatesTokenCount": out, "totalTokenCount": prompt + out}
        if thoughts:
            usage["thoughtsTokenCount"] = thoughts
            usage["totalTokenCount"] += thoughts
        return usage

    def _response(self, turn: Turn, parts: list[_JSON], model: str, *, final: bool) -> _JSON:
        """A `GenerateContentResponse` (a stream chunk, or the whole response when `final` holds all parts)."""
        candidate: _JSON = {"content": {"role": "model", "parts": parts}, "index": 0}
        if final:
            candidate["finishReason"] = "STOP"
        return {
            "candidates": [candidate],
            "usageMetadata": self._usage(turn),
            "modelVersion": model,
            "responseId": f"resp_scripted_{turn.index:04d}" if turn.index >= 0 else "resp_scripted_side",
        }


def _error(status: int, message: str) -> _JSON:
    return {"error": {"code": status, "message": message, "status": _STATUS.get(status, "UNKNOWN")}}


def _parts_of(body: _JSON, role: str | None) -> list[_JSON]:
    """The parts of the request's `contents` (of `role`'s only, unless None), in order."""
    parts: list[_JSON] = []
    for content in body.get("contents") or []:
        if isinstance(content, dict) and (role is None or content.get("role", "user") == role):
            found = content.get("parts")
            parts.extend(p for p in found if isinstance(p, dict)) if isinstance(found, list) else None
    return parts


def _has_function_response(parts: Any) -> bool:
    return isinstance(parts, list) and any(isinstance(p, dict) and "functionResponse" in p for p in parts)
