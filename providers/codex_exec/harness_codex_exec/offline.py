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

__all__ = ["offline_options", "offline_setup"]


def offline_options(backend: ResponsesBackend, codex_home: Path) -> dict[str, Any]:
    """Provider options pointing codex at `backend`, with `codex_home` (created) as CODEX_HOME."""
    codex_home.mkdir(parents=True, exist_ok=True)
    config = dict(value.split("=", 1) for value in backend.codex_config_overrides())
    disable = [CODEX_FLAGS[i + 1] for i, flag in enumerate(CODEX_FLAGS) if flag == "--disable"]
    return {"config": config, "disable": disable, "codex_home": str(codex_home)}


def offline_setup(scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
    backend = ResponsesBackend(scenario, cwd=workspace)  # its url is bound before the caller starts it
    options = offline_options(backend, state_dir / "codex-home")
    env = {**backend.codex_env(), **_isolated_home(state_dir)}
    return OfflineSetup(backend=backend, provider_options=options, env=env)


def _isolated_home(state_dir: Path) -> dict[str, str]:
    """Codex runs every command as `bash -lc`: with the user's HOME, each command sources their dotfiles
    (slow, noisy, and not reproducible). Offline and test runs get an empty home of their own."""
    home = state_dir / "home"
    home.mkdir(parents=True, exist_ok=True)
    return {"HOME": str(home)}
