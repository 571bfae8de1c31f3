"""The apply_patch parser and applier, as pure functions (plus the writer in a temporary directory)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_mini_agent.patch import (
    AddFile,
    DeleteFile,
    Hunk,
    PatchError,
    UpdateFile,
    apply_hunks,
    parse_patch,
    plan_patch,
    resolve_inside,
    write_changes,
)

PATCH = """*** Begin Patch
*** Add File: src/new.py
+def new():
+    return 1
*** Update File: app.py
@@ def main():
-    print("old")
+    print("new")
     return 0
*** Delete File: gone.txt
*** End Patch
"""


def test_parse_every_kind_of_file_op() -> None:
    ops = parse_patch(PATCH)
    assert ops[0] == AddFile("src/new.py", "def new():\n    return 1\n")
    assert ops[1] == UpdateFile(
        "app.py",
        (Hunk("def main():", (("-", '    print("old")'), ("+", '    print("new")'), (" ", "    return 0"))),),
    )
    assert ops[2] == DeleteFile("gone.txt")


def test_parse_move_and_several_hunks() -> None:
    ops = parse_patch(
        "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-1\n+one\n@@\n-3\n+three\n"
        "*** End of File\n*** End Patch"
    )
    assert ops == [
        UpdateFile(
            "a.txt",
            (Hunk("", (("-", "1"), ("+", "one"))), Hunk("", (("-", "3"), ("+", "three")))),
            move_to="b.txt",
        )
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("*** Add File: x\n+a\n*** End Patch", "must start with"),
        ("*** Begin Patch\n*** Add File: x\n+a\n", "must end with"),
        ("*** Begin Patch\n*** End Patch", "changes no file"),
        ("*** Begin Patch\n*** Add File: x\nno plus\n*** End Patch", "start with '+'"),
        ("*** Begin Patch\n*** Update File: x\n*** End Patch", "at least one @@ hunk"),
        ("*** Begin Patch\n*** Update File: x\n@@\n?bad\n*** End Patch", "hunk lines start with"),
        ("*** Begin Patch\ngarbage\n*** End Patch", "expected a file header"),
    ],
)
def test_malformed_patches_are_refused_with_a_reason(text: str, message: str) -> None:
    with pytest.raises(PatchError, match=message.replace("+", r"\+").replace("@", "@")):
        parse_patch(text)


def test_apply_hunks_replaces_in_order_after_the_anchor() -> None:
    original = "x = 1\ndef main():\n    x = 1\n    return x\n"
    hunk = Hunk("def main():", (("-", "    x = 1"), ("+", "    x = 2"), (" ", "    return x")))
    assert apply_hunks(original, [hunk]) == "x = 1\ndef main():\n    x = 2\n    return x\n"


def test_apply_hunks_tolerates_trailing_whitespace_and_adds_a_final_newline() -> None:
    assert apply_hunks("alpha  \nbeta", [Hunk("", (("-", "alpha"), ("+", "gamma")))]) == "gamma\nbeta\n"


def test_pure_addition_hunk_appends() -> None:
    assert apply_hunks("a\n", [Hunk("", (("+", "b"),))]) == "a\nb\n"


def test_a_hunk_that_does_not_match_is_an_error() -> None:
    with pytest.raises(PatchError, match="does not apply"):
        apply_hunks("a\nb\n", [Hunk("", (("-", "zzz"), ("+", "y")))], "f.txt")
    with pytest.raises(PatchError, match="anchor"):
        apply_hunks("a\n", [Hunk("def nope():", (("-", "a"),))])


def test_plan_reads_through_the_callback_and_writes_nothing() -> None:
    files = {"app.py": 'def main():\n    print("old")\n    return 0\n', "gone.txt": "bye\n"}
    changes = plan_patch(parse_patch(PATCH), files.get)
    assert [(c.action, c.path) for c in changes] == [
        ("add", "src/new.py"),
        ("update", "app.py"),
        ("delete", "gone.txt"),
    ]
    assert changes[1].content == 'def main():\n    print("new")\n    return 0\n'
    with pytest.raises(PatchError, match="no such file to update"):
        plan_patch(parse_patch(PATCH), lambda _path: None)


def test_resolve_inside_refuses_escapes(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to("/etc")
    assert resolve_inside(tmp_path, "a/b.txt") == tmp_path.resolve() / "a" / "b.txt"
    for bad in ("../x", "/etc/passwd", "a/../../x", "link/passwd"):
        with pytest.raises(PatchError, match="outside the working directory"):
            resolve_inside(tmp_path, bad)


def test_write_changes_applies_a_move(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("1\n2\n")
    ops = parse_patch(
        "*** Begin Patch\n*** Update File: a.txt\n*** Move to: sub/b.txt\n@@\n-2\n+two\n*** End Patch"
    )
    write_changes(tmp_path, plan_patch(ops, lambda p: (tmp_path / p).read_text()))
    assert not (tmp_path / "a.txt").exists()
    assert (tmp_path / "sub" / "b.txt").read_text() == "1\ntwo\n"
