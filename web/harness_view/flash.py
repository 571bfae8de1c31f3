"""Notices a redirect carries to the page it lands on (Cancel's `?cancelled=STAMP`): a stamp the viewer signs with
its token for one deed on one run, good for a minute. A URL typed, bookmarked or shared later, or a stamp forged,
stale or another run's, says nothing.

Knows the settings' token and HMAC; nothing of HTTP, pages or runs.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time

from harness_view.settings import ViewerSettings

__all__ = ["FRESH_FOR", "fresh", "stamp"]

FRESH_FOR = 60.0
"""Seconds a stamp is good for: the redirect follows at once; a reload soon after still says it."""
_STAMP = re.compile(r"([0-9]{1,12})\.([0-9a-f]{32})", re.ASCII)


def stamp(settings: ViewerSettings, deed: str, run_id: str, *, now: float | None = None) -> str:
    """The stamp saying this viewer did `deed` to run `run_id` now (`TIME.SIGNATURE`)."""
    at = int(time.time() if now is None else now)
    return f"{at}.{_signature(settings, deed, run_id, at)}"


def fresh(settings: ViewerSettings, deed: str, run_id: str, value: str, *, now: float | None = None) -> bool:
    """Whether `value` is this viewer's stamp of `deed` on `run_id`, made less than `FRESH_FOR` s ago."""
    found = _STAMP.fullmatch(value)  # ASCII only: anything else (other digits, other letters) is no stamp
    if found is None:
        return False
    at = int(found[1])
    age = (time.time() if now is None else now) - at
    return 0 <= age <= FRESH_FOR and hmac.compare_digest(found[2].encode(),
                                                         _signature(settings, deed, run_id, at).encode())


def _signature(settings: ViewerSettings, deed: str, run_id: str, at: int) -> str:
    said = f"harness-view flash\0{deed}\0{run_id}\0{at}".encode("utf-8", "surrogateescape")
    return hmac.new(settings.token.encode(), said, hashlib.sha256).hexdigest()[:32]
