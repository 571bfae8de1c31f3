"""A Python tool's result for an agent whose MCP client refuses a JSON text result that is not an object
(`ProviderInfo.mcp_object_results`): `5` from `add` also goes as `structuredContent`; anything else is unchanged,
and a server for any other agent leaves every result as the tool gave it."""

from __future__ import annotations

import mcp_types as types

from harness_core.tools.compat import with_object_result


def _text(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=error)


def test_a_non_object_json_result_goes_as_structured_content_too() -> None:
    adapted = with_object_result(_text("5"))
    assert adapted.structured_content == {"result": 5}
    assert adapted.content == _text("5").content  # the model still gets the text


def test_text_objects_and_errors_are_unchanged() -> None:
    for result in (_text("Echo: hi"), _text('{"a": 1}'), _text("5", error=True)):
        assert with_object_result(result) == result
