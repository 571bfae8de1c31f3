"""The shipped provider contract (`harness_core.testing.contract`) for codex-exec.

Fake mode plays each scenario on the fake `codex exec` (`harness_codex_exec.testing.fake`);
`--harness-real` plays it on the real pinned codex through the provider's own `offline_setup`, with the
binary from `exec_helpers.real_codex` (a missing binary is a `real_cli` skip, a failure when
HARNESS_REQUIRE_REAL_CLIS=1). The real CLI cannot be made too old or made to crash: those faults skip there.
codex-exec declares no streaming, interrupt or approvals: the contract checks that those are refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from harness_codex_exec.testing import write_fake_codex
from harness_core.offline import Scenario
from harness_core.provider import OfflineSetup
from harness_core.testing.contract import ProviderContract


class TestCodexExecContract(ProviderContract):
    provider_name = "codex-exec"
    offline_options = ("config.model_reasoning_effort=low", "max_reconnects=0")  # merged into the offline config
    offline_hostile_options: ClassVar[tuple[str, ...]] = ('config.mcp_servers.x.url="http://192.0.2.1:9/mcp"',)
    offline_hostile_project: ClassVar[dict[str, str]] = {  # an MCP server at TEST-NET
        ".codex/config.toml": '[mcp_servers.x]\nurl = "http://192.0.2.1:9/mcp"\n'}

    def setup_run(
        self, scenario: Scenario, workspace: Path, state_dir: Path, *, real: bool, fault: str | None = None
    ) -> OfflineSetup | None:
        if real:  # the contract's own: offline_setup, the CLI from $HARNESS_TOOLS_DIR/bin or PATH
            return super().setup_run(scenario, workspace, state_dir, real=True, fault=fault)
        bin_dir = state_dir / "bin"
        bin_dir.mkdir(exist_ok=True)
        codex = write_fake_codex(
            bin_dir, scenario=scenario.name, version="0.1.0" if fault == "too_old" else None, crash=fault == "crash"
        )
        home = state_dir / "codex-home"
        home.mkdir(exist_ok=True)
        return OfflineSetup(provider_options={"codex_bin": str(codex), "codex_home": str(home)})
