"""What one viewer serves and how it is reached: the runs directory, the batches' results files, the token.

Knows paths and secrets only: nothing of HTTP, templates or the run store's format.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["LOOPBACK", "ViewerSettings"]

LOOPBACK = "127.0.0.1"


def _token() -> str:
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class ViewerSettings:
    """One viewer's configuration. `batches` are results files (`harness batch`'s `*.results.jsonl`); `token`
    is what every request must carry (the URL's `?token=`, then a cookie); `host` is where it listens."""

    runs_dir: Path
    batches: tuple[Path, ...] = ()
    token: str = field(default_factory=_token, repr=False)
    host: str = LOOPBACK
    max_streams: int = 32
    """Live pages (event streams) open at once; one more gets 503 (each holds a thread's turn and a timeline)."""

    @property
    def csrf(self) -> str:
        """The token a state-changing request must also carry (a form field or `X-CSRF-Token`): derived from the
        access token, so a page of this viewer knows it and no other site can."""
        return hmac.new(self.token.encode(), b"harness-view csrf", hashlib.sha256).hexdigest()
