"""`harness view --batch TASKS.jsonl`, the tasks file given where its results file goes: the batch page says so
and names the results file to give instead (not only "line N is not a task result")."""

from __future__ import annotations

import json
from pathlib import Path

from harness_view.batches import read_rows


def test_a_tasks_file_given_as_results_names_its_results_file(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"id": f"t{i}", "prompt": "hi", "provider": "claude"}) + "\n"
                             for i in range(2)))
    said = read_rows(tasks).problems
    assert said[0] == (f"tasks.jsonl holds no task results: it looks like a tasks file (what `harness batch` "
                       f"reads); its results go to {tmp_path / 'tasks.results.jsonl'} once `harness batch "
                       "tasks.jsonl` ran")
    (tmp_path / "tasks.results.jsonl").write_text("")
    assert read_rows(tasks).problems[0].endswith(
        f"its results are in {tmp_path / 'tasks.results.jsonl'}: give that to --batch")
    assert read_rows(tasks).problems[1:] == ["line 1 is not a task result (skipped)",
                                             "line 2 is not a task result (skipped)"]
