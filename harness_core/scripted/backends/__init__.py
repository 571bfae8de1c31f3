"""Scripted model APIs on 127.0.0.1 that play a `Scenario`, so a real agent CLI runs whole turns offline.

Layer: offline. Stdlib only; knows the model APIs' wire formats (OpenAI Responses and Chat Completions,
Anthropic Messages, the Gemini API) and the scenario vocabulary; knows no agent and nothing of Harness providers
or events. Importing this package starts nothing: a backend serves only between `start()` and `stop()` (or
inside `with`).

Using one: build it with the scenario, the agent's workspace and the agent's tool dialect, point the agent at
its `url` (`base_url` for Responses), and enter it:

    with MessagesBackend(scenario, cwd=workspace, dialect=MyAgentTools()) as backend:
        ...run the agent with its API base URL set to backend.url...
    backend.requests    # the turn requests' JSON bodies; backend.exchanges: every request

What an agent calls its tools is a `ResponsesDialect` / `MessagesDialect` (subclass one, override a method per
tool step); the defaults are the tools each API's own documentation describes.

Writing a backend for another model API: subclass `ScriptedBackend`, set `turn_path`, and implement
`answer_turn(http, turn, body)`: `turn` is a `Turn` (its `step` is a `Say`, a tool step — see `ToolStep` —, a
`Fail` or a `Stall`; `thinks` the reasoning that opens the response; `index` numbers responses for ids and
usage), `http` a `Handler` (`send_json`, `start_sse`, `send_event` for named SSE frames, `send_data` for
unnamed ones). `split_chunks` cuts a text into deltas; `FINISHED_TEXT` is what a played-out scenario says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness_core._facade import missing_name
from harness_core.scripted.backends.chat import ChatCompletionsBackend, ChatDialect
from harness_core.scripted.backends.dialects import (
    TOOL_STEPS,
    CustomToolCall,
    FunctionCall,
    MessagesDialect,
    ResponsesDialect,
    ResponsesToolCall,
    ToolStep,
    ToolUse,
    apply_patch_text,
)
from harness_core.scripted.backends.gemini import GeminiBackend, GeminiDialect, schema_instance
from harness_core.scripted.backends.http import (
    FINISHED_TEXT,
    Exchange,
    Handler,
    McpCall,
    ScriptedBackend,
    Turn,
    split_chunks,
)
from harness_core.scripted.backends.messages import SIDE_TEXT, MessagesBackend
from harness_core.scripted.backends.responses import ResponsesBackend

__all__ = [
    # the backends
    "ChatCompletionsBackend",
    "GeminiBackend",
    "MessagesBackend",
    "ResponsesBackend",
    "SIDE_TEXT",
    # tool dialects
    "ChatDialect",
    "GeminiDialect",
    "TOOL_STEPS",
    "CustomToolCall",
    "FunctionCall",
    "MessagesDialect",
    "ResponsesDialect",
    "ResponsesToolCall",
    "ToolStep",
    "ToolUse",
    "apply_patch_text",
    "schema_instance",
    # writing a backend for another model API
    "FINISHED_TEXT",
    "Exchange",
    "Handler",
    "McpCall",
    "ScriptedBackend",
    "Turn",
    "split_chunks",
]


if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any name

    def __getattr__(name: str) -> Any:
        """A name this façade does not export: an ImportError saying where it is (`harness_core._facade`)."""
        raise missing_name(__name__, name)
