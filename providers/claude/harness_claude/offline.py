"""How the real `claude` runs offline: against a scripted Anthropic Messages backend on 127.0.0.1.

Layer: provider configuration. Knows what Claude Code needs to talk only to a loopback model API (the
environment from `MessagesBackend.claude_env`, an isolated home, no retries, no settings files); the backend
itself lives in `harness_core.offline.backends`. Imported only by `ClaudeProvider.offline_setup`, so a normal run
never loads the testing backends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness_core.provider import OfflineSetup
from harness_core.offline.backends.messages import MessagesBackend
from harness_core.offline.scenarios import Scenario

__all__ = ["OFFLINE_OPTIONS", "offline_setup"]

OFFLINE_OPTIONS: dict[str, Any] = {
    "max_retries": 0,
    "setting_sources": "",
}
"""No retries (a scripted failure fails at once, not after ~3 minutes of backoff), and no settings files, so
hooks and permission rules from the directories around the workspace take no part. Not `--bare`: with it,
Claude Code 2.1.328 offers no Write tool, and scenarios that write a file would fail."""


def offline_setup(scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
    """A `MessagesBackend` playing `scenario` (bound, not yet serving: the caller enters it), the options
    above, and the environment pointing Claude Code at it with its home under `state_dir/home`."""
    home = state_dir / "home"
    home.mkdir(parents=True, exist_ok=True)
    backend = MessagesBackend(scenario, cwd=workspace)
    return OfflineSetup(backend=backend, provider_options=dict(OFFLINE_OPTIONS), env=backend.claude_env(home))
