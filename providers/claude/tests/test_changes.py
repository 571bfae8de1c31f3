"""Claude Code's file tools as provider-neutral file changes: what the input says, what an approval with the
file's content says (exact), what the CLI's `structuredPatch` says (the recorded goldens hold the rest)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from harness_claude.changes import input_changes, read_current, result_changes
from harness_claude.mapping import approval_request


def test_an_edit_without_the_file_is_the_replaced_strings_under_a_header_without_line_numbers() -> None:
    (change,) = input_changes("Edit", {"file_path": "/ws/a.txt", "old_string": "alpha", "new_string": "beta"}, "/ws")
    assert change == {"path": "a.txt", "kind": "modify", "diff": "--- a/a.txt\n+++ b/a.txt\n@@ @@\n-alpha\n+beta\n"}


class _Ctx:
    """The one `RunContext` method `read_current` calls (a real run's records the read in its wire log)."""

    async def read_side_input(self, name: str, read: Callable[[], bytes | None]) -> bytes | None:
        return read()


def _current(request: dict[str, Any], cwd: Path) -> dict[str, str | None] | None:
    return anyio.run(read_current, _Ctx(), request, str(cwd))  # type: ignore[arg-type]


def test_an_approval_shows_the_exact_diff_of_the_file_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("line one alpha\nline two\n")
    request = {"subtype": "can_use_tool", "tool_name": "Edit", "tool_use_id": "t",
               "input": {"file_path": str(tmp_path / "a.txt"), "old_string": "alpha", "new_string": "beta"}}
    event = approval_request("r1", request, str(tmp_path), _current(request, tmp_path))
    (change,) = event.display.changes
    assert change.diff == "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-line one alpha\n+line one beta\n line two\n"
    write = {"tool_name": "Write", "input": {"file_path": "new.txt", "content": "fresh\n"}}
    event = approval_request("r2", write, str(tmp_path), _current(write, tmp_path))
    assert [(c.kind, c.diff) for c in event.display.changes] == [
        ("add", "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+fresh\n")]


def test_multiedit_and_the_clis_structured_patch() -> None:
    edits = {"file_path": "a.txt", "edits": [{"old_string": "a", "new_string": "b"},
                                             {"old_string": "c", "new_string": "d", "replace_all": True}]}
    (change,) = input_changes("MultiEdit", edits, "/ws", current={"a.txt": "a\nc\nc\n"})
    assert change["diff"] == "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n-a\n-c\n-c\n+b\n+d\n+d\n"
    rich = {"filePath": "/ws/a.txt", "structuredPatch": [
        {"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1, "lines": ["-x", "+y"]}]}
    (done,) = result_changes("Edit", {"file_path": "/ws/a.txt"}, rich, "/ws")
    assert done == {"path": "a.txt", "kind": "modify", "diff": "--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-x\n+y\n"}
    assert input_changes("Bash", {"command": "ls"}, "/ws") == ()
