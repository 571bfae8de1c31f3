"""The shipped provider contract, played by the generic `acp` provider on the fake ACP agent.

It knows nothing of the fake: the command is all it is told (`-o command=...`), its capabilities come from the
fake's `initialize` answer. There is no real counterpart: the named providers' contracts run the real agents.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from harness_core.provider import OfflineSetup
from harness_core.scripted.scenarios import Scenario
from harness_core.testing.contract import ProviderContract

from harness_acp.testing import write_fake_agent


class TestGenericAcpContract(ProviderContract):
    provider_name = "acp"
    fake_calls_mcp = False

    def setup_run(self, scenario: Scenario, workspace: Path, state_dir: Path, *, real: bool,
                  fault: str | None = None) -> OfflineSetup | None:
        if fault == "too_old":
            return None  # the generic provider has no minimum version
        bin_dir = state_dir / f"fake-{fault or 'ok'}"
        bin_dir.mkdir(exist_ok=True)
        agent = write_fake_agent(bin_dir, crash=fault == "crash", scenario=scenario.name,
                                 args=("--home", str(state_dir / "agent-home")))
        return OfflineSetup(provider_options={"command": str(agent)})

    def missing_cli_options(self, state_dir: Path) -> dict[str, Any] | None:
        return {"command": f"{state_dir / 'no-such-dir' / 'my-agent'} --acp"}


@pytest.fixture(autouse=True)
def _fake_validates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_ACP_VALIDATE", "1")
