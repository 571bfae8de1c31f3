"""Offline play: mini-agent against Harness's scripted Responses backend on 127.0.0.1.

Layer: offline glue. Knows `harness_core.scripted.backends.ResponsesBackend` and mini-agent's option names;
must not know the agent loop.
"""

from __future__ import annotations

from pathlib import Path

from harness_core.offline import Scenario
from harness_core.provider import OfflineSetup
from harness_core.scripted.backends import ResponsesBackend, ResponsesDialect

from harness_mini_agent.options import MiniAgentOptions

__all__ = ["OFFLINE_KEY", "offline_setup"]

OFFLINE_KEY = "scripted-offline-key"
"""The scripted backend accepts any key; this one goes into the spec's env, never into os.environ."""


def offline_setup(scenario: Scenario, workspace: Path) -> OfflineSetup:
    """The backend and options for `scenario`. Reading `base_url` binds the backend's port, so the options
    can name it before the caller enters the backend (`with setup.backend:` starts serving). Commands run
    with `bash -c`, not a login shell, so a scripted run does not depend on the operator's dotfiles."""
    backend = ResponsesBackend(scenario, cwd=workspace, dialect=ResponsesDialect())
    key_env = MiniAgentOptions.model_fields["api_key_env"].default
    return OfflineSetup(
        backend=backend,
        provider_options={"base_url": backend.base_url, "login_shell": False},
        env={key_env: OFFLINE_KEY},
    )
