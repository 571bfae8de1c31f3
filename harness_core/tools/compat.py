"""A Python tool's result as an MCP client that turns JSON text into structured content takes it.

Layer: core (pure: a tool result in, the result such a client takes out). Knows the MCP result shape; knows no
agent, run or provider (a provider says its agent needs it: `ProviderInfo.mcp_object_results`).
"""

from __future__ import annotations

import json

import mcp_types as types

__all__ = ["with_object_result"]


def with_object_result(result: types.CallToolResult) -> types.CallToolResult:
    """`result`, with a text that is JSON but not an object also given as `structuredContent` `{"result": ...}`, so a
    client that makes structured content of JSON text does not make one it then refuses (the model still gets the
    text)."""
    if result.is_error or result.structured_content is not None or not result.content:
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
