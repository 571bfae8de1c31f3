"""A fake ACP agent for tests, and the ACP JSON Schema checker.

Layer: testing (ships with harness-acp: an app's tests drive an ACP provider with no Node, model or credentials).
`write_fake_agent(tmp_path, name="my-agent", scenario="tools")` writes an executable for `-o command=<it>`
(`fake_agent`, its turn `fake_player`; `traces_seen(home)` its trace context); `schema.WireChecker` checks messages.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from harness_core.testing.fake_cli import write_fake_cli

from harness_acp.testing.fake_agent import FAKE_VERSION, HOME_ENV, VALIDATE_ENV, traces_seen

__all__ = ["FAKE_VERSION", "HOME_ENV", "VALIDATE_ENV", "traces_seen", "write_fake_agent"]


def write_fake_agent(directory: str | os.PathLike[str], *, name: str = "fake-acp-agent", version: str | None = None,
                     crash: bool = False, scenario: str | None = None, args: tuple[str, ...] = ()) -> Path:
    """Write an executable `name` into `directory` that runs the fake ACP agent with this Python (`args` are
    baked in: e.g. `("--modes", "default=ask,yolo=auto")`, `("--no-load",)`); return its path."""
    Path(directory).mkdir(parents=True, exist_ok=True)
    path = write_fake_cli(directory, name, "harness_acp.testing.fake_agent", version=version, crash=crash,
                          scenario=scenario)
    if args:
        text = path.read_text().replace('"$@"', " ".join(shlex.quote(a) for a in args) + ' "$@"')
        path.write_text(text)
    return path
