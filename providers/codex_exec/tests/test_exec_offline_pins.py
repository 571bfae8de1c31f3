"""`--offline` with codex-exec stays on the scripted backend whatever options it is given: `-o config.*` is merged
into the offline `-c` overrides (it once replaced them all, and `codex exec` went to the OpenAI API), and an option
that decides where Codex connects is refused, naming it. The merged options are checked where Codex reads them: the
`codex exec` command line they make. No CLI needed (the contract's `test_offline_run_connects_only_to_its_backend`
runs the real one in a loopback-only namespace)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_codex_exec.argv import build_argv
from harness_codex_exec.options import CodexExecOptions
from harness_core import AgentRunSpec, InvalidSpecError, McpServer
from harness_core.offline import offline_spec
from harness_core.plugins import PluginHost


def test_one_config_key_joins_the_offline_overrides(host: PluginHost, tmp_path: Path) -> None:
    spec = AgentRunSpec(prompt="x", cwd=tmp_path, provider_options={"config": {"model_reasoning_effort": "low"}})
    with offline_spec(spec, "codex-exec", "say", host=host) as merged:
        argv = build_argv("codex", merged, CodexExecOptions.model_validate(merged.provider_options))
        pairs = [argv[i + 1] for i, arg in enumerate(argv) if arg == "-c"]
        assert 'model_provider="mock"' in pairs and "analytics.enabled=false" in pairs
        assert any(p.startswith("model_providers.mock=") and "base_url=\"http://127.0.0.1:" in p for p in pairs)
        assert "model_reasoning_effort=low" in pairs


@pytest.mark.parametrize("options", [
    {"config": {"model_provider": "openai"}},
    {"config": {"model_providers": {"mock": {"base_url": "http://192.0.2.1/v1"}}}},
    {"config": {"profile": "work"}},
    {"codex_home": "/home/someone/.codex"},
    {"enable": "plugins"},
])
def test_an_option_that_decides_where_codex_connects_is_refused(host: PluginHost, tmp_path: Path,
                                                                  options: dict[str, object]) -> None:
    spec = AgentRunSpec(prompt="x", cwd=tmp_path, provider_options=options)
    with pytest.raises(InvalidSpecError, match="is not taken"), offline_spec(spec, "codex-exec", "say", host=host):
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
    with pytest.raises(InvalidSpecError) as refused, offline_spec(spec, "codex-exec", "say", host=host):
        pytest.fail("must not be entered")
    said = refused.value.message
    assert f"option config.{key} is not taken: offline, Codex takes only config keys that cannot reach" in said
    assert "model_reasoning_effort" in said and "run without --offline" in said


def test_an_mcp_server_beyond_loopback_is_refused_offline(host: PluginHost, tmp_path: Path) -> None:
    """An offline run reaches nothing beyond 127.0.0.1: an http MCP server elsewhere is refused before anything is
    made; one on loopback, or a stdio command, is taken."""
    far = AgentRunSpec(prompt="x", cwd=tmp_path, mcp_servers=[McpServer(name="far", url="https://example.com/mcp")])
    refused = pytest.raises(InvalidSpecError, match="beyond this machine")
    with refused, offline_spec(far, "codex-exec", "say", host=host):
        pass
    near = AgentRunSpec(prompt="x", cwd=tmp_path, mcp_servers=[McpServer(name="near", url="http://127.0.0.1:9/mcp"),
                                                               McpServer(name="cmd", command="srv")])
    with offline_spec(near, "codex-exec", "say", host=host) as merged:
        assert [s.name for s in merged.mcp_servers] == ["near", "cmd"]
