"""The provider-neutral display helpers: titles, reading a shell command, bounded output."""

from __future__ import annotations

import pytest

from harness_core.cli.render.format import tool_line
from harness_core.events import HarnessToolDetails, ToolKind, ToolStatus
from harness_core.tooldisplay import (
    OUTPUT_CHARS,
    SUMMARY_CHARS,
    bounded_head,
    bounded_tail,
    classify_command,
    command_display,
    file_change_display,
    mcp_call_text,
    unwrap_shell,
)


@pytest.mark.parametrize(
    ("command", "kind", "title", "path"),
    [
        ("/bin/bash -lc 'cat notes.txt'", "read", "Reading file", "notes.txt"),
        ("bash -lc 'sed -n 1,200p src/app.py'", "read", "Reading file", "src/app.py"),
        ("head -n 20 README.md", "read", "Reading file", "README.md"),
        ("tail -5 log.txt", "read", "Reading file", "log.txt"),
        ("cat -- -dash.txt", "read", "Reading file", "-dash.txt"),
        ("/bin/bash -lc 'ls -la'", "search", "Listing files", None),
        ("ls src", "search", "Listing files", "src"),
        ("rg -n TODO .", "search", "Searching", None),
        ("/bin/bash -lc 'grep -R alpha .'", "search", "Searching", None),
        ("git grep foo", "search", "Searching", None),
        ("cat a.txt b.txt", "shell", "Running command", None),
        ("/bin/bash -lc 'cat somefile.txt && echo hello > hello.txt'", "shell", "Running command", None),
        ("sed -i s/a/b/ x.txt", "shell", "Running command", None),
        ("cat x | head", "shell", "Running command", None),
        ("echo $(cat x)", "shell", "Running command", None),
        ("echo harness-ok", "shell", "Running command", None),
        ("bash -lc 'unterminated", "shell", "Running command", None),
        ("", "shell", "Running command", None),
    ],
)
def test_classify_command(command: str, kind: str, title: str, path: str | None) -> None:
    action = classify_command(command)
    assert (action.kind.value, action.title, action.path) == (kind, title, path)


def test_classify_command_reports_the_unwrapped_command() -> None:
    assert classify_command("/bin/bash -lc 'cat notes.txt'").command == "cat notes.txt"
    assert classify_command("  echo hi  ").command == "echo hi"


def test_unwrap_shell() -> None:
    assert unwrap_shell("/bin/bash -lc 'echo hi'") == "echo hi"
    assert unwrap_shell("/usr/bin/zsh -c 'ls'") == "ls"
    assert unwrap_shell("sh -cl 'pwd'") == "pwd"
    assert unwrap_shell("python -c 'print(1)'") == "python -c 'print(1)'"
    assert unwrap_shell("bash -lc 'a' extra") == "bash -lc 'a' extra"
    assert unwrap_shell("bash -lc 'unterminated") == "bash -lc 'unterminated"


def test_standard_titles() -> None:
    assert command_display("read") == (ToolKind.READ, "Reading file")
    assert command_display("list") == (ToolKind.SEARCH, "Listing files")
    assert command_display("search") == (ToolKind.SEARCH, "Searching")
    assert command_display("shell") == command_display("anything else") == (ToolKind.SHELL, "Running command")
    assert file_change_display("add") == (ToolKind.WRITE, "Writing file")
    assert file_change_display("update") == (ToolKind.EDIT, "Editing file")
    assert file_change_display("delete") == (ToolKind.WRITE, "Deleting file")
    assert file_change_display("unknown") == (ToolKind.EDIT, "Editing file")


def test_bounded_tail_keeps_the_end_and_says_what_was_cut() -> None:
    assert bounded_tail(None) is None and bounded_tail("") is None
    assert bounded_tail("short") == "short"
    text = "a" * 500 + "z" * SUMMARY_CHARS
    cut = bounded_tail(text)
    assert cut == f"[… 500 earlier characters cut]\n{'z' * SUMMARY_CHARS}"
    assert bounded_tail("abcdef", 2) == "[… 4 earlier characters cut]\nef"


def test_bounded_head_keeps_the_start_and_says_what_was_cut() -> None:
    assert bounded_head(None) is None and bounded_head("") == ""
    assert bounded_head("x" * OUTPUT_CHARS) == "x" * OUTPUT_CHARS
    assert bounded_head("abcdef", 2) == "ab\n[… 4 more characters cut]"


def test_an_mcp_call_reads_as_a_call_and_its_result_follows_it() -> None:
    assert mcp_call_text("add", {"a": 2, "b": 3}) == "add(a=2, b=3)"
    assert mcp_call_text("echo", {"message": "hi", "tags": ["x"]}) == "echo(message='hi', tags=[\"x\"])"
    assert mcp_call_text("now", None) == "now()"
    assert mcp_call_text("echo", {"message": "y" * 500}) == "echo(message='" + "y" * 58 + "…)"
    done = HarnessToolDetails(kind=ToolKind.MCP, title="add", command="add(a=2, b=3)", summary="5",
                              status=ToolStatus.COMPLETED)
    assert tool_line(done) == "✓ add(a=2, b=3) → 5"
    failed = done.model_copy(update={"status": ToolStatus.FAILED, "summary": "boom"})
    assert tool_line(failed) == "✗ add(a=2, b=3) (failed)"
