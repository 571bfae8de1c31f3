"""Scrubbing secrets out of free text (stderr tails, wire lines, error messages).

Layer: core utility. Knows nothing but strings: well-known credential shapes, URL user-info, and the secret
values a caller names.
"""

from __future__ import annotations

import re

__all__ = ["REDACTED", "scrub"]

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
