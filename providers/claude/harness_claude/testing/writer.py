"""`write_fake_claude`: an executable `claude` on disk that runs the fake, and the variables it reads.

Layer: testing (fake CLI). Knows how the fake is started (`python -m harness_claude.testing.fake` with the
interpreter running the tests) and the environment variables every Harness fake CLI reads; knows nothing of
the stream-json protocol. Stdlib only.
"""

from __future__ import annotations

import os
from pathlib import Path

from harness_core.testing.fake_cli import CRASH_ENV, SCENARIO_ENV, VERSION_ENV, write_fake_cli

__all__ = ["CRASH_ENV", "SCENARIO_ENV", "VERSION_ENV", "write_fake_claude"]



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
    return write_fake_cli(
        directory, "claude", "harness_claude.testing.fake", version=version, crash=crash, scenario=scenario
    )

