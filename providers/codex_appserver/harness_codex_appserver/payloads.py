"""Codex app-server payload values → harness values: a `TurnError` → `ErrorInfo`, token usage → `Usage`.

Layer: provider mapping, pure. Knows the `codexErrorInfo` variants and the `TokenUsageBreakdown` shape of
codex-cli 0.169.0 and the harness error codes; knows nothing of notifications, their order, or processes.

Errors are classified from `codexErrorInfo`: HTTP 401/403 or `unauthorized` → `auth_failed`; HTTP 429,
`rateLimitExceeded`, `usageLimitExceeded`, `sessionBudgetExceeded` → `rate_limited`; everything else →
`model_error` (with the HTTP status when known).
"""

from __future__ import annotations

from typing import Any

from harness_core.events import ErrorInfo, Usage

__all__ = ["classify_error", "error_info", "usage_from_wire", "usage_minus"]

_RATE = {"rateLimitExceeded", "usageLimitExceeded", "sessionBudgetExceeded"}
_AUTH = {"unauthorized"}
_STATUS_OF = {"internalServerError": 500, "badRequest": 400, "unauthorized": 401, "rateLimitExceeded": 429}

_NEXT = {
    "auth_failed": "check the model provider's API key (the `env_key` variable of a custom provider, or "
    "`codex login`) and run again",
    "rate_limited": "the model API is rate limiting; wait a little and run again",
    "model_error": "the model API failed; run again, or check the provider status and `-o config.model=...`",
}


def classify_error(info: Any) -> tuple[str, int | None]:
    """`codexErrorInfo` → (harness error code, HTTP status if known)."""
    status: int | None = None
    name = ""
    if isinstance(info, str):
        name = info
        status = _STATUS_OF.get(info)
    elif isinstance(info, dict) and info:
        name = next(iter(info))
        inner = info[name]
        if isinstance(inner, dict) and isinstance(inner.get("httpStatusCode"), int):
            status = inner["httpStatusCode"]
    if status in (401, 403) or name in _AUTH:
        return "auth_failed", status
    if status == 429 or name in _RATE:
        return "rate_limited", status
    return "model_error", status


def error_info(error: dict[str, Any], *, retryable: bool = False) -> ErrorInfo:
    """A Codex `TurnError` as `ErrorInfo`, saying what to do next."""
    code, status = classify_error(error.get("codexErrorInfo"))
    message = str(error.get("message") or "the turn failed")
    extra = error.get("additionalDetails")
    text = f"{message} ({extra})" if extra else message
    if not retryable:
        text = f"{text}; {_NEXT[code]}"
    details = {"codex_error_info": error.get("codexErrorInfo"), "http_status": status}
    return ErrorInfo(
        code=code,
        message=text,
        retryable=retryable or code == "rate_limited",
        details={k: v for k, v in details.items() if v is not None},
    )


def usage_from_wire(breakdown: dict[str, Any] | None) -> Usage:
    """A `TokenUsageBreakdown` (camelCase, possibly partial) as `Usage`; missing or negative figures are 0."""
    b = breakdown or {}
    return Usage(
        input_tokens=max(0, int(b.get("inputTokens") or 0)),
        cached_input_tokens=max(0, int(b.get("cachedInputTokens") or 0)),
        output_tokens=max(0, int(b.get("outputTokens") or 0)),
        reasoning_tokens=max(0, int(b.get("reasoningOutputTokens") or 0)),
    )


def usage_minus(a: Usage, b: Usage) -> Usage:
    """`a - b` per figure, never below zero (a per-run figure from two cumulative thread totals)."""
    return Usage(
        input_tokens=max(0, a.input_tokens - b.input_tokens),
        cached_input_tokens=max(0, a.cached_input_tokens - b.cached_input_tokens),
        output_tokens=max(0, a.output_tokens - b.output_tokens),
        reasoning_tokens=max(0, a.reasoning_tokens - b.reasoning_tokens),
    )
