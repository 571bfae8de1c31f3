"""A scripted OpenAI Responses API (`POST /v1/responses`, SSE) that lets the real Codex CLI run offline.

Layer: testing. Knows the Responses streaming events Codex consumes and the two tools Codex offers for the
bundled `gpt-5.5` model (`exec_command` and the `apply_patch` custom tool); knows nothing of Harness
providers, JSON-RPC or `HarnessEvent`s. Stdlib only.

Point Codex at it with `codex_config_overrides()` (each value after a `-c`), `codex_env()` and the flags in
`CODEX_FLAGS`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
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

__all__ = ["API_KEY_ENV", "CODEX_FLAGS", "MODEL", "ResponsesBackend", "apply_patch_text"]

API_KEY_ENV = "HARNESS_MOCK_API_KEY"
MODEL = "gpt-5.5"
"""A slug from Codex's bundled catalogue: only then does Codex offer `exec_command` and `apply_patch`."""
CODEX_FLAGS: tuple[str, ...] = ("--disable", "unbounded_connection_retries", "--disable", "plugins")
"""Without the first, a refused connection is retried forever; the second silences offline plugin sync."""

_JSON = dict[str, Any]

_ERROR_KINDS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


def _lines(text: str) -> list[str]:
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


def apply_patch_text(step: WriteFile | EditFile, current: str | None = None) -> str:
    """The `apply_patch` patch for a write or an edit.

    An edit is line-based: given the file's `current` text, the hunk spans the whole lines around the first
    occurrence of `step.old`; without it, `old` and `new` are taken to be whole lines.
    """
    if isinstance(step, WriteFile):
        body = "".join(f"+{line}\n" for line in _lines(step.content))
        return f"*** Begin Patch\n*** Add File: {step.path}\n{body}*** End Patch\n"
    old, new = step.old, step.new
    if current is not None and step.old in current:
        start = current.rfind("\n", 0, current.index(step.old)) + 1
        end_at = current.find("\n", current.index(step.old) + len(step.old))
        end = len(current) if end_at < 0 else end_at
        old = current[start:end]
        new = old.replace(step.old, step.new, 1)
    minus = "".join(f"-{line}\n" for line in _lines(old))
    plus = "".join(f"+{line}\n" for line in _lines(new))
    return f"*** Begin Patch\n*** Update File: {step.path}\n@@\n{minus}{plus}*** End Patch\n"


class ResponsesBackend(ScriptedBackend):
    """OpenAI Responses API for Codex. `cwd` (optional) lets edits of partial lines become exact hunks."""

    turn_path: ClassVar[str] = "/v1/responses"

    def __init__(self, scenario: Scenario, cwd: str | Path | None = None) -> None:
        super().__init__(scenario)
        self.cwd = Path(cwd) if cwd is not None else None

    @property
    def base_url(self) -> str:
        """What Codex calls `base_url`: the API root including `/v1`."""
        return f"{self.url}/v1"

    def codex_config_overrides(self) -> list[str]:
        """The values to pass each after a `-c` flag to `codex exec` / `codex app-server`."""
        provider = (
            f'{{name="mock", base_url="{self.base_url}", wire_api="responses", env_key="{API_KEY_ENV}", '
            "request_max_retries=0, stream_max_retries=0}"
        )
        return ['model_provider="mock"', f"model_providers.mock={provider}", f'model="{MODEL}"']

    def codex_args(self) -> list[str]:
        """`CODEX_FLAGS` plus every override as `-c VALUE`: splice into a codex command line."""
        args = list(CODEX_FLAGS)
        for value in self.codex_config_overrides():
            args += ["-c", value]
        return args

    def codex_env(self) -> dict[str, str]:
        """Environment Codex needs for this provider (its `env_key`; any value is accepted)."""
        return {API_KEY_ENV: "harness-offline"}

    # -- answering -------------------------------------------------------------------------------------

    def answer_turn(self, http: Handler, turn: Turn, body: _JSON) -> None:
        step = turn.step
        if isinstance(step, Fail):
            kind, code = _ERROR_KINDS.get(step.status, ("server_error", None))
            http.send_json(
                step.status, {"error": {"message": step.message, "type": kind, "param": None, "code": code}}
            )
            return
        http.start_sse()
        if isinstance(step, Stall):
            http.send_event(self._created(turn))
            self.wait(step.seconds)
            return
        http.send_events(self._events(turn))

    def _created(self, turn: Turn) -> _JSON:
        return {
            "type": "response.created",
            "response": {
                "id": f"resp_{turn.index}",
                "object": "response",
                "status": "in_progress",
                "model": MODEL,
                "output": [],
            },
        }

    def _events(self, turn: Turn) -> Iterator[_JSON]:
        """The whole stream of one response; stops early (no `response.completed`) if the backend stops."""
        yield self._created(turn)
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
        yield {
            "type": "response.completed",
            "response": {
                "id": f"resp_{turn.index}",
                "object": "response",
                "status": "completed",
                "model": MODEL,
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
        call_id = f"call_{turn.index}"
        if isinstance(step, (RunCommand, ReadFile)):
            cmd = step.command if isinstance(step, RunCommand) else f"cat {step.path}"
            return {
                "type": "function_call",
                "id": f"fc_{turn.index}",
                "call_id": call_id,
                "name": "exec_command",
                "arguments": json.dumps({"cmd": cmd}),
                "status": "completed",
            }
        if isinstance(step, (WriteFile, EditFile)):
            current = None
            if isinstance(step, EditFile) and self.cwd is not None:
                try:
                    current = (self.cwd / step.path).read_text()
                except OSError:
                    current = None
            return {
                "type": "custom_tool_call",
                "id": f"ctc_{turn.index}",
                "call_id": call_id,
                "name": "apply_patch",
                "input": apply_patch_text(step, current),
                "status": "completed",
            }
        raise TypeError(f"cannot play step {step!r} as a Responses item")

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
