"""The statistics of a batch report: Wilson 95% intervals of pass rates, the unbiased pass@k of Chen et al. (2021)
averaged over tasks, nearest-rank percentiles. Formulas: docs/evaluate.md.

Layer: batch (pure functions of numbers; the standard library only). Knows nothing of results, runs or providers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from fractions import Fraction
from statistics import NormalDist

__all__ = ["Z95", "mean_pass_at_k", "pass_at_k", "percentile", "wilson_interval"]

Z95 = NormalDist().inv_cdf(0.975)
"""The standard normal quantile of a two-sided 95% interval (1.959963984540054)."""


def wilson_interval(passed: int, total: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of the pass rate `passed`/`total` (95% with the default `z`):
    ``(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``, kept within [0, 1]. Unlike p ± z·sqrt(p(1-p)/n) it is
    never empty at 0/n or n/n and stays sensible for the few tasks a batch often has.

    Raises:
        ValueError: `total` < 1, or `passed` outside 0..`total`.
    """
    if total < 1 or not 0 <= passed <= total:
        raise ValueError(f"a pass rate needs 0 <= passed <= total and total >= 1, not {passed}/{total}")
    p = passed / total
    z2 = z * z
    centre = (p + z2 / (2 * total)) / (1 + z2 / total)
    half = z / (1 + z2 / total) * math.sqrt(p * (1 - p) / total + z2 / (4 * total * total))
    low = 0.0 if passed == 0 else max(0.0, centre - half)
    high = 1.0 if passed == total else min(1.0, centre + half)
    return low, high


def pass_at_k(n: int, c: int, k: int) -> Fraction:
    """The unbiased estimate of pass@k of one task from `n` attempts of which `c` passed (Chen et al. 2021, "Evaluating
    Large Language Models Trained on Code", eq. 1): the chance that k attempts drawn without replacement from the n
    include a passing one, ``1 - C(n-c, k) / C(n, k)``, computed as the product ``1 - Π_{i=n-c+1..n} (1 - k/i)``
    (no huge binomials), exactly in rationals. 1 when fewer than k attempts failed (every draw holds a pass).

    Raises:
        ValueError: not 1 <= k <= n, or `c` outside 0..n.
    """
    if not 1 <= k <= n or not 0 <= c <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n and 0 <= c <= n, not n={n}, c={c}, k={k}")
    if n - c < k:
        return Fraction(1)
    missed = Fraction(1)
    for i in range(n - c + 1, n + 1):
        missed *= 1 - Fraction(k, i)
    return 1 - missed


def mean_pass_at_k(counts: Iterable[tuple[int, int]], k: int) -> float | None:
    """pass@k of a set of tasks: `pass_at_k` of each task's (attempts, passed), averaged over the tasks (each task
    weighs the same, however many attempts it had). None when there is no task, or a task has fewer than k attempts
    (the estimator is not defined for it)."""
    each = list(counts)
    if not each or any(n < k for n, _ in each):
        return None
    return float(sum((pass_at_k(n, c, k) for n, c in each), Fraction(0)) / len(each))


def percentile(values: Sequence[float], q: float) -> float | None:
    """The `q`th percentile (0 < q <= 100) of `values` by the nearest-rank method: the smallest value that at least
    q% of the values are at or below, ``sorted(values)[ceil(q/100 * n) - 1]``; always one of the values (a p95 of 10
    runs is the slowest run, never an interpolated time nobody took). None when there are no values.

    Raises:
        ValueError: q outside (0, 100].
    """
    if not 0 < q <= 100:
        raise ValueError(f"a percentile is in (0, 100], not {q}")
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(math.ceil(Fraction(q) * len(ordered) / 100), 1) - 1]
