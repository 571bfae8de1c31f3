"""Test-only plugin: the scripted provider with an offline setup (`scripted-offline`), so `--offline` commands
(`harness batch --offline` among them) can be tried end to end in a subprocess with no agent CLI. Its scripted
backend is served and unused: the provider plays the scenario itself, given as its option in the inline form
(which carries every scenario, named or written inline)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from harness_core.capabilities import Capability, ProviderInfo
from harness_core.provider import OfflineSetup, Provider, hookimpl
from harness_core.scripted.inline import scenario_to_json
from harness_core.scripted.scenarios import Scenario
from harness_core.testing.scripted import ScriptedProvider

__all__ = ["OfflineScriptedProvider", "harness_register_providers"]


class OfflineScriptedProvider(ScriptedProvider):
    info: ClassVar[ProviderInfo] = ProviderInfo(name="scripted-offline", version="1.0",
                                                capabilities=frozenset(Capability))

    def offline_setup(self, scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
        # Only an offline run pays for the scripted backends (~25 ms of CPU, measured), not every `harness` process
        # the tests start, which loads this plugin: as LAZY_ALLOWED lets the providers' offline modules do.
        from harness_core.scripted.backends import MessagesBackend

        return OfflineSetup(backend=MessagesBackend(scenario, cwd=workspace),
                            provider_options={"scenario": scenario_to_json(scenario)})


@hookimpl
def harness_register_providers(register: Callable[[type[Provider[Any]]], None]) -> None:
    register(OfflineScriptedProvider)
