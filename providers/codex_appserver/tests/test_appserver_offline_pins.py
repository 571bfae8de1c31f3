"""`--offline` with codex-appserver stays on the scripted backend whatever options it is given: `-o config.*` is
merged into the offline `-c` overrides (it once replaced them all, and codex went to the OpenAI API), and an option
or variable that decides where Codex connects is refused, naming it. The merged options are checked where Codex reads
them: the `codex app-server` command line they make. No CLI needed (the contract's
`test_offline_run_connects_only_to_its_backend` runs the real one in a loopback-only namespace)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from harness_core import AgentRunSpec, InvalidSpecError
from harness_core.offline import offline_spec
from harness_core.plugins import PluginHost

from harness_codex_appserver.argv import build_argv
from harness_codex_appserver.options import CodexAppServerOptions


def test_one_config_key_joins_the_offline_overrides(host: PluginHost, workspace: Path) -> None:
    spec = AgentRunSpec(prompt="x", cwd=workspace, provider_options={"config": {"model_reasoning_effort": "low"},
                                                                     "max_reconnects": "0", "disable": "apps"})
    with offline_spec(spec, "codex-appserver", "say", host=host) as merged:
        argv = build_argv("codex", CodexAppServerOptions.model_validate(merged.provider_options))
        pairs = [argv[i + 1] for i, arg in enumerate(argv) if arg == "-c"]
        assert 'model_provider="mock"' in pairs and "analytics.enabled=false" in pairs
        assert any(p.startswith("model_providers.mock=") and "base_url=\"http://127.0.0.1:" in p for p in pairs)
        assert "model_reasoning_effort=low" in pairs
        disabled = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--disable"]
        assert disabled == ["unbounded_connection_retries", "plugins", "apps"]
        assert merged.provider_options["max_reconnects"] == 0 and merged.provider_options["codex_home"]


@pytest.mark.parametrize(("options", "said"), [
    ({"config": {"model_provider": "openai"}}, "option config.model_provider is not taken: it chooses the model API"),
    ({"config": ["model_provider=openai"]}, "option config.model_provider is not taken"),
    ({"config": {"model_providers": {"mock": {"base_url": "http://192.0.2.1/v1"}}}},
     "option config.model_providers.mock.base_url (under config.model_providers) is not taken"),
    ({"config": {"model_providers.openai.base_url": "http://192.0.2.1/v1"}}, "config.model_providers.openai.base_url"),
    ({"config": {"profile": "work"}}, "option config.profile is not taken: it selects a config profile"),
    ({"config": {"analytics.enabled": "true"}}, "config.analytics.enabled (under config.analytics)"),
    ({"config": {"otel": {"exporter": "otlp-http"}}}, "config.otel.exporter (under config.otel)"),
    ({"config": {"features.plugins": "true"}}, "config.features.plugins is not taken: it turns on plugin sync"),
    ({"codex_home": "/home/someone/.codex"}, "option codex_home is not taken: it is where Codex reads its config"),
    ({"enable": "plugins"}, "option enable=plugins is not taken: an offline run turns plugins off"),
])
def test_an_option_that_decides_where_codex_connects_is_refused(host: PluginHost, workspace: Path,
                                                                  options: dict[str, Any], said: str) -> None:
    spec = AgentRunSpec(prompt="x", cwd=workspace, provider_options=options)
    with pytest.raises(InvalidSpecError) as refused, offline_spec(spec, "codex-appserver", "say", host=host):
        pytest.fail("must not be entered")
    assert said in refused.value.message and "run without --offline" in refused.value.message


@pytest.mark.parametrize("variable", ["CODEX_HOME", "CODEX_EXEC_SERVER_URL", "NO_PROXY"])
def test_a_variable_that_decides_where_codex_connects_is_refused(host: PluginHost, workspace: Path,
                                                                  variable: str) -> None:
    spec = AgentRunSpec(prompt="x", cwd=workspace, env={variable: "/elsewhere"})
    with pytest.raises(InvalidSpecError, match=f"environment variable {variable} is not taken"), \
            offline_spec(spec, "codex-appserver", "say", host=host):
        pytest.fail("must not be entered")


@pytest.mark.parametrize(("config", "key"), [
    ({"mcp_servers.x.url": '"https://192.0.2.1/mcp"'}, "mcp_servers.x.url"),
    ({"mcp_servers": {"x": {"command": "sh"}}}, "mcp_servers.x.command"),
    ({"notify": '["curl", "https://192.0.2.1"]'}, "notify"),
    ({"tools.web_search": "true"}, "tools.web_search"),
    ({"experimental_resume": "/tmp/x"}, "experimental_resume"),
    ({'"mcp_servers".x.url': "https://192.0.2.1"}, '"mcp_servers".x.url'),
    ({"sandbox_workspace_write": "{network_access=true}"}, "sandbox_workspace_write"),
])
def test_only_config_keys_that_reach_nothing_are_taken(host: PluginHost, tmp_path: Path, config: dict[str, object],
                                                       key: str) -> None:
    """An allowlist, not a list of what to refuse: `config.mcp_servers.*` once slipped past the pins and Codex
    started the MCP server (a connection to any host) in an "offline" run that reported success."""
    spec = AgentRunSpec(prompt="x", cwd=tmp_path, provider_options={"config": config})
    with pytest.raises(InvalidSpecError) as refused, offline_spec(spec, "codex-appserver", "say", host=host):
        pytest.fail("must not be entered")
    said = refused.value.message
    assert f"option config.{key} is not taken: offline, Codex takes only config keys that cannot reach" in said
    assert "model_reasoning_effort" in said and "run without --offline" in said
