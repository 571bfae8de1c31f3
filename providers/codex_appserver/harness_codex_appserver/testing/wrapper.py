"""The writer of the fake `codex` executable: a shell wrapper around `python -m harness_codex_appserver.testing.fake`.

Layer: testing. Knows the fake's environment variables and nothing of the protocol. The interpreter is pinned
(`sys.executable`), so the wrapper runs with any PATH.
"""

from __future__ import annotations

import os
from pathlib import Path

from harness_core.testing.fake_cli import write_fake_cli

__all__ = ["write_fake_codex"]

_MODULE = "harness_codex_appserver.testing.fake"


def write_fake_codex(
    directory: str | os.PathLike[str],
    *,
    version: str | None = None,
    crash: bool = False,
    scenario: str | None = None,
) -> Path:
    """Write an executable `codex` into `directory` that runs the fake app-server; return its path.

    `version` is what `--version` reports (baked in: the provider's probe does not get a run's env);
    `crash=True` makes it die right after the turn's first item starts; `scenario` (a name from
    `harness_core.offline.SCENARIOS`) is the default for `HARNESS_FAKE_SCENARIO`.
    """
    return write_fake_cli(directory, "codex", _MODULE, version=version, crash=crash, scenario=scenario)
