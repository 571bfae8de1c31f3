"""Offline runs: scenarios and scripted model APIs on 127.0.0.1, so real agent CLIs run whole turns with no
credentials and no network beyond loopback (`harness run --offline`, `harness demo`; any provider's tests).
Layer: offline (a product feature). Knows the provider interface's `offline_setup` and the model APIs' wire
formats; knows no concrete agent. Importing this package starts nothing: a backend serves only between `start()`
and `stop()` (or inside `with`). What is here and in `scripted`: docs/providers.md (offline).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness_core._facade import missing_name
from harness_core.offline._setup import (
    DEFAULT_SCENARIO,
    can_run_offline,
    check_offline,
    offline_spec,
    scenario_named,
    seed_workspace,
    workspace_conflict,
)
from harness_core.offline._workspace import offline_workspace
from harness_core.scripted.scenarios import SCENARIOS, Scenario

__all__ = [
    "DEFAULT_SCENARIO",
    "SCENARIOS",
    "Scenario",
    "can_run_offline",
    "check_offline",
    "offline_spec",
    "offline_workspace",
    "scenario_named",
    "seed_workspace",
    "workspace_conflict",
]


if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any name

    def __getattr__(name: str) -> Any:
        """A name this façade does not export: an ImportError saying where it is (`harness_core._facade`)."""
        raise missing_name(__name__, name)
