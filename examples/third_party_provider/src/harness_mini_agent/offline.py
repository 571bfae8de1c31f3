"""Offline play: mini-agent against Harness's scripted Responses backend on 127.0.0.1.

Layer: testing glue. Knows `harness_core.offline.backends.ResponsesBackend` and mini-agent's option names;
must not know the agent loop. Used by `harness run --offline`, `harness demo` and the contract suite.
"""

from __future__ import annotations

from pathlib import Path

from harness_core.provider import OfflineSetup
from harness_core.offline.backends import ResponsesBackend
from harness_core.offline.scenarios import Scenario

from harness_mini_agent.options import MiniAgentOptions

__all__ = ["OFFLINE_KEY", "PreboundResponsesBackend", "offline_setup"]

OFFLINE_KEY = "harness-offline"
"""The scripted backend accepts any key; this one goes into the spec's env, never into os.environ."""


class PreboundResponsesBackend(ResponsesBackend):
    """A `ResponsesBackend` that binds its port when built, so its `base_url` can go into the provider
    options before the caller enters it; `start()` (what `with backend:` calls) is then a no-op."""

    def __init__(self, scenario: Scenario, cwd: Path) -> None:
        super().__init__(scenario, cwd=cwd)
        super().start()

    def start(self) -> PreboundResponsesBackend:
        return self


def offline_setup(scenario: Scenario, workspace: Path) -> OfflineSetup:
    """The backend and options for `scenario`. Commands run with `bash -c`, not a login shell, so a scripted
    run does not depend on the operator's dotfiles."""
    backend = PreboundResponsesBackend(scenario, cwd=workspace)
    key_env = MiniAgentOptions.model_fields["api_key_env"].default
    return OfflineSetup(
        backend=backend,
        provider_options={"base_url": backend.base_url, "login_shell": False},
        env={key_env: OFFLINE_KEY},
    )
