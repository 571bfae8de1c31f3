"""Which failed attempts a batch plays again, and how long it waits first (exponential backoff, full jitter).

Layer: batch (pure policy). Knows the result model and the error codes; knows nothing of providers or engines.
What is retried and what never is: docs/jobs-and-batches.md (retries).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from harness_core.events import HarnessResult, RunStatus

__all__ = ["RETRIED_CODES", "RetryPolicy"]

RETRIED_CODES: frozenset[str] = frozenset({"process_exited", "provider_crashed", "worker_lost"})
_CAP = 60.0


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = 0
    """Attempts after the first, at most."""
    backoff: float = 2.0
    """The first wait's upper bound in seconds; it doubles after each attempt (capped at a minute)."""

    def __post_init__(self) -> None:
        if self.retries < 0:
            raise ValueError(f"retries must be 0 or more, not {self.retries}")
        if not (math.isfinite(self.backoff) and self.backoff >= 0):
            raise ValueError(f"the retry backoff must be a finite number of seconds, 0 or more, not {self.backoff}")

    @staticmethod
    def retryable(result: HarnessResult) -> bool:
        """Whether playing the attempt again may succeed."""
        if result.status is not RunStatus.FAILED or result.error is None:
            return False
        return result.error.retryable or result.error.code in RETRIED_CODES

    def should_retry(self, result: HarnessResult, attempt: int) -> bool:
        """After attempt number `attempt` (1-based) ended with `result`."""
        return attempt <= self.retries and self.retryable(result)

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """Seconds to wait before the attempt after number `attempt`: uniform in [0, backoff * 2^(attempt-1)]
        ("full jitter": many tasks rate-limited together do not come back together), capped at 60 s."""
        bound = min(_CAP, self.backoff * (2 ** (attempt - 1)))
        return (rng or random).uniform(0, bound)
