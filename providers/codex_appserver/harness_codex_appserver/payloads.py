"""Codex app-server payload values → harness values: a `TurnError` → a `HarnessError`, token usage → `Usage`.

Layer: provider mapping, pure. Knows the `codexErrorInfo` variants and the `TokenUsageBreakdown` shape of
codex-cli 0.169.0 and Codex's next steps; knows nothing of notifications, their order, or processes. Which
error class an HTTP status stands for, and how its message reads, is the core's `error_for_status`.

A `codexErrorInfo` carries an HTTP status (`{"httpConnectionFailed": {"httpStatusCode": 401}}`) or implies
one by its name (`unauthorized` → 401, `rateLimitExceeded` → 429, `internalServerError` → 500, `badRequest`
→ 400); the status decides. Without a deciding status, `usageLimitExceeded` and `sessionBudgetExceeded` are
rate limits and `unauthorized` a credentials failure; everything else is a model error.
"""

from __future__ import annotations

from typing import Any

from harness_core import AuthFailedError, HarnessError, RateLimitedError, Usage, truncate
from harness_core.provider import error_for_status

__all__ = ["AUTH_HINT", "FAILURE_HINT", "RETRY_HINT", "codex_error_status", "turn_error", "usage_from_wire"]

_RATE = frozenset({"rateLimitExceeded", "usageLimitExceeded", "sessionBudgetExceeded"})
_AUTH = frozenset({"unauthorized"})
_STATUS_OF = {"internalServerError": 500, "badRequest": 400, "unauthorized": 401, "rateLimitExceeded": 429}
_DECIDING = frozenset({401, 403, 429})

AUTH_HINT = (
    "check the model provider's API key (the `env_key` variable of a custom provider, or `codex login`) and "
    "run again"
)
RETRY_HINT = "wait a little and run again"
FAILURE_HINT = "run again, or check the provider status and `-o config.model=...`"
_RETRYING = "codex is retrying"


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
    auth, retry, failure = (_RETRYING,) * 3 if will_retry else (AUTH_HINT, RETRY_HINT, FAILURE_HINT)
    err: HarnessError
    if status not in _DECIDING and (name in _AUTH or name in _RATE):
        quoted = f"{name}: {truncate(detail.strip()) or 'no message'}"
        if name in _AUTH:
            err = AuthFailedError(f"the model API refused the credentials ({quoted}); {auth}",
                                  status=status, codex_error_info=info)
        else:
            err = RateLimitedError(f"the model API is rate limiting ({quoted}); {retry}",
                                   status=status, codex_error_info=info)
    else:
        err = error_for_status(status, detail, auth_hint=auth, retry_hint=retry, failure_hint=failure,
                               codex_error_info=info)
    if will_retry:
        err.retryable = True
    return err


def usage_from_wire(breakdown: dict[str, Any] | None) -> Usage:
    """A `TokenUsageBreakdown` (camelCase, possibly partial) as `Usage`; missing or negative figures are 0."""
    b = breakdown or {}
    return Usage(
        input_tokens=max(0, int(b.get("inputTokens") or 0)),
        cached_input_tokens=max(0, int(b.get("cachedInputTokens") or 0)),
        output_tokens=max(0, int(b.get("outputTokens") or 0)),
        reasoning_tokens=max(0, int(b.get("reasoningOutputTokens") or 0)),
    )
