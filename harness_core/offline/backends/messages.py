"""A scripted Anthropic Messages API (`POST /v1/messages`, SSE or JSON) so real Claude Code runs offline.

Layer: testing. Knows the Messages streaming events Claude Code consumes and its Bash/Read/Write/Edit tools;
knows nothing of Harness providers, the stream-json output of `claude -p`, or `HarnessEvent`s. Stdlib only.

Point Claude Code at it with `claude_env(home)`. Side requests that are not model turns (token counting, and
any call without the agent loop's `tools`/`thinking` keys, e.g. a title or summary) are answered without
consuming a scenario step. Observed with 2.1.328 and CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1: `claude -p`
(plain, `--bare`, `--setting-sources ""`, stream-json input over two turns) sends no side requests at all;
the only extra call is a non-streaming retry of a turn after a broken or stalled stream, which is a turn
(same body, `stream` false) and gets a JSON message. A `Stall` that is the last step stalls that retry too
(no status line, no body until `stop()`), so a stalled scenario fails instead of quietly ending in
`FINISHED_TEXT`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from harness_core.offline.backends.http import Handler, ScriptedBackend, Turn, split_chunks
from harness_core.offline.scenarios import (
    EditFile,
    Fail,
    ReadFile,
    RunCommand,
    Say,
    Scenario,
    Stall,
    WriteFile,
)

__all__ = ["MessagesBackend", "SIDE_TEXT", "claude_tool_call", "find_cwd"]

SIDE_TEXT = "Scripted session"
"""The answer to side requests (titles, summaries): short, and plausible as a title."""

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

_CWD_RE = re.compile(r"(?:Primary working directory|Working directory|CWD):\s*(/[^\n<]*)")


def claude_tool_call(
    step: RunCommand | ReadFile | WriteFile | EditFile, cwd: str | None
) -> tuple[str, _JSON]:
    """The Claude Code tool name and input for a tool step; relative paths are resolved against `cwd`."""

    def absolute(path: str) -> str:
        if cwd is None or PurePosixPath(path).is_absolute():
            return path
        return str(PurePosixPath(cwd) / path)

    if isinstance(step, RunCommand):
        return "Bash", {"command": step.command, "description": "Run a scripted command"}
    if isinstance(step, ReadFile):
        return "Read", {"file_path": absolute(step.path)}
    if isinstance(step, WriteFile):
        return "Write", {"file_path": absolute(step.path), "content": step.content}
    return "Edit", {"file_path": absolute(step.path), "old_string": step.old, "new_string": step.new}


def _texts(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def find_cwd(body: _JSON) -> str | None:
    """The working directory Claude Code states in a request: `CWD:` in the system prompt (`--bare`) or
    "Primary working directory:" in the environment reminder of the first user message."""
    messages = body.get("messages") or []
    first = messages[0].get("content") if messages and isinstance(messages[0], dict) else None
    for text in (_texts(body.get("system")), _texts(first)):
        found = _CWD_RE.search(text)
        if found:
            return found.group(1).strip()
    return None


class MessagesBackend(ScriptedBackend):
    """Anthropic Messages API for Claude Code.

    `cwd` is the directory Claude Code runs in (tool paths are made absolute against it); without it the
    backend takes it from the "working directory" line of each request's system prompt.
    """

    turn_path: ClassVar[str] = "/v1/messages"

    def __init__(self, scenario: Scenario, cwd: str | Path | None = None) -> None:
        super().__init__(scenario)
        self.cwd = str(cwd) if cwd is not None else None

    def claude_env(self, home: Path) -> dict[str, str]:
        """Environment for `claude` to use this backend only, with its state isolated under `home`."""
        return {
            "ANTHROPIC_BASE_URL": self.url,
            "ANTHROPIC_API_KEY": "harness-offline",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "CLAUDE_CODE_TMPDIR": str(home / "tmp"),
        }

    # -- routing ---------------------------------------------------------------------------------------

    def is_turn_request(self, path: str, body: _JSON | None) -> bool:
        """A model turn is a `/v1/messages` call carrying the agent loop's `tools` (even `[]`, as with
        `--tools ""`) or `thinking` keys; anything else (token counting, a bare title/summary call) is a side
        request."""
        body = body or {}
        return path.split("?", 1)[0] == self.turn_path and ("tools" in body or "thinking" in body)

    def answer_side(self, http: Handler, method: str, path: str, body: _JSON | None) -> None:
        route = path.split("?", 1)[0]
        if route == "/v1/messages/count_tokens":
            http.send_json(200, {"input_tokens": 100})
        elif route == self.turn_path and method == "POST" and body is not None:
            self._answer(http, Turn(-1, (), Say(SIDE_TEXT, chunks=1)), body)
        else:
            super().answer_side(http, method, path, body)

    # -- answering -------------------------------------------------------------------------------------

    def answer_turn(self, http: Handler, turn: Turn, body: _JSON) -> None:
        self._answer(http, turn, body)

    def _answer(self, http: Handler, turn: Turn, body: _JSON) -> None:
        step = turn.step
        if isinstance(step, Fail):
            kind = _ERROR_TYPES.get(step.status, "api_error")
            http.send_json(step.status, {"type": "error", "error": {"type": kind, "message": step.message}})
            return
        model = str(body.get("model") or "claude-sonnet-4-5")
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
            self.cwd = find_cwd(body)
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
        elif isinstance(step, (RunCommand, ReadFile, WriteFile, EditFile)):
            name, tool_input = claude_tool_call(step, self._cwd_for(body))
            blocks.append(
                {"type": "tool_use", "id": f"toolu_{turn.index:04d}", "name": name, "input": tool_input}
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
