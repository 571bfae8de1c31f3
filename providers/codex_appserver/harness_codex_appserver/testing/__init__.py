"""A fake `codex app-server` for tests, shipped with the provider so that users' own tests can use it too.

Layer: testing (imitates the CLI this provider drives; knows nothing of Harness providers or events).
`write_fake_codex(directory, *, version=, crash=, scenario=)` writes an executable `codex` to pass as
`-o codex_bin=PATH`; it runs `python -m harness_codex_appserver.testing.fake` (see that module for the
environment it reads). `steps_env(scenario)` makes it play any scenario's steps (put it in the spec's `env`);
`turns_asked(codex_home)` says what each `turn/start` and steer of its sessions asked for. Modules: `wrapper`
(the writer), `fake` (the command line), `server` (the JSON-RPC protocol), `player` (a scenario played as one
turn), `shapes` (the message shapes).
"""

from __future__ import annotations

from harness_codex_appserver.testing.fake import steps_env
from harness_codex_appserver.testing.server import turns_asked
from harness_codex_appserver.testing.shapes import FAKE_VERSION
from harness_codex_appserver.testing.wrapper import write_fake_codex

__all__ = ["FAKE_VERSION", "steps_env", "turns_asked", "write_fake_codex"]
