"""Codex app-server payload values → harness values: a `TurnError` → a `HarnessError`, token usage → `Usage`.

Layer: provider mapping, pure. Knows the `codexErrorInfo` variants and `TokenUsageBreakdown` of codex-cli 0.169.0;
knows nothing of notifications, their order, or processes. The error's class and words are
`harness_codex_common.codex_error`'s. How a variant maps: providers/codex_appserver/README.md.
"""

from __future__ import annotations

from typing import Any

from harness_codex_common import HINTS, RETRYING, ErrorKind, Reconnects, codex_error
from harness_core import HarnessError, Usage

__all__ = ["codex_error_status", "turn_error", "turn_failure", "usage_from_wire"]

_KIND: dict[str, ErrorKind] = {
    "unauthorized": "auth",
    "rateLimitExceeded": "rate_limit",
    "usageLimitExceeded": "rate_limit",
    "sessionBudgetExceeded": "rate_limit",
}
_STATUS_OF = {"internalServerError": 500, "badRequest": 400, "unauthorized": 401, "rateLimitExceeded": 429}


def codex_error_status(info: Any) -> tuple[str, int | None]:
    """`codexErrorInfo` (a variant name, or a one-key object) → (variant name, HTTP status if known)."""
    if isinstance(info, str):
        return info, _STATUS_OF.get(info)
    if isinstance(info, dict) and info:
        name = str(next(iter(info)))
        inner = info[name]
        if isinstance(inner, dict) and isinstance(inner.get("httpStatusCode"), int):
            return name, inner["httpStatusCode"]
        return name, _STATUS_OF.get(name)
    return "", None


def turn_error(error: dict[str, Any], *, will_retry: bool = False) -> HarnessError:
    """A Codex `TurnError` as the Harness error it is, its message ending with what to do next (or, for a
    notice that Codex will retry, saying so; such an error is retryable)."""
    info = error.get("codexErrorInfo")
    name, status = codex_error_status(info)
    text = str(error.get("message") or "the turn failed")
    extra = error.get("additionalDetails")
    detail = f"{text} ({extra})" if extra else text
    hints = RETRYING if will_retry else HINTS
    err = codex_error(status, detail, kind=_KIND.get(name), source=name, hints=hints, codex_error_info=info)
    if will_retry:
        err.retryable = True
    return err


def turn_failure(error: dict[str, Any], reconnects: Reconnects) -> HarnessError:
    """A turn's fatal `TurnError`: "could not reach its model API" (`reconnects` knows where and how often)
    for a connection failure without an HTTP status, else `turn_error`'s class."""
    status = codex_error_status(error.get("codexErrorInfo"))[1]
    detail = " ".join(str(part) for part in (error.get("message"), error.get("additionalDetails")) if part)
    return reconnects.final(status, detail) or turn_error(error)


def usage_from_wire(breakdown: dict[str, Any] | None) -> Usage:
    """A `TokenUsageBreakdown` (camelCase, possibly partial) as `Usage`; missing or negative figures are 0."""
    b = breakdown or {}
    return Usage(
        input_tokens=max(0, int(b.get("inputTokens") or 0)),
        cached_input_tokens=max(0, int(b.get("cachedInputTokens") or 0)),
        output_tokens=max(0, int(b.get("outputTokens") or 0)),
        reasoning_tokens=max(0, int(b.get("reasoningOutputTokens") or 0)),
    )
