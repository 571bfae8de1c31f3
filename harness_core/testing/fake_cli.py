"""The one fake-CLI convention, written once: an executable wrapper that runs a provider's fake with this Python.

Layer: testing (for the fake CLIs that provider distributions ship in their `testing/` subpackage). Knows the
environment variables every Harness fake reads and how to bake them into a `/bin/sh` wrapper; knows nothing of
any CLI or protocol. Stdlib only. Usage (`write_fake_<cli>`): docs/providers.md (fake CLIs).
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
from pathlib import Path

__all__ = ["CRASH_ENV", "SCENARIO_ENV", "VERSION_ENV", "write_fake_cli"]

SCENARIO_ENV = "HARNESS_FAKE_SCENARIO"
"""The scenario a fake plays (a name from `harness_core.offline.SCENARIOS`) when the run names none."""
VERSION_ENV = "HARNESS_FAKE_VERSION"
"""What the fake's `--version` reports."""
CRASH_ENV = "HARNESS_FAKE_CRASH"
"""Non-empty: the fake dies in the middle of the turn."""


def write_fake_cli(
    directory: str | os.PathLike[str],
    name: str,
    module: str,
    *,
    version: str | None = None,
    crash: bool = False,
    scenario: str | None = None,
) -> Path:
    """Write an executable `name` into `directory` running `python -m module` with this interpreter; return its
    path (for `-o <cli>_bin=PATH`). `version` and `crash=True` are baked in (a provider's probe runs
    `--version` without the run's environment); `scenario` is baked in as the default only: the run's
    `$HARNESS_FAKE_SCENARIO` still wins.

    Raises:
        ValueError: `scenario` is not a plain word.
    """
    path = Path(directory) / name
    lines = ["#!/bin/sh"]
    if version is not None:
        lines.append(f"export {VERSION_ENV}={shlex.quote(version)}")
    if crash:
        lines.append(f"export {CRASH_ENV}=1")
    if scenario is not None:
        lines.append(f'export {SCENARIO_ENV}="${{{SCENARIO_ENV}:-{_sh_default(scenario)}}}"')
    lines.append(f'exec {shlex.quote(sys.executable)} -m {module} "$@"')
    path.write_text("\n".join(lines) + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _sh_default(value: str) -> str:
    """`value` as the word of a `${VAR:-word}` expansion inside double quotes."""
    if not value or any(c in value for c in '"$`\\}'):
        raise ValueError(f"scenario names are plain words, not {value!r}")
    return value
