"""The statistics of `harness report` against numbers worked out by hand and against independent formulas: the
Wilson interval (as the roots of its quadratic, and published values), the unbiased pass@k of Chen et al. (2021)
(as 1 - C(n-c,k)/C(n,k) with exact binomials), nearest-rank percentiles."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from harness_core.batch.scores import Z95, mean_pass_at_k, pass_at_k, percentile, wilson_interval


def _wilson_roots(passed: int, total: int) -> tuple[float, float]:
    """The Wilson bounds another way: the p with (p̂ - p)² = z² p (1 - p) / n, the roots of a quadratic."""
    p, z2 = passed / total, Z95 * Z95
    a, b, c = 1 + z2 / total, -(2 * p + z2 / total), p * p
    root = math.sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


@pytest.mark.parametrize(("passed", "total"), [(0, 1), (1, 1), (1, 3), (4, 6), (0, 10), (5, 10), (7, 50), (99, 100)])
def test_the_wilson_interval_is_the_roots_of_its_quadratic(passed: int, total: int) -> None:
    low, high = wilson_interval(passed, total)
    want_low, want_high = _wilson_roots(passed, total)
    assert low == pytest.approx(max(want_low, 0.0), abs=1e-12)
    assert high == pytest.approx(min(want_high, 1.0), abs=1e-12)
    assert 0.0 <= low <= passed / total <= high <= 1.0


def test_the_wilson_interval_matches_published_values() -> None:
    assert pytest.approx(1.959963984540054, abs=1e-15) == Z95
    assert wilson_interval(0, 10)[0] == 0.0  # never empty at 0/n
    assert wilson_interval(10, 10)[1] == 1.0
    assert pytest.approx((0.0, 0.27753), abs=5e-6) == wilson_interval(0, 10)
    assert pytest.approx((0.72247, 1.0), abs=5e-6) == wilson_interval(10, 10)
    assert pytest.approx((0.23659, 0.76341), abs=5e-6) == wilson_interval(5, 10)
    assert pytest.approx((0.29999, 0.90323), abs=5e-6) == wilson_interval(4, 6)


@pytest.mark.parametrize(("passed", "total"), [(0, 0), (-1, 3), (4, 3)])
def test_the_wilson_interval_refuses_what_is_no_rate(passed: int, total: int) -> None:
    with pytest.raises(ValueError, match="pass rate"):
        wilson_interval(passed, total)


def test_pass_at_k_equals_the_hand_computed_numbers_exactly() -> None:
    assert pass_at_k(3, 1, 1) == Fraction(1, 3)
    assert pass_at_k(3, 1, 3) == 1
    assert pass_at_k(5, 2, 2) == Fraction(7, 10)  # 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert float(pass_at_k(5, 2, 2)) == 0.7
    assert pass_at_k(4, 0, 2) == 0
    assert pass_at_k(4, 4, 1) == 1
    assert pass_at_k(10, 3, 1) == Fraction(3, 10)  # pass@1 is the pass rate


def test_pass_at_k_is_one_minus_the_ratio_of_binomials() -> None:
    for n in range(1, 13):
        for c in range(n + 1):
            for k in range(1, n + 1):
                assert pass_at_k(n, c, k) == 1 - Fraction(math.comb(n - c, k), math.comb(n, k)), (n, c, k)


def test_pass_at_k_of_many_attempts_stays_exact() -> None:
    """The product form needs no binomial of 200: C(200, 100) is ~1e59, beyond a float's exact integers."""
    assert pass_at_k(200, 1, 100) == Fraction(1, 2)
    assert pass_at_k(200, 3, 100) == 1 - Fraction(math.comb(197, 100), math.comb(200, 100))


@pytest.mark.parametrize(("n", "c", "k"), [(3, 1, 0), (3, 1, 4), (3, 4, 1), (3, -1, 1), (0, 0, 1)])
def test_pass_at_k_refuses_k_beyond_the_attempts(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match="pass@k needs"):
        pass_at_k(n, c, k)


def test_mean_pass_at_k_averages_tasks_and_is_undefined_below_k_attempts() -> None:
    assert mean_pass_at_k([(3, 1), (3, 3)], 1) == 2 / 3  # (1/3 + 1) / 2
    assert mean_pass_at_k([(3, 1), (3, 3)], 2) == 5 / 6  # (2/3 + 1) / 2
    assert mean_pass_at_k([(3, 1), (3, 3)], 3) == 1.0
    assert mean_pass_at_k([(5, 2), (2, 0)], 2) == 0.35  # (7/10 + 0) / 2
    assert mean_pass_at_k([(5, 2), (2, 0)], 3) is None  # the second task has 2 attempts
    assert mean_pass_at_k([], 1) is None


def test_percentiles_are_nearest_rank() -> None:
    assert percentile([15, 20, 35, 40, 50], 50) == 35
    assert percentile([15, 20, 35, 40, 50], 30) == 20
    assert percentile([15, 20, 35, 40, 50], 100) == 50
    assert percentile(list(range(1, 21)), 95) == 19  # ceil(0.95 * 20) = 19 exactly, not 20 of a float 19.000…01
    assert percentile(list(range(10, 0, -1)), 95) == 10  # unsorted input; one of the values, the slowest of 10
    assert percentile([7], 50) == 7
    assert percentile([], 50) is None
    with pytest.raises(ValueError, match="percentile"):
        percentile([1], 0)
