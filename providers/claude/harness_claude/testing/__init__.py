"""A fake `claude` CLI for tests: Claude Code 2.1.328's `claude -p` stream-json, played from a `Scenario`.

Layer: testing (ships with harness-claude, so an application's own tests can drive the provider without Node,
a model or credentials). `write_fake_claude(tmp_path, scenario="tools")` writes the executable (then
`-o claude_bin=<it>`). Modules: `fake`, `player`, `control`, `shapes`, `writer` (providers/claude/README.md).
"""

from __future__ import annotations

from harness_claude.testing.shapes import VERSION as FAKE_VERSION
from harness_claude.testing.writer import CRASH_ENV, SCENARIO_ENV, VERSION_ENV, write_fake_claude

__all__ = ["CRASH_ENV", "FAKE_VERSION", "SCENARIO_ENV", "VERSION_ENV", "write_fake_claude"]
