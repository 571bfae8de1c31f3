"""A fake `codex exec --json` for tests, shipped with the provider so that users' own tests can use it too.

Layer: testing (imitates the CLI this provider drives; knows nothing of Harness providers or events).
`write_fake_codex(directory, *, version=, crash=, scenario=)` writes an executable `codex` to pass as
`-o codex_bin=PATH`; it runs `python -m harness_codex_exec.testing.fake` (see that module for the environment
it reads). Modules: `wrapper` (the writer), `fake` (the command line and the thread's token totals), `player`
(a scenario played as JSONL lines).
"""

from __future__ import annotations

from harness_codex_exec.testing.wrapper import DEFAULT_VERSION, write_fake_codex

__all__ = ["DEFAULT_VERSION", "write_fake_codex"]
