"""Scripted model APIs on 127.0.0.1 that play a `Scenario`, so a real agent CLI runs whole turns offline.

Layer: offline. Stdlib only; knows the model APIs' wire formats and the scenario vocabulary; knows no agent and
nothing of Harness providers or events. Importing this package starts nothing. Using a backend, tool dialects and
writing a backend for another API: docs/providers.md (offline: scripted model backends).
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
