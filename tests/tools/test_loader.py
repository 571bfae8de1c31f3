"""`--tools` references: a file, a module, one function; and the errors of each way it can go wrong."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from harness_core.errors import InvalidSpecError
from harness_core.tools.loader import ToolsLoadError, load_all, load_tools, unique_tools
from harness_core.tools.tool import tool

TOOLS = """
from harness_core import tool

@tool
def add(a: int, b: int) -> int:
    "Add two integers."
    return a + b

@tool(requires_approval=True)
def shout(text: str) -> str:
    return text.upper()

def helper(x: int) -> int:
    return x * 2

NOT_A_FUNCTION = 3
"""


@pytest.fixture
def tools_file(tmp_path: Path) -> Path:
    path = tmp_path / "my_tools.py"
    path.write_text(TOOLS)
    return path


def test_a_file_gives_every_tool_it_defines_in_order(tools_file: Path) -> None:
    tools = load_tools(str(tools_file))
    assert [t.name for t in tools] == ["add", "shout"]
    assert tools[0].reference == f"{tools_file}:add"  # a worker loads the same file again
    assert load_tools(tools_file.name)[0].fn is tools[0].fn  # a relative path (cwd is tmp_path): loaded once


def test_one_function_by_name_and_a_plain_function_made_a_tool(tools_file: Path) -> None:
    assert [t.name for t in load_tools(f"{tools_file}:shout")] == ["shout"]
    helper = load_tools(f"{tools_file}:helper")
    assert helper[0].name == "helper" and helper[0].input_schema["required"] == ["x"]


def test_a_module_by_its_dotted_name(tools_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tools_file.parent))
    monkeypatch.delitem(sys.modules, "my_tools", raising=False)
    assert [t.name for t in load_tools("my_tools")] == ["add", "shout"]
    assert [t.reference for t in load_tools("my_tools:add")] == ["my_tools:add"]


@pytest.mark.parametrize(("reference", "message"), [
    ("missing.py", r"no such file .*missing\.py; give the path of a Python file"),
    ("no_such_module_here", r"no module named 'no_such_module_here'"),
    ("{file}:nothing", r"has no 'nothing'; the tools it has: add, shout"),
    ("{file}:NOT_A_FUNCTION", r"'NOT_A_FUNCTION' is a int, not a function"),
])
def test_a_wrong_reference_says_what_to_do(reference: str, message: str, tools_file: Path) -> None:
    with pytest.raises(ToolsLoadError, match=message) as caught:
        load_tools(reference.format(file=tools_file))
    assert isinstance(caught.value, InvalidSpecError)  # exit status 2: a usage error


def test_a_file_with_no_tool_says_how_to_make_one(tmp_path: Path) -> None:
    empty = tmp_path / "empty.py"
    empty.write_text("X = 1\n")
    with pytest.raises(ToolsLoadError, match=r"defines no tool; decorate functions with `@tool`"):
        load_tools(str(empty))


def test_a_module_that_raises_shows_the_last_line_of_its_traceback(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text(textwrap.dedent("""
        import json
        json.loads("{nope")
    """))
    with pytest.raises(ToolsLoadError, match=r"importing .*broken\.py raised json\.decoder\.JSONDecodeError: "
                                             r"Expecting property name"):
        load_tools(str(broken))
    exits = tmp_path / "exits.py"
    exits.write_text("raise SystemExit(3)\n")
    with pytest.raises(ToolsLoadError, match=r"raised SystemExit: 3"):
        load_tools(str(exits))


def test_ctrl_c_during_the_import_is_an_interruption_not_a_broken_module(tmp_path: Path) -> None:
    slow = tmp_path / "slow.py"
    slow.write_text("raise KeyboardInterrupt\n")  # what Ctrl-C in the middle of a slow import raises
    with pytest.raises(KeyboardInterrupt):
        load_tools(str(slow))


def test_two_tools_with_one_name_are_refused(tools_file: Path) -> None:
    @tool(name="add")
    def other(a: int) -> int:
        return a

    first = load_tools(str(tools_file))
    assert unique_tools([*first, *first]) == tuple(first)
    with pytest.raises(InvalidSpecError, match=r"two tools are named 'add'.*rename one with @tool\(name=\.\.\.\)"):
        unique_tools([*first, other])
    assert [t.name for t in load_all([str(tools_file), f"{tools_file}:add"])] == ["add", "shout"]
