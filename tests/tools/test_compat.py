"""The `harness` tool server's one client quirk: Gemini CLI refuses a text result that is JSON but not an object
unless `structuredContent` is given (`5` from `add`); every other client gets the result unchanged."""

from __future__ import annotations

import mcp_types as types

from harness_core.tools.compat import GEMINI_CLIENT, for_client


def _text(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=error)


def test_gemini_gets_a_non_object_json_result_as_structured_content_too() -> None:
    adapted = for_client(_text("5"), GEMINI_CLIENT)
    assert adapted.structured_content == {"result": 5}
    assert adapted.content == _text("5").content  # the model still gets the text


def test_other_results_and_other_clients_are_unchanged() -> None:
    for result in (_text("Echo: hi"), _text('{"a": 1}'), _text("5", error=True)):
        assert for_client(result, GEMINI_CLIENT) == result
    assert for_client(_text("5"), "claude-code").structured_content is None
