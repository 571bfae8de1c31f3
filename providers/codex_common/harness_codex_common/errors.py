"""Codex's failures as Harness errors: which class a Codex error is, and the next steps Codex users take.

Layer: provider support shared by the Codex providers, pure. Knows Codex's error texts and how Codex is given a
key or a model; knows nothing of where a provider found the error (a JSONL line, a JSON-RPC `TurnError`) nor of
`codexErrorInfo` names. How a class is chosen: providers/codex_common/README.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal, NamedTuple

from harness_core import (
    AuthFailedError,
    HarnessError,
    InvalidSpecError,
    McpServer,
    RateLimitedError,
    SessionNotFoundError,
    truncate,
)
from harness_core.provider import error_for_status, failed_server_next_step

__all__ = [
    "MAX_PROMPT_CHARS",
    "prompt_too_long",
    "AUTH_HINT",
    "FAILURE_HINT",
    "HINTS",
    "RETRYING",
    "RETRY_HINT",
    "CodexHints",
    "ErrorKind",
    "classify_message",
    "codex_error",
    "message_kind",
    "mcp_servers_failed",
    "message_status",
    "session_not_found",
]

ErrorKind = Literal["auth", "rate_limit"]

AUTH_HINT = (
    "check the model provider's API key (the `env_key` variable of a custom provider, or `codex login`) and "
    "run again"
)
RETRY_HINT = "wait a little and run again"
FAILURE_HINT = "run again, or check the provider status and `-o config.model=...`"


class CodexHints(NamedTuple):
    """The next step an error message ends with, by class: credentials, rate limit, any other failure."""

    auth: str = AUTH_HINT
    retry: str = RETRY_HINT
    failure: str = FAILURE_HINT


HINTS = CodexHints()
RETRYING = CodexHints("codex is retrying", "codex is retrying", "codex is retrying")
"""For a notice that Codex retries by itself: the user has nothing to do yet."""

_DECIDING = frozenset({401, 403, 429})
_HTTP_STATUS = re.compile(r"\bstatus (\d{3})\b|\b(\d{3}) (?:Unauthorized|Forbidden|Too Many Requests)\b")
_INTERNAL_SERVER_ERROR = "currently experiencing high demand"
"""What Codex says instead of an HTTP 500 (its `InternalServerError`): the status is not in the text."""
_NO_SESSION = ("no rollout found for thread id", "invalid session id", "thread not found")
"""Codex's words (`thread/resume`, `codex exec resume`) for a session id it has no thread for."""
_TEXTS: tuple[tuple[ErrorKind, tuple[str, ...]], ...] = (
    ("auth", ("unauthorized", "missing environment variable")),
    ("rate_limit", ("rate limit", "too many requests", "usage limit")),
)


def message_status(message: str) -> int | None:
    """The HTTP status a Codex error text quotes (`unexpected status 401 Unauthorized`, `last status: 429`),
    or implies (its fixed text for a 500: "We're currently experiencing high demand, ...")."""
    match = _HTTP_STATUS.search(message)
    if match:
        return int(next(g for g in match.groups() if g))
    return 500 if _INTERNAL_SERVER_ERROR in message.lower() else None


def message_kind(message: str) -> ErrorKind | None:
    """What a Codex error text says the failure is about when it quotes no deciding status."""
    lower = message.lower()
    return next((kind for kind, texts in _TEXTS if any(text in lower for text in texts)), None)


def codex_error(
    status: int | None,
    detail: str,
    *,
    kind: ErrorKind | None = None,
    source: str = "codex",
    hints: CodexHints = HINTS,
    **details: Any,
) -> HarnessError:
    """The Harness error for a Codex failure: `status` decides when it is 401/403/429, else `kind` (from
    `source`, named in the message in the status's place), else the core's `error_for_status`. `details`
    are kept on the error."""
    if status not in _DECIDING and kind is not None:
        quoted = f"{source}: {truncate(detail.strip()) or 'no message'}"
        if kind == "auth":
            return AuthFailedError(
                f"the model API refused the credentials ({quoted}); {hints.auth}", status=status, **details
            )
        return RateLimitedError(f"the model API is rate limiting ({quoted}); {hints.retry}", status=status, **details)
    return error_for_status(
        status, detail, auth_hint=hints.auth, retry_hint=hints.retry, failure_hint=hints.failure, **details
    )


def classify_message(message: str, *, hints: CodexHints = HINTS, **details: Any) -> HarnessError:
    """A Codex error text (all `codex exec` prints of a failure) as the Harness error it is."""
    return codex_error(message_status(message), message, kind=message_kind(message), hints=hints, **details)


def session_not_found(session_id: str, message: str) -> SessionNotFoundError | None:
    """The error for a resume Codex refused because it has no thread `session_id` (no rollout in its
    CODEX_HOME, or not a thread id at all), else None."""
    lower = message.lower()
    if not any(text in lower for text in _NO_SESSION):
        return None
    return SessionNotFoundError(
        session_id, f"{message.strip()}; a session lives in the CODEX_HOME of the run that started it"
    )


_MCP_FAILED = re.compile(r"required MCP servers failed to initialize: (.+?)(?: \(code -?\d+\))?$", re.MULTILINE)
"""What Codex 0.169.0 says when a server of the run does not start (`codex exec` then dies, with a Rust backtrace
when RUST_BACKTRACE is set): the servers and why, e.g. `everything: No such file or directory (os error 2)`."""


def mcp_servers_failed(stderr: str, servers: Iterable[McpServer] = ()) -> InvalidSpecError | None:
    """The error for a run Codex could not start because an MCP server of it did not start, found in what Codex
    wrote (its stderr), else None: Codex's own words, without its backtrace, and what to do next (for a server of
    `servers` given by URL, the URL it could not reach)."""
    found = _MCP_FAILED.search(stderr)
    if found is None:
        return None
    said = found.group(1).strip()
    named = [server for server in servers if re.search(rf"(?:^|, ){re.escape(server.name)}: ", said)]
    steps = dict.fromkeys([failed_server_next_step(server) for server in named] or [failed_server_next_step(None)])
    return InvalidSpecError(
        f"Codex could not start the run's MCP servers ({truncate(said)}); {'; '.join(steps)}; or leave it out",
        servers_failed=said,
    )


MAX_PROMPT_CHARS = 1_048_576
"""The longest input Codex 0.169.0 takes in one turn, in characters: over it, `codex exec` dies with a Rust backtrace
and app-server refuses `turn/start` (`input_too_large`)."""


def prompt_too_long(prompt: str) -> InvalidSpecError | None:
    """The error for a prompt Codex would refuse (over `MAX_PROMPT_CHARS`), with what to do; None when it fits."""
    if len(prompt) <= MAX_PROMPT_CHARS:
        return None
    return InvalidSpecError(
        f"the prompt is {len(prompt):,} characters; Codex takes at most {MAX_PROMPT_CHARS:,}: shorten it, or put the "
        "text in a file in the workspace and ask the agent to read it")
