"""See what changed: the pure diffs, the runner's file tracker (before the run vs after it), the `files_changed`
record of a run log, and how the CLI shows a diff (coloured, bounded)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from harness_core import open_run
from harness_core._run.changes.diffs import apply_hunks, parse_hunks, unified_diff
from harness_core._run.changes.tracker import FileTracker
from harness_core.cli.records.history import run_details
from harness_core.cli.render.diffview import approval_diff, changed_line, format_changes, render_diff
from harness_core.events import (
    ApprovalRequested,
    FileChange,
    FilesChanged,
    HarnessToolDetails,
    ToolKind,
    ToolResult,
    ToolStatus,
    ToolUse,
    parse_event,
)
from harness_core.plugins import PluginHost
from harness_core.spec import AgentRunSpec
from harness_core.store import read_events

BEFORE = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"
AFTER = "one\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight\n"


# --- pure diffs --------------------------------------------------------------------------------------------


def test_unified_diff_has_git_style_headers_and_round_trips_both_ways() -> None:
    diff = unified_diff("src/a.py", BEFORE, AFTER)
    assert diff.startswith("--- a/src/a.py\n+++ b/src/a.py\n@@ ")
    hunks = parse_hunks(diff)
    assert apply_hunks(BEFORE, hunks) == AFTER
    assert apply_hunks(AFTER, hunks, reverse=True) == BEFORE
    assert unified_diff("x", "same\n", "same\n") == ""


def test_added_deleted_and_unterminated_files() -> None:
    assert unified_diff("new.txt", None, "fresh\n") == "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+fresh\n"
    assert unified_diff("old.txt", "gone\n", None).startswith("--- a/old.txt\n+++ /dev/null\n")
    diff = unified_diff("n.txt", "a\nb", "a\nc")
    assert "\\ No newline at end of file" in diff
    assert apply_hunks("a\nc", parse_hunks(diff), reverse=True) == "a\nb"


def test_a_hunk_without_line_numbers_is_found_by_its_lines() -> None:
    diff = "--- a/f\n+++ b/f\n@@ @@\n-three\n+THREE\n"
    assert apply_hunks(BEFORE, parse_hunks(diff)) == BEFORE.replace("three", "THREE")
    assert apply_hunks("nothing here\n", parse_hunks(diff)) is None


# --- the tracker -------------------------------------------------------------------------------------------


def _use(path: str, *, kind: ToolKind = ToolKind.EDIT, changes: tuple[FileChange, ...] = ()) -> ToolUse:
    return ToolUse(tool_id="t1", name="edit", display=HarnessToolDetails(kind=kind, title="Editing file", path=path,
                                                                         changes=changes))


def _done(path: str, *, kind: ToolKind = ToolKind.EDIT, changes: tuple[FileChange, ...] = (),
          status: ToolStatus = ToolStatus.COMPLETED) -> ToolResult:
    display = HarnessToolDetails(kind=kind, title="Editing file", path=path, status=status, changes=changes)
    return ToolResult(tool_id="t1", name="edit", display=display)


def _only(tracker: FileTracker) -> FileChange:
    event = tracker.files_changed()
    assert event is not None and len(event.files) == 1
    return event.files[0]


def test_a_change_read_in_time_is_the_workspace_before_against_after(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(BEFORE)
    tracker = FileTracker(tmp_path)
    tracker.observe(_use("a.txt"))
    (tmp_path / "a.txt").write_text(AFTER)  # the tool runs after its tool_use reached the runner
    tracker.observe(_done("a.txt"))
    change = _only(tracker)
    assert (change.path, change.kind, change.diff) == ("a.txt", "modify", unified_diff("a.txt", BEFORE, AFTER))


def test_a_change_made_before_the_runner_read_the_file_is_rebuilt_from_the_providers_diff(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(AFTER)  # an auto-approved tool was faster than its tool_use event
    given = FileChange(path=str(tmp_path / "a.txt"), diff=unified_diff("a.txt", BEFORE, AFTER))
    tracker = FileTracker(tmp_path)
    tracker.observe(_use(str(tmp_path / "a.txt"), changes=(given,)))
    tracker.observe(_done(str(tmp_path / "a.txt"), changes=(given,)))
    change = _only(tracker)
    assert change.path == "a.txt" and change.diff == unified_diff("a.txt", BEFORE, AFTER)


def test_a_late_change_without_a_diff_says_the_content_before_is_not_known(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(AFTER)
    given = FileChange(path="a.txt", kind="modify")
    tracker = FileTracker(tmp_path)
    tracker.observe(_use("a.txt", changes=(given,)))
    tracker.observe(_done("a.txt", changes=(given,)))
    change = _only(tracker)
    assert change.diff is None and change.note is not None and "not known" in change.note
    added = FileChange(path="new.txt", kind="add")  # a late read of a file the tool says it created
    (tmp_path / "new.txt").write_text("fresh\n")
    tracker = FileTracker(tmp_path)
    tracker.observe(_use("new.txt", kind=ToolKind.WRITE, changes=(added,)))
    tracker.observe(_done("new.txt", kind=ToolKind.WRITE, changes=(added,)))
    assert _only(tracker).diff == unified_diff("new.txt", None, "fresh\n")


def test_a_late_change_from_a_provider_that_describes_none_is_listed_too(tmp_path: Path) -> None:
    """A tool that only names its path (no `changes`): when the file is already as after at its result, the edit
    was read too late: listed with the note, not dropped."""
    (tmp_path / "a.txt").write_text(AFTER)
    tracker = FileTracker(tmp_path)
    tracker.observe(_use("a.txt"))
    tracker.observe(_done("a.txt"))
    change = _only(tracker)
    assert change.path == "a.txt" and change.diff is None and "not known" in (change.note or "")


def test_an_approval_read_is_the_content_before_and_a_declined_change_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(BEFORE)
    tracker = FileTracker(tmp_path)
    display = HarnessToolDetails(kind=ToolKind.EDIT, title="Editing file", path="a.txt")
    tracker.observe(ApprovalRequested(request_id="r", display=display))
    tracker.observe(_done("a.txt", status=ToolStatus.DECLINED))
    event = tracker.files_changed()
    assert event is not None and event.files == ()


def test_files_outside_the_workspace_binary_and_renamed_files(tmp_path: Path) -> None:
    work = tmp_path / "ws"
    work.mkdir()
    (work / "img.bin").write_bytes(b"\0\1\2")
    (work / "old.txt").write_text("moved\n")
    (tmp_path / "secret.txt").write_text("never read\n")
    (work / "link.txt").symlink_to(tmp_path / "secret.txt")
    tracker = FileTracker(work)
    outside = FileChange(path="../secret.txt", diff="--- a/x\n+++ b/x\n@@ @@\n-a\n+b\n")
    tracker.observe(_use("../secret.txt", changes=(outside,)))
    tracker.observe(_use("link.txt", changes=(FileChange(path="link.txt"),)))
    tracker.observe(_use("img.bin", kind=ToolKind.WRITE))
    renamed = FileChange(path="old.txt", kind="rename", move_path="new.txt")
    tracker.observe(_use("old.txt", changes=(renamed,)))
    (work / "img.bin").write_bytes(b"\0\x09")
    (work / "old.txt").rename(work / "new.txt")
    event = tracker.files_changed()
    assert event is not None
    by_path = {c.path: c for c in event.files}
    assert by_path["../secret.txt"].note is not None and "outside the workspace" in by_path["../secret.txt"].note
    assert by_path["link.txt"].note is not None and "outside" in by_path["link.txt"].note  # a link out is not read
    assert by_path["img.bin"].diff is None and by_path["img.bin"].note == "binary file: not diffed"
    assert by_path["old.txt"].kind == "rename" and by_path["old.txt"].move_path == "new.txt"
    assert "new.txt" not in by_path


def test_no_file_tool_means_no_record(tmp_path: Path) -> None:
    tracker = FileTracker(tmp_path)
    tracker.observe(ToolUse(tool_id="s", name="shell",
                            display=HarnessToolDetails(kind=ToolKind.SHELL, title="Running command")))
    assert tracker.files_changed() is None


# --- a run records it ----------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_run_logs_files_changed_before_done_and_show_reads_it_back(host: PluginHost, runs_dir: Path,
                                                                           tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\n")
    spec = AgentRunSpec(prompt="edit", cwd=tmp_path, provider_options={"scenario": "tools"})
    with anyio.fail_after(20):
        async with open_run(spec, "scripted", host=host, runs_dir=runs_dir) as live:
            events = [e async for e in live]
    assert live.result is not None and live.result.files_changed == ("notes.txt", "new.txt")  # as announced
    assert isinstance(events[-2], FilesChanged) and events[-1].type == "done"
    assert live.log_path is not None
    logged = [e for e in read_events(live.log_path) if isinstance(e, FilesChanged)]
    assert [c.path for c in logged[0].files] == ["notes.txt", "new.txt"]
    assert logged[0].files[0].diff == "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-alpha\n+beta\n"
    details = run_details(runs_dir, live.run_id)
    assert details.files_changed == ("notes.txt", "new.txt") and details.changes == logged[0].files
    assert format_changes(details.changes, colour=False).endswith("+++ b/new.txt\n@@ -0,0 +1 @@\n+fresh")


def test_old_logs_without_the_new_fields_still_parse() -> None:
    line = {"type": "tool_use", "run_id": "r", "seq": 1, "ts": 0.0, "tool_id": "t", "name": "edit",
            "display": {"kind": "edit", "title": "Editing file", "path": "a"}}
    event = parse_event(json.dumps(line))
    assert isinstance(event, ToolUse) and event.display.changes == ()
    assert "changes" not in event.model_dump_json()  # a tool that changes no file does not say so in the log


# --- the CLI's view ------------------------------------------------------------------------------------------


def test_render_diff_colours_and_bounds() -> None:
    diff = unified_diff("a.txt", BEFORE, AFTER)
    coloured = render_diff(diff, colour=True)
    assert "\x1b[32m+THREE\x1b[0m" in coloured and "\x1b[31m-three\x1b[0m" in coloured
    assert "\x1b[36m@@" in coloured
    plain = render_diff(diff, colour=False, max_lines=4)
    assert "\x1b" not in plain and plain.splitlines()[-1] == f"… {len(diff.splitlines()) - 4} more lines"
    assert render_diff("+\x1b]0;evil\x07ok\n", colour=False) == "+]0;evilok"  # no escape from a diff


def test_approval_diff_and_changed_line() -> None:
    changes = [FileChange(path="a.txt", diff=unified_diff("a.txt", BEFORE, AFTER)),
               FileChange(path="b.txt", kind="add", note=None)]
    shown = approval_diff(changes, colour=False, max_lines=3)
    assert shown.splitlines()[:3] == ["--- a/a.txt", "+++ b/a.txt", "@@ -1,7 +1,8 @@"]
    assert shown.splitlines()[-1] == "b.txt (add): no diff known"
    assert changed_line(["a.py", "notes.txt"]) == "changed: a.py, notes.txt" and changed_line([]) == ""


def test_an_approval_names_files_inside_the_run_relative_to_it() -> None:
    """Agents that name files by absolute path get the same question and diff headers as the others."""
    from harness_core import ApprovalRequested, HarnessToolDetails, ToolKind
    from harness_core.cli.foreground.terminal_approvals import question
    from harness_core.cli.render.diffview import approval_diff
    from harness_core.events import FileChange

    diff = "--- a/tmp/ws/notes.txt\n+++ b/tmp/ws/notes.txt\n@@ -1 +1 @@\n-alpha\n+beta\n"
    display = HarnessToolDetails(kind=ToolKind.EDIT, title="Editing file", path="/tmp/ws/notes.txt",
                                 changes=(FileChange(path="/tmp/ws/notes.txt", kind="modify", diff=diff),))
    request = ApprovalRequested(request_id="r", display=display, reason="notes.txt")
    assert question(request, "/tmp/ws") == ("[approval] Editing file notes.txt — allow? [y]es / [n]o (Enter) / "
                                            "[a]bort: ")  # the reason only repeated the path: not shown twice
    assert approval_diff(display.changes, colour=False, cwd="/tmp/ws").splitlines()[:2] == [
        "--- a/notes.txt", "+++ b/notes.txt"]
    assert approval_diff(display.changes, colour=False, cwd="/elsewhere").splitlines()[0] == "--- a/tmp/ws/notes.txt"
    assert "(because)" in question(request.model_copy(update={"reason": "because"}), "/tmp/ws")
