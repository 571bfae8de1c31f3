"""A fake `codex exec --json` for tests, shipped with the provider so that users' own tests can use it too.

Layer: testing (imitates the CLI this provider drives; knows nothing of Harness providers or events).
`write_fake_codex(directory, *, version=, crash=, scenario=)` writes an executable `codex` for `-o codex_bin=PATH`.
Modules: `wrapper` (the writer), `fake` (command line, token totals), `player` (a scenario as JSONL lines).
"""

from __future__ import annotations

from harness_codex_exec.testing.wrapper import DEFAULT_VERSION, write_fake_codex

__all__ = ["DEFAULT_VERSION", "write_fake_codex"]
