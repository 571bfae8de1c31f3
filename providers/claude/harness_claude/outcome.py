"""Claude Code's `result` line → the turn's outcome: status, final text, usage and a classified error.

Layer: provider (pure mapping). Works on one parsed `result` object plus the little the mapper knows about the
turn so far (whether we sent an interrupt, whether a stream stalled, the text already streamed). No I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from harness_core import (
    AuthFailedError,
    BudgetExceededError,
    ContextUsage,
    HarnessError,
    HarnessEvent,
    HarnessResult,
    IdleTimeoutError,
    ModelError,
    RunStatus,
    SessionNotFoundError,
    StructuredOutputError,
    Usage,
)
from harness_core.provider import error_for_status

from harness_claude._json import count, obj, opt_str, string
from harness_claude.auth import LOGIN_HINT as _LOGIN_HINT

__all__ = [
    "Limits",
    "TurnEnd",
    "classify_api_error",
    "session_not_found",
    "total_cost",
    "turn_end",
    "usage_from_result",
    "with_earlier",
]

_MAX_TURNS = re.compile(r"maximum number of turns \((\d+)\)")
_MAX_BUDGET = re.compile(r"maximum budget \(\$([0-9.]+)\)")
_AUTH_HINT = "check ANTHROPIC_API_KEY (or run `claude /login`) and ANTHROPIC_BASE_URL"
_RATE_HINT = "wait and retry, or raise -o max_retries=N"
_FAILED_HINT = "retry later, or raise -o max_retries=N"
_RETRYING_HINT = "Claude Code is retrying"
_NOT_LOGGED_IN = re.compile(r"not logged in|please run /login|invalid api key", re.IGNORECASE)
"""What Claude Code 2.1.328 says, with no HTTP status, when it has no usable credentials."""
_NO_SESSION = (
    re.compile(r"No conversation found with session ID: (\S+)"),
    re.compile(r'--resume requires a valid session ID.*?Provided value "([^"]*)"', re.DOTALL),
)
"""What Claude Code 2.1.328 says (in `errors` of an `error_during_execution` result) when `--resume` names a
session it does not have: a well-formed id it never saw, or a value that is neither an id nor a title."""


@dataclass(frozen=True)
class TurnEnd:
    """What a `result` line says about the turn."""

    result: HarnessResult
    """The turn's result; a failed one carries its error's info."""
    error: HarnessError | None
    """The classified failure when `result.status` is failed (what the provider raises), else None."""
    context_window: int | None
    """The model's context window, when the line reports one."""


def classify_api_error(status: int | None, message: str, *, retrying: bool = False) -> HarnessError:
    """An API failure reported by Claude Code (a `result` or `system/api_retry` line) as the Harness error it
    stands for: the core's `error_for_status`, with Claude Code's next steps as the hints. `retrying`: Claude
    Code is about to try again (an `api_retry` line)."""
    if status is None and _NOT_LOGGED_IN.search(message):
        return AuthFailedError(f"Claude Code has no usable credentials ({message.strip()}); {_LOGIN_HINT}")
    return error_for_status(
        status,
        message,
        auth_hint=_AUTH_HINT,
        retry_hint=_RATE_HINT,
        failure_hint=_RETRYING_HINT if retrying else _FAILED_HINT,
    )


def usage_from_result(msg: dict[str, Any], *, cost_before: float = 0.0) -> tuple[Usage, int | None]:
    """Per-turn usage and the context window of a `result` line.

    Claude Code 2.1.328 on one process (a live session): `usage` is since the last result, `total_cost_usd` and
    `modelUsage` are totals for the process, `model_usage_since_last_result` is per turn (tokens and `costUSD`
    by model). The cost is that per-turn sum, else `total_cost_usd - cost_before` (`cost_before`: the total of
    the process's earlier results). A result that stops the turn at once (`error_max_budget_usd`) has zero
    `usage` but its model call in `model_usage_since_last_result`: the tokens then come from there."""
    raw = obj(msg.get("usage"))
    fresh, created, read = (
        count(raw.get("input_tokens")),
        count(raw.get("cache_creation_input_tokens")),
        count(raw.get("cache_read_input_tokens")),
    )
    output = count(raw.get("output_tokens"))
    thinking = count(obj(raw.get("output_tokens_details")).get("thinking_tokens"))
    since = msg.get("model_usage_since_last_result")
    per_model = [m for m in since.values() if isinstance(m, dict)] if isinstance(since, dict) else None
    if per_model and not (fresh or created or read or output):
        fresh, created, read, output, thinking = (
            sum(count(m.get(key)) for m in per_model)
            for key in ("inputTokens", "cacheCreationInputTokens", "cacheReadInputTokens", "outputTokens",
                        "thinkingTokens")
        )
    total = msg.get("total_cost_usd")
    cost: float | None = None
    if per_model is not None:
        cost = sum(float(m["costUSD"]) for m in per_model if isinstance(m.get("costUSD"), (int, float)))
    elif isinstance(total, (int, float)) and total >= 0:
        cost = max(float(total) - cost_before, 0.0)
    usage = Usage(
        input_tokens=fresh + created + read,
        cached_input_tokens=read,
        output_tokens=output,
        reasoning_tokens=thinking,
        cost_usd=cost,
    )
    window = None
    model_usage = msg.get("modelUsage")
    if isinstance(model_usage, dict):
        windows = [count(m.get("contextWindow")) for m in model_usage.values() if isinstance(m, dict)]
        window = max(windows, default=0) or None
    return usage, window


def total_cost(msg: dict[str, Any]) -> float | None:
    """`total_cost_usd` of a `result` line: what the process has cost so far (all its turns)."""
    total = msg.get("total_cost_usd")
    return float(total) if isinstance(total, (int, float)) and total >= 0 else None


