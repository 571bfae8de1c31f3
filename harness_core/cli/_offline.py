"""The workspace and scripted backend of `harness run --offline` and `harness chat --offline`.

Layer: CLI (imported only when an offline command runs, after `_run.check_offline_flags` checked everything). Knows
`harness_core.offline` (`offline_spec`, which makes the backend answer every turn of a session); knows no concrete
provider.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import click

from harness_core import AgentRunSpec, SessionSpec
from harness_core.cli._spec_flags import offline_marked
from harness_core.offline import offline_spec, scenario_named, seed_workspace
from harness_core.plugins import get_host

SpecT = TypeVar("SpecT", AgentRunSpec, SessionSpec)

__all__ = ["offline_workspace"]


@contextmanager
def offline_workspace(spec: SpecT, provider: str | None, scenario: str, *, explicit_cwd: bool, keep: bool,
                      what: str = "run") -> Iterator[SpecT]:
    """Create the workspace (a temporary one unless `explicit_cwd`) and the scenario's files, start the
    provider's scripted backend and yield `spec` pointed at both; afterwards a temporary workspace is removed
    unless `keep`. For a `SessionSpec` the backend plays the scenario again for each new prompt (each turn of a
    chat gets its answer: `offline_spec`). What it does is said on stderr (`what` names the command's unit)."""
    host = get_host()
    played = scenario_named(scenario)
    if explicit_cwd:
        workspace = spec.cwd
    else:
        workspace = Path(tempfile.mkdtemp(prefix="harness-offline-ws-"))
        spec = spec.model_copy(update={"cwd": workspace})
        then = f"kept after the {what}" if keep else f"removed after the {what}; --keep-workspace keeps it"
        click.echo(f"harness: offline workspace {workspace} ({then})", err=True)
    try:
        created = seed_workspace(played, workspace)
        if created:
            click.echo(f"harness: created {', '.join(created)} in {workspace} for scenario {scenario!r}", err=True)
        with offline_spec(offline_marked(spec), provider, played, host=host) as offline_run:
            yield offline_run
    finally:
        if not explicit_cwd and not keep:
            shutil.rmtree(workspace, ignore_errors=True)
    if keep:
        click.echo(f"harness: kept the offline workspace {workspace}", err=True)
