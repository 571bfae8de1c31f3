"""Transport layer: a child process in its own session with line-framed stdout and bounded shutdown.

Knows nothing of JSON-RPC or of any specific CLI. Public surface: `ChildProcess`, `LineReader`.
"""

from __future__ import annotations

from harness_core.transport.framing import LineReader
from harness_core.transport.process import ChildProcess

__all__ = ["ChildProcess", "LineReader"]
