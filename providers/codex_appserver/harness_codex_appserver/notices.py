"""Codex's own warnings → `notice` events: the app-server's `configWarning` becomes a `CLI_WARNING` notice.

Layer: provider mapping, pure. Knows the `ConfigWarningNotification` payload of codex-cli 0.169.0 (`summary`,
and optional `details`, `path`, `range`); knows nothing of processes, turns or the runner.
When Codex sends it and how it is routed: providers/codex_appserver/README.md.
"""

from __future__ import annotations

from typing import Any

from harness_core import CLI_WARNING, Notice

__all__ = ["CLI_WARNING", "CONFIG_WARNING", "config_warning"]

CONFIG_WARNING = "configWarning"
"""The app-server's notification method for its own warnings."""


def _where(path: Any, text_range: Any) -> str:
    """`config.toml:3:7` from the notification's `path` and `range.start` (what is known of them)."""
    if not isinstance(path, str) or not path:
        return ""
    start = text_range.get("start") if isinstance(text_range, dict) else None
    if isinstance(start, dict) and isinstance(start.get("line"), int):
        column = f":{start['column']}" if isinstance(start.get("column"), int) else ""
        return f"{path}:{start['line']}{column}"
    return path


def config_warning(params: Any) -> Notice:
    """The notice for one `configWarning`'s params: its summary as the message (with the config file and line
    when Codex names them), its details and the rest of the payload in `details`."""
    p: dict[str, Any] = params if isinstance(params, dict) else {}
    summary = " ".join(str(p.get("summary") or "codex reported a configuration warning").split())
    where = _where(p.get("path"), p.get("range"))
    details: dict[str, Any] = {"source": f"codex {CONFIG_WARNING}"}
    for key in ("details", "path", "range"):
        if p.get(key) is not None:
            details[key] = p[key]
    message = ("" if summary.lower().startswith("codex") else "codex: ") + summary + (f" ({where})" if where else "")
    if isinstance(p.get("details"), str) and p["details"].strip():
        message += f" — {' '.join(p['details'].split())}"
    return Notice(level="warning", code=CLI_WARNING, message=message, details=details)
