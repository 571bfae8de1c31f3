"""Codex offline: the real `codex` against Harness's scripted Responses backend on 127.0.0.1.

Layer: provider support shared by the Codex providers. Knows what Codex needs to talk only to a loopback
Responses API: a `model_providers` entry with retries off (given as `-c` overrides), a model from its bundled
catalogue, two `--disable`d features, the key variable that provider names, and an isolated `CODEX_HOME` and
`HOME`. Codex's tools for that model (`exec_command`, the `apply_patch` custom tool) are the backend's default
tool dialect, so no dialect of its own is needed. The backend itself lives in `harness_core.offline.backends`,
imported only inside `offline_setup`, so importing a Codex provider does not load it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_core.provider import OfflineSetup

if TYPE_CHECKING:
    from harness_core.offline.backends import ResponsesBackend
    from harness_core.offline.scenarios import Scenario

__all__ = [
    "OFFLINE_DISABLE",
    "OFFLINE_KEY_ENV",
    "OFFLINE_MODEL",
    "offline_args",
    "offline_config",
    "offline_env",
    "offline_options",
    "offline_setup",
]

OFFLINE_MODEL = "gpt-5.5"
"""A slug from Codex's bundled model catalogue: only for such a model does Codex offer `exec_command` and
`apply_patch` (an unknown slug gets other tools, which the backend's default dialect does not play)."""
OFFLINE_KEY_ENV = "HARNESS_MOCK_API_KEY"
"""The `env_key` of the loopback model provider: Codex refuses to call it unless this variable is set (the
backend accepts any value)."""
OFFLINE_DISABLE: tuple[str, ...] = ("unbounded_connection_retries", "plugins")
"""Codex features to `--disable` offline: without the first a refused connection is retried forever; the
second silences plugin sync, which has nothing to reach offline."""


def offline_config(backend: ResponsesBackend) -> dict[str, str]:
    """The config overrides (dotted key → TOML value, each passed as `-c KEY=VALUE`) that make Codex use
    `backend` as its only model provider, with no request or stream retries."""
    provider = (
        f'{{name="mock", base_url="{backend.base_url}", wire_api="responses", env_key="{OFFLINE_KEY_ENV}", '
        "request_max_retries=0, stream_max_retries=0}"
    )
    return {"model_provider": '"mock"', "model_providers.mock": provider, "model": f'"{OFFLINE_MODEL}"'}


def offline_args(backend: ResponsesBackend) -> list[str]:
    """`--disable FEATURE` for each of `OFFLINE_DISABLE`, then `-c KEY=VALUE` for each of `offline_config`:
    splice into a `codex exec` or `codex app-server` command line."""
    args: list[str] = []
    for feature in OFFLINE_DISABLE:
        args += ["--disable", feature]
    for key, value in offline_config(backend).items():
        args += ["-c", f"{key}={value}"]
    return args


def offline_env() -> dict[str, str]:
    """The environment Codex needs to call the loopback provider (its key variable; any value is accepted)."""
    return {OFFLINE_KEY_ENV: "scripted-offline-key"}


def offline_options(backend: ResponsesBackend, codex_home: Path) -> dict[str, Any]:
    """Provider options (`CodexCliOptions` fields) pointing codex at `backend`, with `codex_home` (created) as
    CODEX_HOME."""
    codex_home.mkdir(parents=True, exist_ok=True)
    return {"config": offline_config(backend), "disable": list(OFFLINE_DISABLE), "codex_home": str(codex_home)}


def offline_setup(scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
    """The real codex against a `ResponsesBackend` playing `scenario` (bound, not yet serving: the caller
    enters it), with its own CODEX_HOME and HOME under `state_dir`."""
    from harness_core.offline.backends import ResponsesBackend

    backend = ResponsesBackend(scenario, cwd=workspace)  # its url is bound before the caller starts it
    options = offline_options(backend, state_dir / "codex-home")
    env = {**offline_env(), **_isolated_home(state_dir)}
    return OfflineSetup(backend=backend, provider_options=options, env=env)


def _isolated_home(state_dir: Path) -> dict[str, str]:
    """Codex runs every command as `bash -lc`: with the user's HOME, each command sources their dotfiles
    (slow, noisy, and not reproducible). Offline and test runs get an empty home of their own."""
    home = state_dir / "home"
    home.mkdir(parents=True, exist_ok=True)
    return {"HOME": str(home)}
