"""An offline run's workspace: a temporary directory (or the spec's own), the scenario's files, the backend.

Layer: offline (public as `harness_core.offline.offline_workspace`; `harness run --offline` and `harness chat
--offline` play through it). Knows `prepared_offline`, `check_offline` and the scenario vocabulary; knows no concrete
provider, and prints nothing (a caller that reports progress passes `on_ready`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from harness_core.errors import InvalidSpecError
from harness_core.files.scratch import Scratch
from harness_core.offline._setup import (
    DEFAULT_SCENARIO,
    SpecT,
    check_offline,
    prepared_offline,
    seed_workspace,
    workspace_conflict,
)
from harness_core.plugins import PluginHost, get_host
from harness_core.scripted.scenarios import Scenario

__all__ = ["offline_workspace"]

_PREFIX = "harness-offline-ws-"


@contextmanager
def offline_workspace(
    spec: SpecT,
    provider: str | None = None,
    scenario: Scenario | str = DEFAULT_SCENARIO,
    *,
    temporary: bool | None = None,
    keep: bool = False,
    force: bool = False,
    host: PluginHost | None = None,
    on_ready: Callable[[Path, list[str]], None] | None = None,
) -> Iterator[SpecT]:
    """Play `scenario` offline, as `harness run --offline` does: yield `spec` pointed at `provider`'s scripted
    model backend, in a workspace holding the scenario's files; run it with the same provider inside the block::

        with offline_workspace(AgentRunSpec(prompt="try it"), "my-agent", "tools") as spec:
            result = run_sync(spec, "my-agent")  # or `await run(...)`, `open_run(...)`, `open_session(...)`

    The workspace is a new temporary directory, removed when the block ends (unless `keep`), when `temporary` is
    True, or when it is None and the spec was made without a `cwd`. Otherwise it is the spec's `cwd` (made if
    missing, and kept), which must be empty unless `force`: the scenario creates and changes files there. The
    yielded spec's `cwd` is the workspace. A `SessionSpec` (for `open_session`) gets its answer on every turn.
    `on_ready(workspace, created)` is called once the scenario's files are there (`created`: those it wrote),
    before the backend starts.

    Raises (before anything is created):
        InvalidSpecError: no such scenario; the provider cannot run offline or its options do not validate; an
            option or variable of the spec would take the agent off its backend; the spec's `cwd` is not empty
            (without `force`).
        ProviderNotFoundError: no such provider.
        UnsupportedFeatureError: the spec needs a capability the provider does not declare.
    """
    host = host or get_host()
    played = check_offline(spec, provider, scenario, host=host, pins=False)  # prepared_offline refuses those first
    if temporary is None:
        temporary = "cwd" not in spec.model_fields_set
    if not temporary and not force:
        conflict = workspace_conflict(played, spec.cwd)
        if conflict is not None:
            raise InvalidSpecError(f"{conflict}. Use an empty or new directory as the spec's cwd, leave cwd out for "
                                   "a temporary workspace, or pass force=True to play it there anyway")
    scratch = Scratch(_PREFIX) if temporary else None  # a killed Harness's is swept later (`harness runs prune`)
    if scratch is not None:
        spec = spec.model_copy(update={"cwd": scratch.path})
    workspace = spec.cwd
    try:
        with prepared_offline(spec, provider, played, host=host) as (backend, offline_run):
            workspace.mkdir(parents=True, exist_ok=True)
            created = seed_workspace(played, workspace)
            if on_ready is not None:
                on_ready(workspace, created)
            with backend:
                yield offline_run
    finally:
        if scratch is not None:
            scratch.release(keep=keep)
