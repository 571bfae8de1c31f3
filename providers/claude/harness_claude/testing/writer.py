"""`write_fake_claude`: an executable `claude` on disk that runs the fake, and the variables it reads.

Layer: testing (fake CLI). Knows how the fake is started (`python -m harness_claude.testing.fake` with the
interpreter running the tests) and the environment variables every Harness fake CLI reads; knows nothing of
the stream-json protocol. Stdlib only.
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
from pathlib import Path

__all__ = ["CRASH_ENV", "SCENARIO_ENV", "VERSION_ENV", "write_fake_claude"]

SCENARIO_ENV = "HARNESS_FAKE_SCENARIO"
"""The scenario to play when the prompt names none (`SCENARIO:<name>` in the prompt wins); default `say`."""
VERSION_ENV = "HARNESS_FAKE_VERSION"
"""What `claude --version` reports (default: the pinned 2.1.328)."""
CRASH_ENV = "HARNESS_FAKE_CRASH"
"""Non-empty: the fake writes to stderr and exits 3 in the middle of the turn."""


def write_fake_claude(
    directory: str | os.PathLike[str],
    *,
    version: str | None = None,
    crash: bool = False,
    scenario: str | None = None,
) -> Path:
    """Write an executable `claude` into `directory` that runs the fake with this Python; return its path (for
    `-o claude_bin=PATH`).

    `version` is what `--version` reports and `crash=True` makes the fake die mid-turn: both are baked into
    the wrapper (the provider's probe runs `--version` without the run's environment). `scenario` is baked in
    as the default scenario: `$HARNESS_FAKE_SCENARIO` and a `SCENARIO:<name>` prompt still win.
    """
    path = Path(directory) / "claude"
    lines = ["#!/bin/sh"]
    if version is not None:
        lines.append(f"export {VERSION_ENV}={shlex.quote(version)}")
    if crash:
        lines.append(f"export {CRASH_ENV}=1")
    if scenario is not None:
        lines.append(f'export {SCENARIO_ENV}="${{{SCENARIO_ENV}:-{_sh_default(scenario)}}}"')
    lines.append(f'exec {shlex.quote(sys.executable)} -m harness_claude.testing.fake "$@"')
    path.write_text("\n".join(lines) + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _sh_default(value: str) -> str:
    """`value` as the word of a `${VAR:-word}` expansion inside double quotes."""
    if not value or any(c in value for c in '"$`\\}'):
        raise ValueError(f"scenario names are plain words, not {value!r}")
    return value