def _max_turns_error(errors: list[str], reason: str | None) -> ModelError:
    said = "; ".join(errors) or "error_max_turns"
    found = _MAX_TURNS.search(said)
    limit = int(found.group(1)) if found else None
    more = f"above {limit}" if limit is not None else "to a higher limit"
    return ModelError(
        f"Claude Code stopped after its maximum number of turns ({said}); raise -o max_turns=N {more} to let "
        "the agent go on, or split the task",
        terminal_reason=reason,
        max_turns=limit,
    )


def _budget_error(sub: str, errors: list[str], msg: dict[str, Any], limits: Limits) -> BudgetExceededError | None:
    """A native stop for a limit the spec set (`--max-turns`, `--max-budget-usd`) as the budget error; None when
    the limit was not the spec's (a `-o max_turns` option stays a model error, as before budgets existed)."""
    said = "; ".join(errors)
    if sub == "error_max_turns" and limits.max_turns is not None:
        found = _MAX_TURNS.search(said)
        limit = int(found.group(1)) if found else limits.max_turns
        # `--max-turns` counts model calls per turn, also on a live process: this turn's limit, not the session's
        return BudgetExceededError("max_turns", limit, count(msg.get("num_turns")) or None, scope="run",
                                   said=said or sub)
    if sub == "error_max_budget_usd" and limits.max_cost_usd is not None:
        found = _MAX_BUDGET.search(said)
        cost_limit = float(found.group(1)) if found else limits.max_cost_usd
        spent = total_cost(msg)
        return BudgetExceededError("max_cost_usd", cost_limit, round(spent, 6) if spent is not None else None,
                                   scope=limits.scope, said=said or sub)
    return None


@dataclass(frozen=True)
class Limits:
    """The spec's native limits as passed to Claude Code, and what `max_cost_usd` bounds (`scope`: `run`, or a
    live `session`: `--max-budget-usd` covers the whole process). `max_turns` always bounds one turn."""

    max_turns: int | None = None
    max_cost_usd: float | None = None
    scope: str = "run"


def session_not_found(errors: list[str], session_id: str | None) -> SessionNotFoundError | None:
    """The `SessionNotFoundError` a result's `errors` stand for, or None when they say something else. The id is
    the one Claude Code quotes (falling back to the result's `session_id`)."""
    for said in errors:
        for pattern in _NO_SESSION:
            found = pattern.search(said)
            if found:
                return SessionNotFoundError(found.group(1) or session_id or "?", said)
    return None


def turn_end(
    msg: dict[str, Any],
    *,
    session_id: str | None,
    interrupted: bool,
    stalled: bool,
    streamed_text: str,
    limits: Limits | None = None,
    cost_before: float = 0.0,
) -> TurnEnd:
    """The outcome a `result` line stands for.

    `interrupted`: we asked the CLI to stop (an aborted result is then `interrupted`, not a failure);
    `stalled`: the CLI abandoned a stalled stream during the turn; `streamed_text`: the text seen so far;
    `limits`: the spec's native limits (their stops are `budget_exceeded`); `cost_before`: see
    `usage_from_result`. With `--json-schema` the line's `structured_output` is the parsed answer.
    """
    usage, window = usage_from_result(msg, cost_before=cost_before)
    sub = msg.get("subtype")
    reason = opt_str(msg.get("terminal_reason"))
    text = string(msg.get("result"))
    errors = [e for e in msg.get("errors") or [] if isinstance(e, str)]
    status = RunStatus.FAILED
    error: HarnessError | None = None
    if sub == "success" and msg.get("is_error") is not True:
        status = RunStatus.SUCCESS
    elif sub == "error_during_execution" and interrupted:
        status, text = RunStatus.INTERRUPTED, streamed_text
    elif sub == "success" or reason == "api_error" or msg.get("api_error_status") is not None:
        api_status = msg.get("api_error_status")
        code = api_status if isinstance(api_status, int) else None
        error = classify_api_error(code, text or "; ".join(errors))
        if code is None and (stalled or "timeout" in text.lower()):
            error = IdleTimeoutError(
                f"the model API stream stalled ({text.strip()}); raise -o stream_idle_timeout_ms "
                "or check the backend at ANTHROPIC_BASE_URL"
            )
    elif (budget := _budget_error(str(sub), errors, msg, limits or Limits())) is not None:
        error = budget
    elif sub == "error_max_turns":
        error = _max_turns_error(errors, reason)
    elif sub == "error_max_structured_output_retries":  # the model never called its StructuredOutput tool
        error = StructuredOutputError(f"Claude Code gave up asking the model for it ({'; '.join(errors) or sub})", text)
    elif sub == "error_during_execution" and (missing := session_not_found(errors, session_id)) is not None:
        error = missing
    else:
        error = ModelError(
            f"Claude Code ended the turn with {sub} ({reason or 'no reason'}): "
            f"{'; '.join(errors) or text or 'no details'}",
            terminal_reason=reason,
        )
    result = HarnessResult(
        status=status,
        final_text=text if status is not RunStatus.FAILED else "",
        session_id=session_id,
        usage=usage,
        duration_ms=count(msg.get("duration_ms")),
        error=error.to_info() if error is not None else None,
        structured_output=msg.get("structured_output") if status is RunStatus.SUCCESS else None,
    )
    return TurnEnd(result=result, error=error, context_window=window)


def with_earlier(event: HarnessEvent, earlier: Usage | None) -> HarnessEvent:
    """A `result` line's `context_usage` as the whole turn's (with the earlier results of a steered turn)."""
    if earlier is None or not isinstance(event, ContextUsage):
        return event
    return event.model_copy(update={"usage": earlier + event.usage})
