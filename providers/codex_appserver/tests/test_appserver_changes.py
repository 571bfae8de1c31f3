"""Codex `fileChange` changes as provider-neutral file changes (the recorded goldens hold real ones)."""

from __future__ import annotations

from harness_codex_appserver.items import file_changes, tool_calls


def test_an_update_gets_file_headers_and_an_added_or_deleted_file_its_whole_content() -> None:
    (update,) = file_changes({"path": "/ws/a.txt", "kind": {"type": "update", "move_path": None},
                              "diff": "@@ -1 +1 @@\n-alpha\n+beta\n"})
    assert update["kind"] == "modify"
    assert update["diff"] == "--- a/ws/a.txt\n+++ b/ws/a.txt\n@@ -1 +1 @@\n-alpha\n+beta\n"
    (added,) = file_changes({"path": "/ws/new.txt", "kind": {"type": "add"}, "diff": "one\ntwo"})
    assert added["diff"] == ("--- /dev/null\n+++ b/ws/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"
                             "\\ No newline at end of file\n")
    (deleted,) = file_changes({"path": "old.txt", "kind": {"type": "delete"}, "diff": "gone\n"})
    assert deleted["kind"] == "delete"
    assert deleted["diff"] == "--- a/old.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-gone\n"
    (moved,) = file_changes({"path": "a.txt", "kind": {"type": "update", "move_path": "b.txt"}, "diff": ""})
    assert (moved["kind"], moved["move_path"]) == ("rename", "b.txt")


def test_the_tool_display_carries_the_change() -> None:
    item = {"type": "fileChange", "id": "call_1", "status": "inProgress",
            "changes": [{"path": "a.txt", "kind": {"type": "update"}, "diff": "@@ -1 +1 @@\n-a\n+b\n"}]}
    (call,) = tool_calls(item, completed=False)
    assert [(c.path, c.kind) for c in call.display.changes] == [("a.txt", "modify")]
