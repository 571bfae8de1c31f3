"""The `--mcp-config` file of a run or a live session: the servers' JSON, secrets and all, in a 0600 file in a new
0700 scratch directory, removed when Claude Code is done (a killed Harness's is swept like its other scratch).
Layer: provider (claude), I/O. Not Claude Code's environment: its Bash inherits that, and the agent's commands
would read every server's `env` and `headers` values there.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from harness_core.provider import Scratch, write_private

__all__ = ["mcp_config_file"]


@contextmanager
def mcp_config_file(config: str | None) -> Iterator[str | None]:
    """The path of a private file holding `config` (`ToolConfig.mcp_config`) while in the block, then gone; None
    when there is no config."""
    if config is None:
        yield None
        return
    scratch = Scratch("harness-claude-mcp-")
    try:
        path = scratch.path / "mcp.json"
        write_private(path, config.encode())
        yield str(path)
    finally:
        scratch.release()
