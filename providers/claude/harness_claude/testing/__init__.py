"""A fake `claude` CLI for tests: Claude Code 2.1.328's `claude -p` stream-json, played from a `Scenario`.

Layer: testing (ships with harness-claude, so an application's own tests can drive the provider without Node,
a model or credentials). `write_fake_claude(dir)` writes the executable; the fake is split by concern:
`fake` (the command: argv, scenario choice), `player` (the turn), `control` (stdin/stdout and the control
protocol), `shapes` (the lines, checked against recorded real transcripts), `writer` (the wrapper on disk).

    from harness_claude.testing import write_fake_claude
    claude = write_fake_claude(tmp_path, scenario="tools")      # then -o claude_bin=<claude>
"""

from __future__ import annotations

from harness_claude.testing.shapes import VERSION as FAKE_VERSION
from harness_claude.testing.writer import CRASH_ENV, SCENARIO_ENV, VERSION_ENV, write_fake_claude

__all__ = ["CRASH_ENV", "FAKE_VERSION", "SCENARIO_ENV", "VERSION_ENV", "write_fake_claude"]
