"""How the real `codex exec` runs offline: against a scripted Responses backend on 127.0.0.1.

Layer: provider configuration. Knows the options this provider takes and what Codex needs to talk to a
custom model provider (`-c` overrides, `--disable` flags, an isolated `CODEX_HOME`, the key variable); the
backend itself lives in `harness_core.testing.backends`. Imported only by `offline_setup`, so a normal run
never loads the testing backends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness_core.provider import OfflineSetup
from harness_core.testing.backends.responses import CODEX_FLAGS, ResponsesBackend
from harness_core.testing.scenarios import Scenario

__all__ = ["PreboundResponsesBackend", "offline_options", "offline_setup"]


class PreboundResponsesBackend(ResponsesBackend):
    """A `ResponsesBackend` whose port is known as soon as it is built, so it can go into the provider
    options before the caller enters it. Where the backend can bind without serving (reading `port` binds),
    it serves only once entered; otherwise it serves from the start and entering it is a no-op."""

    def __init__(self, scenario: Scenario, cwd: Path | None = None) -> None:
        super().__init__(scenario, cwd=cwd)
        self._serving_early = False
        try:
            self.port  # noqa: B018 - binds the port where the backend supports binding before serving
        except RuntimeError:
            super().start()
            self._serving_early = True

    def start(self) -> PreboundResponsesBackend:
        if not self._serving_early:
            super().start()
        elif self.stopped:
            raise RuntimeError("this backend was stopped; build a new one (call offline_setup again)")
        return self


def offline_options(backend: ResponsesBackend, codex_home: Path) -> dict[str, Any]:
    """Provider options pointing codex at a started `backend`, with `codex_home` (created) as CODEX_HOME."""
    codex_home.mkdir(parents=True, exist_ok=True)
    config = dict(value.split("=", 1) for value in backend.codex_config_overrides())
    disable = [CODEX_FLAGS[i + 1] for i, flag in enumerate(CODEX_FLAGS) if flag == "--disable"]
    return {"config": config, "disable": disable, "codex_home": str(codex_home)}


def offline_setup(scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
    backend = PreboundResponsesBackend(scenario, cwd=workspace)
    return OfflineSetup(
        backend=backend, provider_options=offline_options(backend, state_dir / "codex-home"), env=backend.codex_env()
    )
