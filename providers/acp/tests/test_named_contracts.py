"""The shipped provider contract, played by each named ACP provider: on the fake agent by default (offering that
agent's session modes), on the real pinned agent offline with `--harness-real` (the `acp-real` tox env)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from acp_helpers import NamedAgentContract
from harness_core.provider import OfflineSetup
from harness_core.scripted.scenarios import Scenario

from harness_acp.profiles import PROFILES


class TestGeminiContract(NamedAgentContract):
    provider_name = "gemini"
    reports_exit_codes: ClassVar[bool] = PROFILES["gemini"].reports_exit_codes
    reports_command_output: ClassVar[bool] = PROFILES["gemini"].reports_command_output


class TestCodexAcpContract(NamedAgentContract):
    provider_name = "codex-acp"
    offline_options = ("public_env.HARNESS_CONTRACT_NOTE=merged", "args=-c model_reasoning_effort=low")


class TestClaudeAcpContract(NamedAgentContract):
    provider_name = "claude-acp"
    reports_exit_codes: ClassVar[bool] = PROFILES["claude-acp"].reports_exit_codes
    offline_environment: ClassVar[dict[str, str]] = {"CLAUDE_CODE_USE_BEDROCK": "1", "CLAUDE_CODE_USE_VERTEX": "1"}


class TestQwenContract(NamedAgentContract):
    provider_name = "qwen"

    def setup_run(self, scenario: Scenario, workspace: Path, state_dir: Path, *, real: bool,
                  fault: str | None = None) -> OfflineSetup | None:
        if real and scenario.name == "fail_500":
            # Qwen Code 0.24.4 retries a 500 7 times in ~80 s whatever its settings, and reads `retry-after` only for
            # 429 and 503 (docs/qwen.md); the 429 the scripted backend answers with `retry-after-ms` ends in seconds.
            return None
        return super().setup_run(scenario, workspace, state_dir, real=real, fault=fault)
