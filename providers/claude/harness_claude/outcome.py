"""Claude Code's `result` line → the turn's outcome: status, final text, usage and a classified error.

Layer: provider (pure mapping). Works on one parsed `result` object plus the little the mapper knows about the
turn so far (whether we sent an interrupt, whether a stream stalled, the text already streamed). No I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from harness_core.errors import AuthFailedError, HarnessError, IdleTimeoutError, ModelError, RateLimitedError
from harness_core.events import HarnessResult, RunStatus, Usage

from harness_claude._json import count, obj, opt_str, string

__all__ = ["TurnEnd", "classify_api_error", "turn_end", "usage_from_result"]

_MAX_TURNS = re.compile(r"maximum number of turns \((\d+)\)")


@dataclass(frozen=True)
class TurnEnd:
    """What the `result` line says about the turn. `error` is set when `status` is failed."""

    status: RunStatus
    final_text: str
    session_id: str | None
    usage: Usage
    duration_ms: int
    error: HarnessError | None = None
    terminal_reason: str | None = None

    def to_result(self) -> HarnessResult:
        return HarnessResult(
            status=self.status,
            final_text=self.final_text,
            session_id=self.session_id,
            usage=self.usage,
            duration_ms=max(self.duration_ms, 0),
            error=self.error.to_info() if self.error is not None else None,
        )


def classify_api_error(status: int | None, message: str, *, retrying: bool = False) -> HarnessError:
    """Map an API failure reported by Claude Code to the Harness error it stands for."""
    detail = message.strip() or "no message"
    where = f"HTTP {status}" if status is not None else "no HTTP status"
    if status in (401, 403):
        return AuthFailedError(
            f"the model API refused the credentials ({where}: {detail}); check ANTHROPIC_API_KEY "
            "(or run `claude /login`) and ANTHROPIC_BASE_URL",
            status=status,
        )
    if status == 429:
        return RateLimitedError(
            f"the model API is rate limiting ({where}: {detail}); wait and retry, or raise -o max_retries=N",
            status=status,
        )
    hint = "Claude Code is retrying" if retrying else "retry later, or raise -o max_retries=N"
    return ModelError(f"the model API failed ({where}: {detail}); {hint}", status=status)


def usage_from_result(msg: dict[str, Any]) -> tuple[Usage, int | None]:
    """Per-turn usage (the `usage` of a `result` is since the last result) and the context window."""
    raw = obj(msg.get("usage"))
    fresh, created, read = (
        count(raw.get("input_tokens")),
        count(raw.get("cache_creation_input_tokens")),
        count(raw.get("cache_read_input_tokens")),
    )
    details = obj(raw.get("output_tokens_details"))
    cost = msg.get("total_cost_usd")
    usage = Usage(
        input_tokens=fresh + created + read,
        cached_input_tokens=read,
        output_tokens=count(raw.get("output_tokens")),
        reasoning_tokens=count(details.get("thinking_tokens")),
        cost_usd=float(cost) if isinstance(cost, (int, float)) and cost >= 0 else None,
    )
    window = None
    model_usage = msg.get("modelUsage")
    if isinstance(model_usage, dict):
        windows = [count(m.get("contextWindow")) for m in model_usage.values() if isinstance(m, dict)]
        window = max(windows, default=0) or None
    return usage, window


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


def turn_end(
    msg: dict[str, Any], *, session_id: str | None, interrupted: bool, stalled: bool, streamed_text: str
) -> tuple[TurnEnd, int | None]:
    """The outcome a `result` line stands for, and the context window it reports.

    `interrupted`: we asked the CLI to stop (an aborted result is then `interrupted`, not a failure);
    `stalled`: the CLI abandoned a stalled stream during the turn; `streamed_text`: the text seen so far.
    """
    usage, window = usage_from_result(msg)
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
    elif sub == "error_max_turns":
        error = _max_turns_error(errors, reason)
    else:
        error = ModelError(
            f"Claude Code ended the turn with {sub} ({reason or 'no reason'}): "
            f"{'; '.join(errors) or text or 'no details'}",
            terminal_reason=reason,
        )
    end = TurnEnd(
        status=status,
        final_text=text if status is not RunStatus.FAILED else "",
        session_id=session_id,
        usage=usage,
        duration_ms=count(msg.get("duration_ms")),
        error=error,
        terminal_reason=reason,
    )
    return end, window
