"""The named ACP agents in an untrusted project (`spec.trust_project` False): Gemini CLI gets its untrusted-folder
switch, Qwen Code system settings with folder trust on (the machine's own carried over) and an empty trusted-folders
file, claude-acp `settingSources: ["user"]`; Gemini CLI's and Qwen Code's refused `yolo` mode becomes their asking
mode. A trusted project gets none of it. What the real agents then load is `test_acp_project_trust_real.py`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness_core import AgentRunSpec
from harness_core.offline import offline_spec
from harness_core.plugins import PluginHost

from harness_acp.profiles import PROFILES


def _env(host: PluginHost, agent: str, spec: AgentRunSpec) -> dict[str, str]:
    provider = host.get(agent).cls()
    return provider.child_env(provider.parse_options({}), spec)


def test_gemini_treats_an_untrusted_project_as_untrusted(host: PluginHost, tmp_path: Path) -> None:
    assert _env(host, "gemini", AgentRunSpec(prompt="x", cwd=tmp_path))["GEMINI_CLI_TRUST_WORKSPACE"] == "false"
    trusted = AgentRunSpec(prompt="x", cwd=tmp_path, trust_project=True, env={"GEMINI_CLI_TRUST_WORKSPACE": "true"})
    assert _env(host, "gemini", trusted)["GEMINI_CLI_TRUST_WORKSPACE"] == "true"  # as given: its own decision


def test_qwen_turns_folder_trust_on_over_the_machines_system_settings(host: PluginHost, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    system = tmp_path / "etc" / "settings.json"
    system.parent.mkdir()
    system.write_text(json.dumps({"privacy": {"usageStatisticsEnabled": False},
                                  "security": {"folderTrust": {"enabled": False}}}))
    spec = AgentRunSpec(prompt="x", cwd=tmp_path, env={"QWEN_CODE_SYSTEM_SETTINGS_PATH": str(system)})
    env = _env(host, "qwen", spec)
    written = json.loads(Path(env["QWEN_CODE_SYSTEM_SETTINGS_PATH"]).read_text())
    assert written == {"privacy": {"usageStatisticsEnabled": False}, "security": {"folderTrust": {"enabled": True}}}
    assert json.loads(Path(env["QWEN_CODE_TRUSTED_FOLDERS_PATH"]).read_text()) == {}
    assert env["QWEN_CODE_SYSTEM_DEFAULTS_PATH"] == str(system.parent / "system-defaults.json")
    assert Path(env["QWEN_CODE_SYSTEM_SETTINGS_PATH"]).is_relative_to(tmp_path / "cache" / "harness" / "untrusted")
    assert (Path(env["QWEN_CODE_SYSTEM_SETTINGS_PATH"]).stat().st_mode & 0o777) == 0o600
    trusted = _env(host, "qwen", spec.model_copy(update={"trust_project": True}))
    assert trusted["QWEN_CODE_SYSTEM_SETTINGS_PATH"] == str(system) and "QWEN_CODE_TRUSTED_FOLDERS_PATH" not in trusted


def test_claude_acp_loads_only_the_users_settings_in_an_untrusted_project(tmp_path: Path) -> None:
    meta = PROFILES["claude-acp"].session_meta
    assert meta is not None
    untrusted = meta(AgentRunSpec(prompt="x", cwd=tmp_path))
    assert untrusted["claudeCode"]["options"]["settingSources"] == ["user"]
    assert "settingSources" not in meta(AgentRunSpec(prompt="x", cwd=tmp_path, trust_project=True)).get(
        "claudeCode", {}).get("options", {})


def test_claude_acp_offline_loads_no_settings_at_all(host: PluginHost, tmp_path: Path) -> None:
    """Offline, not even the project's local settings (whose `env.ANTHROPIC_BASE_URL` sent a trusted project's
    offline prompt to another host): no setting sources, as the native claude provider's offline setup pins."""
    meta = PROFILES["claude-acp"].session_meta
    assert meta is not None
    with offline_spec(AgentRunSpec(prompt="x", cwd=tmp_path, trust_project=True), "claude-acp", "say",
                      host=host) as spec:
        assert meta(spec)["claudeCode"]["options"]["settingSources"] == []


@pytest.mark.parametrize("agent", ["gemini", "qwen"])
def test_yolo_becomes_the_asking_mode_in_an_untrusted_project(agent: str) -> None:
    profile = PROFILES[agent]
    assert profile.modes[("danger-full-access", "never")] == "yolo"
    assert profile.untrusted_modes[("danger-full-access", "never")] == "default"


@pytest.mark.parametrize(("agent", "declared"), [
    ("gemini", ".gemini/settings.json"), ("qwen", ".qwen/settings.json"), ("claude-acp", ".mcp.json")])
def test_the_project_files_each_agent_keeps_out_are_declared(host: PluginHost, agent: str, declared: str) -> None:
    assert declared in host.get(agent).cls.info.project_config
    assert host.get("codex-acp").cls.info.project_config == ()  # Codex's own trust decides


def test_qwens_untrusted_copy_of_the_system_settings_holds_no_env_value(host: PluginHost, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's Qwen system settings may hold API keys in `env`: the copy Harness writes (to turn folder trust
    on) leaves them out, and the agent gets them in its environment instead (unless it has the variable already)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    system = tmp_path / "etc" / "settings.json"
    system.parent.mkdir()
    system.write_text(json.dumps({"env": {"OPENAI_API_KEY": "sk-system-0123456789", "QWEN_NOTE": "from-etc"},
                                  "model": {"name": "m"}}))
    spec = AgentRunSpec(prompt="x", cwd=tmp_path, env={"QWEN_CODE_SYSTEM_SETTINGS_PATH": str(system),
                                                       "QWEN_NOTE": "mine"})
    env = _env(host, "qwen", spec)
    written = Path(env["QWEN_CODE_SYSTEM_SETTINGS_PATH"]).read_text()
    assert "sk-system-0123456789" not in written and '"env"' not in written and '"name": "m"' in written
    assert env["OPENAI_API_KEY"] == "sk-system-0123456789" and env["QWEN_NOTE"] == "mine"
