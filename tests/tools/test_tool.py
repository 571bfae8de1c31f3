"""`@tool`: the schema an agent sees, the description, argument checking, the result text, the reference."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Literal

import anyio
import pytest
from pydantic import BaseModel, Field

from harness_core import Tool, tool
from harness_core.tools.tool import DEFAULT_TIMEOUT, ToolArgumentsError


class Colour(str, Enum):
    RED = "red"
    BLUE = "blue"


class Point(BaseModel):
    x: int
    y: int


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Returns their sum."""
    return a + b


@tool(name="paint-it", requires_approval=True, timeout=5)
async def paint(colour: Colour, where: Point, mode: Literal["fill", "line"] = "fill",
                note: Annotated[str | None, Field(description="why")] = None) -> dict[str, object]:
    return {"colour": colour, "where": where, "mode": mode}


def test_a_typed_function_gets_its_schema_description_and_defaults() -> None:
    assert isinstance(add, Tool)
    assert add.name == "add"
    assert add.description == "Add two integers.\n\nReturns their sum."
    assert add.input_schema == {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                                "required": ["a", "b"], "additionalProperties": False}
    assert add.timeout == DEFAULT_TIMEOUT and not add.requires_approval
    assert add(2, 3) == 5  # still a plain function for Python callers


def test_enums_models_literals_and_field_descriptions_reach_the_schema() -> None:
    schema = paint.input_schema
    assert paint.name == "paint-it" and paint.requires_approval and paint.timeout == 5
    assert schema["required"] == ["colour", "where"]
    assert schema["properties"]["mode"] == {"default": "fill", "enum": ["fill", "line"], "type": "string"}
    assert schema["properties"]["note"]["description"] == "why"
    assert schema["$defs"]["Colour"]["enum"] == ["red", "blue"]
    assert schema["$defs"]["Point"]["required"] == ["x", "y"]


@pytest.mark.anyio
async def test_a_call_converts_the_arguments_and_awaits_an_async_function() -> None:
    assert await add.call({"a": "2", "b": 3}) == 5
    value = await paint.call({"colour": "red", "where": {"x": 1, "y": 2}})
    assert Tool.result_text(value) == '{"colour": "red", "where": {"x": 1, "y": 2}, "mode": "fill"}'
    assert Tool.result_text("plain") == "plain"


@pytest.mark.anyio
async def test_wrong_arguments_say_which_and_why() -> None:
    with pytest.raises(ToolArgumentsError, match=r"a: Field required; c: Extra inputs are not permitted"):
        await add.call({"b": 1, "c": 2})
    with pytest.raises(ToolArgumentsError, match=r"colour: Input should be 'red' or 'blue'"):
        paint.arguments({"colour": "green", "where": {"x": 1, "y": 2}})


def test_a_sync_function_runs_off_the_event_loop() -> None:
    import threading

    @tool
    def where_am_i() -> str:
        return threading.current_thread().name

    assert anyio.run(where_am_i.call, {}) != threading.current_thread().name


@pytest.mark.parametrize(("make", "message"), [
    (lambda: tool(name="star")(lambda *a: 1), "no \\*args"),
    (lambda: tool(name="bad name")(add.fn), "tool name 'bad name' is not valid"),
    (lambda: tool(timeout=0)(add.fn), "timeout must be more than 0"),
    (lambda: tool(42), "decorates a function"),
])
def test_a_function_that_cannot_be_a_tool_is_refused_when_decorated(make: object, message: str) -> None:
    with pytest.raises((TypeError, ValueError), match=message):
        make()  # type: ignore[operator]


def test_a_hint_that_cannot_be_resolved_says_what_to_import() -> None:
    def f(x: NotDefinedAnywhere) -> None:  # type: ignore[name-defined]  # noqa: F821
        return None

    with pytest.raises(TypeError, match=r"cannot resolve its type hints.*import every name"):
        tool(f)


def test_the_reference_is_where_a_worker_imports_it_again() -> None:
    assert add.reference == f"{__name__}:add"
