"""Offline runs: scenarios and scripted model APIs on 127.0.0.1, so real agent CLIs run whole turns with no
credentials and no network beyond loopback.

Layer: offline (a product feature: `harness run --offline`, `harness demo`; reusable by any third-party
provider and by users' own tests). Knows the provider interface's `offline_setup` and the model APIs' wire
formats; knows no concrete agent. Importing this package starts nothing: a backend serves only between
`start()` and `stop()` (or inside `with`).

- `harness_core.scripted.scenarios`: the scenario vocabulary (`Say`, `RunCommand`, `ReadFile`, ...) and the
  named scenarios every provider plays.
- `harness_core.scripted.backends`: the OpenAI Responses and Anthropic Messages backends, their tool dialects
  (what an agent calls its tools: each provider passes its own), and `ScriptedBackend` to write others.
- here: `offline_workspace` (what `harness run --offline` does: a temporary workspace with the scenario's files,
  the backend started, the spec pointed at both), `offline_spec` (only start a provider's backend and point a spec
  at it), `seed_workspace`, `scenario_named`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness_core._facade import missing_name
from harness_core.offline._setup import (
    DEFAULT_SCENARIO,
    can_run_offline,
    offline_spec,
    scenario_named,
    seed_workspace,
)
from harness_core.offline._workspace import offline_workspace
from harness_core.scripted.scenarios import SCENARIOS, Scenario

__all__ = [
    "DEFAULT_SCENARIO",
    "SCENARIOS",
    "Scenario",
    "can_run_offline",
    "offline_spec",
    "offline_workspace",
    "scenario_named",
    "seed_workspace",
]


if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any name

    def __getattr__(name: str) -> Any:
        """A name this façade does not export: an ImportError saying where it is (`harness_core._facade`)."""
        raise missing_name(__name__, name)
