"""The batch page's figures, exactly: Wilson intervals, unbiased pass@k, percentiles, and a report over rows of
two providers with retries, attempts, costs and a verifier's verdicts (the fields a newer results file adds)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from harness_view.batch_report import pass_at_k, percentile, report, wilson
from harness_view.batches import read_rows
from harness_view.pages import Site
from harness_view.render import Links
from harness_view.settings import ViewerSettings


def test_wilson_interval() -> None:
    low, high = wilson(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)  # the textbook values for 8/10 at 95%
    assert wilson(0, 0) == (0.0, 1.0)
    low, high = wilson(0, 5)
    assert low == 0.0 and round(high, 4) == 0.4345
    assert wilson(5, 5)[1] == 1.0


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - math.comb(3, 2) / math.comb(5, 2))  # 0.7
    assert pass_at_k(3, 0, 3) == 0.0 and pass_at_k(3, 1, 3) == 1.0


def test_percentile_interpolates() -> None:
    assert percentile([], 0.5) is None
    assert percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 0.95) == pytest.approx(4.8)


def _line(task: str, provider: str, status: str, *, cost: float | None = None, ms: int = 1000, **extra: object) -> str:
    return json.dumps({"id": task, "run_id": f"r-{task}-{provider}-{extra.get('attempt', 0)}", "status": status,
                       "provider": provider, "cost_usd": cost, "duration_ms": ms,
                       "error_code": None if status == "success" else "model_error",
                       "usage": {"input_tokens": 100, "output_tokens": 10}, **extra})


def test_a_report_of_two_providers(tmp_path: Path) -> None:
    results = tmp_path / "t.results.jsonl"
    results.write_text("\n".join([
        _line("a", "p1", "failed", cost=0.5),  # superseded by the next line of the same task: the last counts
        _line("a", "p1", "success", cost=1.0, ms=2000),
        _line("b", "p1", "failed", cost=1.0, ms=4000),
        _line("a", "p2", "success"),
        _line("b", "p2", "success"),
        "not json",
    ]) + "\n" + '{"id": "c", "run_id": "torn"')  # a torn last line: a batch still writing
    read = read_rows(results)
    assert read.problems == ["line 6 is not a task result (skipped)"]
    rep = report(read.rows, {"r-a-p1-0": "m1"})
    assert [g.label for g in rep.groups] == ["p1", "p1 / m1", "p2"]
    p1m1, p1, p2 = rep.groups[1], rep.groups[0], rep.groups[2]
    assert (p1m1.tasks, p1m1.passed_attempts, p1m1.cost_usd, p1m1.cost_per_solved) == (1, 1, 1.0, 1.0)
    assert (p1.tasks, p1.passed_attempts, p1.cost_per_solved, dict(p1.errors)) == (1, 0, None, {"model_error": 1})
    assert (p2.attempts, p2.rate, p2.costed, p2.cost_per_solved, p2.p50) == (2, 1.0, 0, None, 1.0)
    assert not rep.verified and [t.task_id for t in rep.tasks] == ["a", "b"]


def test_attempts_and_verdicts(tmp_path: Path) -> None:
    """Three attempts per task (issue 28's `attempt`), passing by the verifier's `verified`/`reward`."""
    results = tmp_path / "t.results.jsonl"
    lines = [_line("a", "p", "success", attempt=n, verified=n != 1) for n in range(3)]  # 2 of 3 pass
    lines += [_line("b", "p", "success", attempt=n, reward=0.0) for n in range(3)]  # ran, verifier said no
    results.write_text("\n".join(lines) + "\n")
    rep = report(read_rows(results).rows)
    (group,) = rep.groups
    assert rep.verified and (group.attempts, group.passed_attempts, group.passed_tasks) == (6, 2, 1)
    assert group.pass_k[1] == pytest.approx((2 / 3 + 0) / 2)
    assert group.pass_k[3] == pytest.approx((1 + 0) / 2)
    assert dict(group.errors) == {"not verified": 4}


def test_a_cost_some_attempts_did_not_report_is_shown_partial(tmp_path: Path) -> None:
    """Two tasks solved, one of them with a cost: the cost per solved task divides a floor, and the page says so."""
    results = tmp_path / "t.results.jsonl"
    results.write_text("\n".join([_line("a", "p1", "success", cost=1.0), _line("b", "p1", "success")]) + "\n")
    rep = report(read_rows(results).rows, {})
    group = rep.groups[0]
    assert (group.costed, group.attempts, group.partial_cost, group.cost_per_solved) == (1, 2, True, 0.5)
    runs = tmp_path / "runs"
    runs.mkdir(mode=0o700)
    site = Site(ViewerSettings(runs, batches=(results,)), cwd=tmp_path)
    page = site.batch_page(site.batches()[0], links=Links())
    assert "(partial: 1/2)" in page and "(partial)" in page
