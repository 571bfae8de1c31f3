"""`--offline` with the ACP agents stays on the scripted backends whatever it is given: `-o public_env.*` merges
into the offline environment (it once replaced it, base URL and all), and what decides where the agent connects —
a pinned variable, in the spec's env or in `-o public_env`, an agent flag in `-o args`, a codex-acp `-c` key — is
refused, naming it. A model name is one launch argument (`--model=NAME`), so one that starts with `--` is no flag.
No agent runs here (the contract's `test_offline_run_connects_only_to_its_backend` runs the real ones in a
loopback-only namespace)."""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from harness_core import AgentRunSpec, InvalidSpecError
from harness_core.offline import offline_spec
from harness_core.plugins import PluginHost
from harness_core.provider import CliInfo

BASE_URL = {"gemini": "GOOGLE_GEMINI_BASE_URL", "qwen": "OPENAI_BASE_URL", "claude-acp": "ANTHROPIC_BASE_URL"}


@pytest.mark.parametrize("agent", sorted(BASE_URL))
def test_one_public_env_key_joins_the_offline_environment(host: PluginHost, tmp_path: Path, agent: str) -> None:
    spec = AgentRunSpec(prompt="x", cwd=tmp_path, provider_options={"public_env": {"MY_NOTE": "kept"}})
    with offline_spec(spec, agent, "say", host=host) as merged:
        public = merged.provider_options["public_env"]
        assert public["MY_NOTE"] == "kept" and public[BASE_URL[agent]].startswith("http://127.0.0.1:")


def test_codex_acp_takes_config_overrides_after_the_offline_ones(host: PluginHost, tmp_path: Path) -> None:
    spec = AgentRunSpec(prompt="x", cwd=tmp_path, provider_options={"args": "-c model_reasoning_effort=low"})
    with offline_spec(spec, "codex-acp", "say", host=host) as merged:
        args = merged.provider_options["args"]
        assert args[-2:] == ["-c", "model_reasoning_effort=low"] and 'model_provider="mock"' in args
        assert any(a.startswith("model_providers.mock=") and "127.0.0.1" in a for a in args)


@pytest.mark.parametrize(("agent", "options", "env", "said"), [
    ("gemini", {"public_env": {"GOOGLE_GEMINI_BASE_URL": "http://192.0.2.1"}}, {},
     "option public_env.GOOGLE_GEMINI_BASE_URL is not taken"),
    ("gemini", {}, {"GOOGLE_GEMINI_BASE_URL": "http://192.0.2.1"}, "variable GOOGLE_GEMINI_BASE_URL is not taken"),
    ("gemini", {}, {"GEMINI_CLI_SYSTEM_SETTINGS_PATH": "/tmp/s.json"}, "GEMINI_CLI_SYSTEM_SETTINGS_PATH is not taken"),
    ("gemini", {"args": "--proxy=http://192.0.2.1:3128"}, {}, "option args is not taken: gemini's own flags"),
    ("qwen", {}, {"OPENAI_BASE_URL": "http://192.0.2.1/v1"}, "variable OPENAI_BASE_URL is not taken"),
    ("qwen", {"args": "--openai-base-url http://192.0.2.1/v1"}, {}, "option args is not taken: qwen's own flags"),
    ("qwen", {}, {"QWEN_HOME": "/home/someone/.qwen"}, "variable QWEN_HOME is not taken"),
    ("claude-acp", {"public_env": {"ANTHROPIC_BASE_URL": "http://192.0.2.1"}}, {},
     "option public_env.ANTHROPIC_BASE_URL is not taken"),
    ("claude-acp", {}, {"CLAUDE_CODE_USE_BEDROCK": "1"}, "variable CLAUDE_CODE_USE_BEDROCK is not taken"),
    ("claude-acp", {"args": "--debug"}, {}, "option args is not taken: claude-agent-acp's own flags"),
    ("codex-acp", {"args": "-c model_provider=openai"}, {}, "option args (-c model_provider=...) is not taken"),
    ("codex-acp", {"args": ["--config", "model_providers.mock.base_url=http://192.0.2.1/v1"]}, {},
     "model_providers defines where a model API is"),
    ("codex-acp", {"args": "-cprofile=work"}, {}, "profile selects a config profile"),
    ("codex-acp", {"args": "--help"}, {}, "codex-acp's arguments may only be `-c KEY=VALUE`"),
    ("codex-acp", {"args": ["-c", 'mcp_servers.x.url="https://192.0.2.1/mcp"']}, {},
     "option args (-c mcp_servers.x.url=...) is not taken: offline, Codex takes only config keys that cannot reach"),
    ("codex-acp", {"args": ["-c", 'notify=["curl", "https://192.0.2.1"]']}, {}, "(-c notify=...) is not taken"),
    ("codex-acp", {"args": ["-c", '"mcp_servers".x.command="sh"']}, {}, 'is not taken: offline, Codex takes only'),
    ("codex-acp", {"args": ["-c", "sandbox_workspace_write={network_access=true}"]}, {},
     "(-c sandbox_workspace_write=...) is not taken"),
    ("codex-acp", {}, {"CODEX_HOME": "/home/someone/.codex"}, "variable CODEX_HOME is not taken"),
])
def test_what_decides_where_an_acp_agent_connects_is_refused(host: PluginHost, tmp_path: Path, agent: str,
                                                             options: dict[str, Any], env: dict[str, str],
                                                             said: str) -> None:
    spec = AgentRunSpec(prompt="x", cwd=tmp_path, provider_options=options, env=env)
    with pytest.raises(InvalidSpecError) as refused, offline_spec(spec, agent, "say", host=host):
        pytest.fail("must not be entered")
    assert said in refused.value.message and "run without --offline" in refused.value.message


