"""Codex reconnecting to its model API: the notice it gives, the bound Harness puts on it, the error at the end.

Layer: provider support shared by the Codex providers, pure (but `model_api_url` may read
`$CODEX_HOME/config.toml`). Knows Codex's retry texts and where a base URL is configured; knows nothing of
processes, JSON-RPC or which provider found the text. Observed retry behaviour: providers/codex_common/README.md.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness_core import HarnessError, ModelError, Notice, truncate

from harness_codex_common.cli import MAX_RECONNECTS, flat_config
from harness_codex_common.errors import HINTS, codex_error

__all__ = [
    "MAX_RECONNECTS",
    "Reconnect",
    "Reconnects",
    "is_connection_failure",
    "model_api_url",
    "parse_reconnect",
    "unreachable_error",
]

_RECONNECT = re.compile(
    r"^\s*Reconnecting\.\.\.\s*(?:(?P<n>\d+)/(?P<m>\d+)|waiting for network)?\s*(?:\((?P<why>.*)\))?\s*$", re.S
)
_CONNECTION = ("connection failed", "error sending request", "connection refused", "failed to connect")
_BASE_URL = re.compile(r"""\bbase_url\s*=\s*["']([^"']+)["']""")


@dataclass(frozen=True)
class Reconnect:
    """One "Reconnecting..." notice: Codex's attempt number and limit (None while "waiting for network")
    and the failure that caused it."""

    attempt: int | None
    limit: int | None
    reason: str


def parse_reconnect(message: str, reason: str | None = None) -> Reconnect | None:
    """`Reconnecting... 2/5 (why)` or `Reconnecting... waiting for network (why)` as a `Reconnect`; the
    app-server gives the cause apart (`reason`, its `additionalDetails`). None for any other text."""
    match = _RECONNECT.match(message)
    if match is None:
        return None
    n, m = match.group("n"), match.group("m")
    why = reason or match.group("why") or ""
    return Reconnect(int(n) if n else None, int(m) if m else None, why.strip())


def is_connection_failure(text: str) -> bool:
    """Whether a Codex error text says the model API could not be reached at all (no HTTP answer)."""
    lower = text.lower()
    return any(part in lower for part in _CONNECTION)


def unreachable_error(base_url: str | None, attempts: int, detail: str) -> HarnessError:
    """The error of a run whose agent never reached its model API: where it tried, how often, what to do."""
    where = f"at {base_url}" if base_url else "(Codex's default provider, the OpenAI API)"
    said = truncate(detail.strip()) or "no answer"
    error = ModelError(
        f"the agent could not reach its model API {where} after {attempts} attempt{'s' * (attempts != 1)} "
        f"({said}); check the network and the base URL (OPENAI_BASE_URL, or `-o config.model_providers.ID."
        "base_url=...` for the provider `-o config.model_provider=ID` names) and that Codex has credentials "
        "(`harness doctor` checks), or try Harness without credentials with --offline",
        base_url=base_url,
        attempts=attempts,
    )
    error.retryable = True  # the network may come back
    return error


class Reconnects:
    """The reconnect notices of one run, counted: each becomes a `Notice`; once more than `limit` arrived,
    `exhausted` is true and `give_up` is the error the run ends with. `final` classifies Codex's own last
    error of a run that was reconnecting."""

    def __init__(self, limit: int = MAX_RECONNECTS, base_url: str | None = None) -> None:
        self.limit = limit
        self.base_url = base_url
        self.count = 0
        self.last: Reconnect | None = None
        self.status: int | None = None

    @property
    def exhausted(self) -> bool:
        return self.count > self.limit

    def notice(self, message: str, reconnect: Reconnect, status: int | None = None) -> Notice:
        """Count one reconnect and say so (Codex's own words; its n/m, else our count and limit)."""
        self.count += 1
        self.last, self.status = reconnect, status
        details: dict[str, Any] = {
            "attempt": reconnect.attempt if reconnect.attempt is not None else self.count,
            "max": reconnect.limit if reconnect.limit is not None else self.limit,
            "reason": reconnect.reason,
        }
        if status is not None:
            details["status"] = status
        return Notice(code="reconnecting", message=message, details=details)

    def give_up(self) -> HarnessError:
        """The error when Harness stops a run that kept reconnecting (after `count` failed attempts)."""
        reason = self.last.reason if self.last is not None else ""
        return self.failed(self.status, reason, self.count)

    def final(self, status: int | None, detail: str) -> HarnessError | None:
        """Codex's own last error, if it is a connection failure (the unreachable error, counting the first
        attempt and every reconnect), else None: the caller classifies it as usual."""
        if status is not None or not is_connection_failure(detail):
            return None
        return unreachable_error(self.base_url, self.count + 1, detail)

    def failed(self, status: int | None, detail: str, attempts: int) -> HarnessError:
        if status is None and (is_connection_failure(detail) or not detail):
            return unreachable_error(self.base_url, attempts, detail)
        return codex_error(status, f"{detail} (after {attempts} attempts)", hints=HINTS)


def model_api_url(config: Mapping[str, Any], env: Mapping[str, str], codex_home: str | None = None) -> str | None:
    """The base URL of the model provider a run uses, as far as Codex config says: `-c` overrides first
    (`model_providers.ID.base_url`, or an inline table), then `$CODEX_HOME/config.toml`, then
    OPENAI_BASE_URL for the built-in `openai` provider. None when nothing names it."""
    flat = {key: value for key, value in flat_config(config)}
    toml = _config_toml(codex_home or env.get("CODEX_HOME") or os.environ.get("CODEX_HOME"))
    provider = _unquote(flat.get("model_provider")) or _unquote(toml.get("model_provider")) or "openai"
    explicit = flat.get(f"model_providers.{provider}.base_url")
    if explicit is not None:
        return _unquote(explicit)
    table = flat.get(f"model_providers.{provider}")
    if isinstance(table, str) and (match := _BASE_URL.search(table)):
        return match.group(1)
    providers = toml.get("model_providers")
    entry = providers.get(provider) if isinstance(providers, dict) else None
    if isinstance(entry, dict) and isinstance(entry.get("base_url"), str):
        return str(entry["base_url"])
    if provider == "openai":
        return env.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_BASE_URL") or None
    return None


def _unquote(value: Any) -> str | None:
    if value is None:
        return None
    return str(value).strip().strip("\"'") or None


def _config_toml(home: str | None) -> dict[str, Any]:
    try:
        tomllib: Any = importlib.import_module("tomllib")
    except ModuleNotFoundError:  # Python 3.10: -c overrides and OPENAI_BASE_URL only
        return {}
    path = Path(home).expanduser() / "config.toml" if home else Path.home() / ".codex" / "config.toml"
    try:
        with path.open("rb") as fh:
            loaded: dict[str, Any] = tomllib.load(fh)
    except (OSError, ValueError):
        return {}
    return loaded
