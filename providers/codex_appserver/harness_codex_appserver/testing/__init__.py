"""A fake `codex app-server` for tests, shipped with the provider so that users' own tests can use it too.

Layer: testing (imitates the CLI this provider drives; knows nothing of Harness providers or events).
`write_fake_codex(directory, *, version=, crash=, scenario=)` writes a `codex` for `-o codex_bin=PATH`; `steps_env`,
`turns_asked`, `traces_seen`, the modules (`wrapper`, `fake`, `server`, `player`, `shapes`): its README.md.
"""

from __future__ import annotations

from harness_codex_appserver.testing.fake import steps_env
from harness_codex_appserver.testing.server import traces_seen, turns_asked
from harness_codex_appserver.testing.shapes import FAKE_VERSION
from harness_codex_appserver.testing.wrapper import write_fake_codex

__all__ = ["FAKE_VERSION", "steps_env", "traces_seen", "turns_asked", "write_fake_codex"]