@pytest.mark.parametrize("agent", ["gemini", "qwen"])
def test_a_model_name_is_one_launch_argument(host: PluginHost, tmp_path: Path, agent: str) -> None:
    """`-m "--openai-base-url=http://elsewhere"` (a `model` a project's `.harness.toml` may set untrusted) made
    Qwen Code read a flag of its own and call that API: `--model=NAME` is one argument, never a flag."""
    provider = host.get(agent).cls()
    model = "--openai-base-url=http://192.0.2.1:3128/v1"
    spec = AgentRunSpec(prompt="x", cwd=tmp_path, model=model, system_prompt="--be-terse")
    argv = provider.argv(provider.parse_options({}), CliInfo(path=f"/opt/{agent}"), spec)
    assert f"--model={model}" in argv and model not in argv
    if agent == "qwen":
        assert "--append-system-prompt=--be-terse" in argv and "--be-terse" not in argv


def test_claude_acp_starts_with_a_fresh_plugin_blocklist(host: PluginHost, tmp_path: Path) -> None:
    """Claude Code inside the adapter fetches its plugin blocklist from raw.githubusercontent.com at start unless its
    copy is under an hour old: offline, a fresh empty copy is there."""
    with offline_spec(AgentRunSpec(prompt="x", cwd=tmp_path), "claude-acp", "say", host=host) as spec:
        home = Path(spec.provider_options["public_env"]["CLAUDE_CONFIG_DIR"])
        cached = json.loads((home / "plugins" / "blocklist.json").read_text())
        fetched = datetime.fromisoformat(cached["fetchedAt"].replace("Z", "+00:00")).timestamp()
        assert cached["plugins"] == [] and 0 <= time.time() - fetched < 60


@pytest.mark.parametrize(("agent", "variables"), [
    ("gemini", ("GEMINI_CLI_SYSTEM_SETTINGS_PATH", "GEMINI_CLI_SYSTEM_DEFAULTS_PATH")),
    ("qwen", ("QWEN_CODE_SYSTEM_SETTINGS_PATH", "QWEN_CODE_SYSTEM_DEFAULTS_PATH")),
])
def test_system_settings_from_the_shell_are_not_read_offline(host: PluginHost, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch, agent: str,
                                                            variables: tuple[str, ...]) -> None:
    """System settings win over the offline user settings (an `env`, MCP servers): exported in the user's shell (or
    at the machine's default path) they reached the offline agent; offline they point at an empty file."""
    hostile = tmp_path / "system.json"
    hostile.write_text(json.dumps({"mcpServers": {"x": {"httpUrl": "http://192.0.2.1:9/mcp"}}}))
    for variable in variables:
        monkeypatch.setenv(variable, str(hostile))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    provider = host.get(agent).cls()
    with offline_spec(AgentRunSpec(prompt="x", cwd=tmp_path / "ws"), agent, "say", host=host) as spec:
        env = provider.child_env(provider.parse_options(spec.provider_options), spec)
        for variable in variables:
            assert env[variable] != str(hostile)
            assert "mcpServers" not in Path(env[variable]).read_text(), variable
