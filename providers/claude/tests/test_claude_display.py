"""Display details name each file one way, whatever spelling the model used."""

from __future__ import annotations

import pytest

from harness_claude.display import relative_path, summarize


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/app.py", "src/app.py"),
        ("./src/../src/app.py", "src/app.py"),
        ("/ws/src/app.py", "src/app.py"),
        ("../outside.txt", "/outside.txt"),
        ("/ws/../outside.txt", "/outside.txt"),
        ("/etc/hosts", "/etc/hosts"),
        ("/ws", "/ws"),
    ],
)
def test_paths_are_relative_inside_the_workspace_and_absolute_outside(path: str, expected: str) -> None:
    assert relative_path(path, "/ws") == expected


def test_subagent_text_is_progress_of_its_task_not_the_answer() -> None:
    from harness_core import TextDelta, ToolSummary

    from harness_claude.mapping import ClaudeMapper

    mapper = ClaudeMapper("/ws")
    sub_line = {
        "type": "assistant",
        "parent_tool_use_id": "toolu_task",
        "message": {"id": "msg_sub", "model": "claude", "content": [{"type": "text", "text": "sub-agent notes"}]},
    }
    main_line = {
        "type": "assistant",
        "parent_tool_use_id": None,
        "message": {"id": "msg_main", "model": "claude", "content": [{"type": "text", "text": "the answer"}]},
    }
    sub_events = mapper.feed(sub_line)
    main_events = mapper.feed(main_line)
    assert [type(e) for e in sub_events] == [ToolSummary]
    assert sub_events[0].tool_id == "toolu_task" and sub_events[0].text == "sub-agent notes"
    assert [e.text for e in main_events if isinstance(e, TextDelta)] == ["the answer"]


def test_claude_codes_notes_to_the_model_are_not_a_summary() -> None:
    """A Read result ends with Claude Code's `<system-reminder>` to the model (as recorded through claude-agent-acp,
    which runs the same Claude Code): the summary a person sees with `-v` is the file's lines alone."""
    read = ("     1\u2192alpha\n     2\u2192\n\n<system-reminder>\nWhenever you read a file, you should consider "
            "whether it would be considered malware.\n</system-reminder>\n")
    assert summarize(read) == "1\u2192alpha\n     2\u2192"
    assert summarize("<system-reminder>only a note</system-reminder>") is None
    assert summarize("x <system-reminder> never closed") == "x <system-reminder> never closed"
