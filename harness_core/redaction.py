"""Scrubbing secrets out of free text (stderr tails, wire lines, error messages).

Layer: core utility. Knows nothing but strings: well-known credential shapes, URL user-info, and the secret
values a caller names.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

__all__ = ["REDACTED", "redact_argv", "scrub"]

REDACTED = "***"
_URL_USERINFO = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/\s@]+@", re.IGNORECASE)
_SECRET_TEXT = re.compile(
    r"(sk-[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}|xox[abprs]-[A-Za-z0-9-]{8,}"
    r"|AKIA[0-9A-Z]{16}|(?<=Bearer )[A-Za-z0-9._~+/=-]{8,})"
)


def scrub(text: str, known: tuple[str, ...] = ()) -> str:
    """`text` with credential-looking substrings, URL user-info and the `known` secret values replaced."""
    for secret in known:
        if len(secret) >= 6 and secret in text:
            text = text.replace(secret, REDACTED)
    text = _URL_USERINFO.sub(lambda m: m.group("scheme") + REDACTED + "@", text)
    return _SECRET_TEXT.sub(REDACTED, text)


def redact_argv(argv: Sequence[str], secret_flags: Collection[str], known: tuple[str, ...] = ()) -> list[str]:
    """`argv` fit for a log line: the value after each flag in `secret_flags` (`--flag VALUE`, or
    `--flag=VALUE`) replaced, and every other argument scrubbed of credential shapes and the `known` secrets."""
    out: list[str] = []
    hide = False
    for arg in argv:
        flag, eq, _ = arg.partition("=")
        if hide:
            out.append(REDACTED)
        elif eq and flag in secret_flags:
            out.append(f"{flag}={REDACTED}")
        else:
            out.append(scrub(arg, known))
        hide = not hide and arg in secret_flags
    return out
