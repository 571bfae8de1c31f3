"""`FakeAndReal`: a provider's own contract-style tests, each played once on its fake CLI and once (marked
`real_cli`) on the real CLI against the scripted model backend.

Layer: testing (shipped for provider authors, exported by `harness_core.testing.contract`). Knows `ContractBase`
and pytest; knows no concrete provider. Usage: docs/providers.md (turn a real run into a golden test).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import ClassVar

import pytest

from harness_core.provider import OfflineSetup
from harness_core.scripted.scenarios import Scenario
from harness_core.testing.contract._base import ContractBase

__all__ = ["FakeAndReal"]


class FakeAndReal(ContractBase):
    """Each test under asyncio, with `harness_real` False (the fake, through `fake_contract.setup_run`) and True
    (the real CLI; skipped with the way to install it when it is not there)."""

    fake_contract: ClassVar[type[ContractBase]]
    """The provider's contract subclass, whose `setup_run` plays scenarios on the fake CLI."""

    def setup_run(self, scenario: Scenario, workspace: Path, state_dir: Path, *, real: bool,
                  fault: str | None = None) -> OfflineSetup | None:
        if real:
            return super().setup_run(scenario, workspace, state_dir, real=True, fault=fault)
        return self.fake_contract.setup_run(self, scenario, workspace, state_dir, real=False, fault=fault)

    @pytest.fixture
    def anyio_backend(self) -> str:
        return "asyncio"  # the shipped contract plays everything under trio too

    @pytest.fixture(params=["fake", pytest.param("real", marks=pytest.mark.real_cli)])
    def harness_real(self, request: pytest.FixtureRequest) -> bool:
        if request.param == "real":
            cli = self._provider().cls.info.cli_name
            if cli is not None and self.real_cli_path() is None and shutil.which(cli) is None:
                variable = "HARNESS_" + cli.upper().replace("-", "_") + "_BIN"
                pytest.skip(f"real {cli} not installed: run scripts/install-clis.sh or set {variable}"
                            f"{' (now ' + os.environ[variable] + ')' if variable in os.environ else ''}")
        return bool(request.param == "real")
