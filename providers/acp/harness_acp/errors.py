"""A failed `session/prompt` → the Harness error it stands for (pure).

Layer: provider (pure mapping). ACP has no error vocabulary for model API failures, so this reads an HTTP status or
the words that stand for one out of the agent's JSON-RPC error and classifies as every provider does
(`error_for_status`). Knows no process and no agent's internals. What it reads: providers/acp/README.md.
"""

from __future__ import annotations

import json
import re
from typing import Any

from harness_core import HarnessError
from harness_core.provider import JsonRpcError, error_for_status, truncate

__all__ = ["prompt_error", "status_in"]

_STATUS = re.compile(r"(?<![\d.:/])(401|403|429|5\d\d)(?![\d.:]|\s?(?:ms|s|sec|seconds|bytes|[kKMG]i?B|%)\b)")
_WORDS: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"rate.?limit|too many requests|quota|resource.?exhausted", re.IGNORECASE), 429),
    (re.compile(r"unauthori[sz]ed|unauthenticated|invalid.{0,12}(api.?key|credential|token)|authentication",
                re.IGNORECASE), 401),
    (re.compile(r"internal.?server.?error|internal error|overloaded|unavailable|bad gateway", re.IGNORECASE), 500),
)


def status_in(text: str) -> int | None:
    """The HTTP status a model API failure's text names, or stands for by its words (None: neither)."""
    found = _STATUS.search(text)
    if found is not None:
        return int(found.group(1))
    for pattern, status in _WORDS:
        if pattern.search(text):
            return status
    return None


def prompt_error(agent: str, exc: JsonRpcError) -> HarnessError:
    """The error of a prompt the agent answered with `exc`."""
    data: Any = exc.data
    detail = exc.message
    if data is not None:
        detail = f"{detail} {data if isinstance(data, str) else json.dumps(data, default=str)}"
    # Some agents (Gemini CLI, Qwen Code) make the JSON-RPC error code the model API's HTTP status.
    status = exc.code if 400 <= exc.code < 600 else status_in(detail)
    return error_for_status(
        status, truncate(detail),
        auth_hint=f"check the API key {agent} uses (its environment or its settings) and its base URL",
        retry_hint="wait a moment and retry",
        failure_hint=f"retry later; `harness show last` shows the run and what {agent} said",
        rpc_code=exc.code,
    )
