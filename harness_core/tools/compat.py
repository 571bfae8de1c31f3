"""What the `harness` tool server adapts to one MCP client's known quirk, and nothing else.

Layer: core (pure: a tool result in, the result that client takes out). Knows the clients by the name they give in
`initialize` (`clientInfo.name`); knows no agent process, run or provider.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

__all__ = ["GEMINI_CLIENT", "client_name", "for_client"]

GEMINI_CLIENT = "gemini-cli-mcp-client"
"""Gemini CLI 0.61.0's MCP client: it parses a text result as JSON into `structuredContent` when the result has
none, then refuses the result when that JSON is not an object (a tool answering `5` failed)."""


def client_name(ctx: Any) -> str:
    """The `clientInfo.name` the connection's client gave in `initialize`, or ""."""
    params = getattr(getattr(ctx, "session", None), "client_params", None)
    info = getattr(params, "client_info", None)
    name = getattr(info, "name", None)
    return name if isinstance(name, str) else ""


def for_client(result: types.CallToolResult, client: str) -> types.CallToolResult:
    """`result` as `client` takes it: for Gemini CLI, a text that is JSON but not an object also goes as
    `structuredContent` `{"result": ...}`, so Gemini does not make one it then refuses (the model still gets the
    text: Gemini shows it the content). Other clients get `result` unchanged (Claude Code would show the model the
    structured content instead of the text)."""
    if client != GEMINI_CLIENT or result.is_error or result.structured_content is not None or not result.content:
        return result
    first = result.content[0]
    if not isinstance(first, types.TextContent):
        return result
    try:
        value = json.loads(first.text)
    except ValueError:
        return result
    if isinstance(value, dict):
        return result
    return result.model_copy(update={"structured_content": {"result": value}})
