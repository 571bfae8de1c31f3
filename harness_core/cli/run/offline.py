"""The workspace and scripted backend of `harness run --offline` and `harness chat --offline`, through
`harness_core.offline.offline_workspace` (which does the work); adds only the command line's stderr lines (none
under `-q`).

Layer: CLI, loaded when an offline command runs (after `run.invocation.check_offline_flags`); no concrete provider.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from harness_core import AgentRunSpec, SessionSpec
from harness_core.cli.common import say
from harness_core.offline import offline_workspace as played_offline
from harness_core.plugins import get_host

SpecT = TypeVar("SpecT", AgentRunSpec, SessionSpec)

__all__ = ["offline_workspace"]


@contextmanager
def offline_workspace(spec: SpecT, provider: str | None, scenario: str, *, explicit_cwd: bool, keep: bool,
                      what: str = "run", quiet: bool = False) -> Iterator[SpecT]:
    """`harness_core.offline.offline_workspace` for the command line: a temporary workspace unless `explicit_cwd`
    (removed afterwards unless `keep`), the scenario's files, the backend; what it does is said on stderr (`what`
    names the command's unit; `quiet`, for `-q`: only where a kept workspace is, as `--keep-workspace` asked). A `--cwd`
    directory was checked by `check_offline_flags` (empty, or `--force`)."""

    def tell(workspace: Path, created: list[str]) -> None:
        if quiet:
            return
        if not explicit_cwd:
            then = f"kept after the {what}" if keep else f"removed after the {what}; --keep-workspace keeps it"
            say(f"offline workspace {workspace}", f"({then})")
        if created:
            say(f"created {', '.join(created)}", f"in {workspace}", f"for scenario {scenario!r}")

    with played_offline(spec, provider, scenario, temporary=not explicit_cwd, keep=keep, force=True, host=get_host(),
                        on_ready=tell) as offline_run:
        yield offline_run
    if keep and not explicit_cwd:  # asked for: said even under -q
        say("kept the offline workspace", str(offline_run.cwd))
