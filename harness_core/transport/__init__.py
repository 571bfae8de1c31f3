"""Transport layer: a child process in its own session with line-framed stdout and bounded shutdown.

Knows nothing of JSON-RPC or of any specific CLI. Providers get `ChildProcess` from `harness_core.provider`
(and spawn the agent with `ctx.spawn`); `LineReader` and the /proc helpers `descendants` / `kill_entries`
are the transport's own, used by the core and by tests.
"""

from __future__ import annotations

from harness_core.transport.framing import LineReader
from harness_core.transport.process import ChildProcess
from harness_core.transport.proctree import ProcEntry, descendants, kill_entries

__all__ = ["ChildProcess", "LineReader", "ProcEntry", "descendants", "kill_entries"]
