"""The shipped provider contract, played by the claude provider.

Fake mode (default): the fake `claude` (`harness_claude.testing.fake`) plays each scenario, named by
`$HARNESS_FAKE_CLAUDE_SCENARIO`; faults are a fake reporting an old version and one that crashes mid-turn.
`--harness-real`: the real pinned CLI (`claude_helpers.CLAUDE`) through the provider's own `offline_setup`
against a scripted Messages backend; faults are skipped (a real CLI cannot be made to show them).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from harness_core.provider import OfflineSetup
from harness_core.testing.contract import ProviderContract
from harness_claude.testing.fake import write_fake_claude
from harness_core.offline.scenarios import Scenario

FAULT_ENV = {
    None: {},
    "too_old": {"HARNESS_FAKE_CLAUDE_VERSION": "2.0.1"},
    "crash": {"HARNESS_FAKE_CLAUDE_CRASH": "1"},
}


class TestClaudeContract(ProviderContract):
    provider_name = "claude"

    @pytest.fixture(params=["asyncio", "trio"])
    def anyio_backend(self, request: pytest.FixtureRequest) -> str:
        return str(request.param)

    def setup_run(
        self, scenario: Scenario, workspace: Path, state_dir: Path, *, real: bool, fault: str | None = None
    ) -> OfflineSetup | None:
        if real:  # the contract's own: offline_setup, the CLI from $HARNESS_TOOLS_DIR/bin or PATH
            return super().setup_run(scenario, workspace, state_dir, real=True, fault=fault)
        bin_dir = state_dir / f"fake-{fault or 'ok'}"
        bin_dir.mkdir(exist_ok=True)
        fake = write_fake_claude(bin_dir, env=FAULT_ENV[fault])
        return OfflineSetup(
            provider_options={"claude_bin": str(fake)},
            env={"HARNESS_FAKE_CLAUDE_SCENARIO": scenario.name},
        )
