"""Transport layer: a child process in its own session with line-framed stdout and bounded shutdown.

Knows nothing of JSON-RPC or of any specific CLI. Public surface: `ChildProcess`, `LineReader`, and the
/proc helpers `descendants` / `kill_entries` (for providers that must kill a tree they did not spawn here).
"""

from __future__ import annotations

from harness_core.transport.framing import LineReader
from harness_core.transport.process import ChildProcess
from harness_core.transport.proctree import ProcEntry, descendants, kill_entries

__all__ = ["ChildProcess", "LineReader", "ProcEntry", "descendants", "kill_entries"]
