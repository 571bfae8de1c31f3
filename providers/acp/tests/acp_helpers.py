"""Shared by the ACP providers' tests: the contract played by a named provider, on the fake agent (made to offer
that agent's session modes) or, with `--harness-real`, on the real pinned agent through its `offline_setup`."""

from __future__ import annotations

from pathlib import Path

from harness_core.provider import OfflineSetup
from harness_core.scripted.scenarios import Scenario
from harness_core.testing.contract import ProviderContract

from harness_acp.profiles import PROFILES
from harness_acp.testing import write_fake_agent

FAKE_BEHAVIOUR = {  # what each named agent's modes do, for the fake to imitate (see docs/*.md)
    "gemini": "default=ask,autoEdit=auto,yolo=auto,plan=read-only",
    "codex-acp": "read-only=ask-edits,auto=auto,full-access=auto",
    "claude-acp": "default=ask-edits,acceptEdits=auto,plan=read-only,dontAsk=auto,bypassPermissions=auto",
    "qwen": "default=ask,auto-edit=auto,yolo=auto,plan=read-only",
}


NO_VERSION_FLAG = frozenset({"codex-acp", "claude-acp"})
"""Agents without a `--version` (their version is read from their npm package): a too-old one is tested on the
fake agent only."""


def below(version: str) -> str:
    major, _, rest = version.partition(".")
    return "0.0.1" if major == "0" else f"{int(major) - 1}.{rest}"


class NamedAgentContract(ProviderContract):
    """`provider_name` names a profile; the fake agent stands in for it unless the run is real."""

    offline_options: tuple[str, ...] = ("public_env.HARNESS_CONTRACT_NOTE=merged",)
    """One key of the `public_env` table the offline setup fills (where the agent's base URL is): merged, never
    replacing it."""

    def setup_run(self, scenario: Scenario, workspace: Path, state_dir: Path, *, real: bool,
                  fault: str | None = None) -> OfflineSetup | None:
        if real:
            if fault == "too_old" and PROFILES[self.provider_name].name in NO_VERSION_FLAG:
                return None  # the fault wrapper needs the real CLI's --version
            return super().setup_run(scenario, workspace, state_dir, real=True, fault=fault)
        profile = PROFILES[self.provider_name]
        bin_dir = state_dir / f"fake-{fault or 'ok'}"
        bin_dir.mkdir(exist_ok=True)
        agent = write_fake_agent(
            bin_dir, name=profile.cli, crash=fault == "crash", scenario=scenario.name,
            version=below(profile.min_version) if fault == "too_old" else profile.tested_version,
            args=("--modes", FAKE_BEHAVIOUR[self.provider_name], "--home", str(state_dir / "agent-home"),
                  *(() if profile.reports_exit_codes else ("--no-exit-codes",)),
                  *(() if profile.reports_command_output else ("--no-command-output",))))
        return OfflineSetup(provider_options={f"{profile.cli}_bin": str(agent)})
