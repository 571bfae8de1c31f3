"""The codex CLI's own temporary directory: a private 0700 scratch directory named by `TMPDIR` for the CLI's life.
With bubblewrap on the host, codex's sandbox mounts a fresh directory over its `TMPDIR`, hiding a workspace made
under the inherited one (its edits failed). A `TMPDIR` the spec gives wins.
Layer: provider support. Knows the façade's `Scratch` and `RunContext.spawn`; knows nothing of either protocol.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from harness_core.provider import ChildProcess, RunContext, Scratch, SessionContext

__all__ = ["AGENT_TMP_PREFIX", "spawn_with_private_tmpdir"]

AGENT_TMP_PREFIX = "harness-agent-tmp-"
"""The scratch directory's name prefix (as the ACP agents' private `TMPDIR`)."""


@asynccontextmanager
async def spawn_with_private_tmpdir(ctx: RunContext | SessionContext, argv: Sequence[str], *, env: Mapping[str, str],
                                    spec_env: Mapping[str, str], cwd: str | Path | None,
                                    **options: Any) -> AsyncIterator[ChildProcess]:
    """`ctx.spawn(argv, env=env, ...)` with `TMPDIR` naming a private scratch directory while the child lives
    (unless `spec_env` names its own `TMPDIR`)."""
    if "TMPDIR" in spec_env:
        async with ctx.spawn(argv, env=env, cwd=cwd, **options) as child:
            yield child
        return
    with Scratch(AGENT_TMP_PREFIX) as tmpdir:
        async with ctx.spawn(argv, env={**env, "TMPDIR": str(tmpdir)}, cwd=cwd, **options) as child:
            yield child
