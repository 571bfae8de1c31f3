"""The writer of the fake `codex` executable: a shell wrapper around `python -m harness_codex_appserver.testing.fake`.

Layer: testing. Knows the fake's environment variables and nothing of the protocol. The interpreter is pinned
(`sys.executable`), so the wrapper runs with any PATH.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

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
    path = Path(directory) / "codex"
    lines = ["#!/bin/sh"]
    if version is not None:
        lines.append(f"HARNESS_FAKE_VERSION={shlex.quote(version)}; export HARNESS_FAKE_VERSION")
    if crash:
        lines.append("HARNESS_FAKE_CRASH=1; export HARNESS_FAKE_CRASH")
    if scenario is not None:
        lines.append(f': "${{HARNESS_FAKE_SCENARIO:={shlex.quote(scenario)}}}"; export HARNESS_FAKE_SCENARIO')
    lines.append(f'exec {shlex.quote(sys.executable)} -m {_MODULE} "$@"')
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o755)
    return path
