"""`ClaudeProvider.offline_setup`: what `harness run --offline` and the demo hand to the real CLI (no CLI run
here; the contract suite's `--harness-real` mode plays every scenario through it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from harness_core import AgentRunSpec, InvalidSpecError
from harness_core.offline import offline_spec
from harness_core.plugins import PluginHost
from harness_core.scripted.backends import MessagesBackend
from harness_core.scripted.scenarios import SCENARIOS

from harness_claude.argv import build_argv, build_env
from harness_claude.offline import OTHER_APIS
from harness_claude.provider import ClaudeProvider


def test_offline_setup_points_claude_at_a_bound_backend(tmp_path: Path) -> None:
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    setup = ClaudeProvider().offline_setup(SCENARIOS["tools"], ws, state)
    backend = setup.backend
    assert isinstance(backend, MessagesBackend) and backend.cwd == str(ws)
    try:
        assert setup.env["ANTHROPIC_BASE_URL"] == backend.url  # bound before it serves
        assert setup.env["CLAUDE_CONFIG_DIR"] == str(state / "home" / ".claude")
        assert setup.env["HOME"] == str(state / "home") and (state / "home").is_dir()
        assert setup.env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
        opts = ClaudeProvider().parse_options(setup.provider_options)
        assert opts.max_retries == 0 and not opts.bare
        spec = AgentRunSpec(prompt="p", cwd=ws, env=setup.env, provider_options=setup.provider_options)
        argv = build_argv("claude", spec, opts, is_root=False)
        assert argv[argv.index("--setting-sources") + 1] == ""
        env = build_env(spec, opts, is_root=False, base={})
        assert env["CLAUDE_CODE_MAX_RETRIES"] == "0" and env["ANTHROPIC_BASE_URL"] == backend.url
    finally:
        backend.stop()


def test_another_model_api_from_the_users_shell_is_switched_off(tmp_path: Path, host: PluginHost) -> None:
    """`CLAUDE_CODE_USE_BEDROCK=1` exported in the user's shell once sent an offline run to Bedrock: the offline
    environment turns every such switch off, over the environment the CLI inherits."""
    with offline_spec(AgentRunSpec(prompt="p", cwd=tmp_path), "claude", "say", host=host) as spec:
        opts = ClaudeProvider().parse_options(spec.provider_options)
        env = build_env(spec, opts, is_root=False, base={"CLAUDE_CODE_USE_BEDROCK": "1", "CLAUDE_CODE_USE_VERTEX": "1",
                                                          "HTTPS_PROXY": "http://192.0.2.1:3128"})
    assert all(env[name] == "0" for name in OTHER_APIS)
    assert env["NO_PROXY"] == env["no_proxy"] == "127.0.0.1,localhost,::1"


@pytest.mark.parametrize(("options", "env", "said"), [
    ({"setting_sources": "user,project"}, {}, "option setting_sources is not taken: it chooses the settings files"),
    ({"extra_args": ["--settings", '{"env": {"ANTHROPIC_BASE_URL": "http://192.0.2.1"}}']}, {},
     "option extra_args is not taken: Claude Code's own flags"),
    ({}, {"ANTHROPIC_BASE_URL": "http://192.0.2.1"}, "environment variable ANTHROPIC_BASE_URL is not taken"),
    ({}, {"CLAUDE_CODE_USE_BEDROCK": "1"}, "environment variable CLAUDE_CODE_USE_BEDROCK is not taken: it sends the "
                                           "model calls to another API"),
    ({}, {"CLAUDE_CONFIG_DIR": "/home/someone/.claude"}, "environment variable CLAUDE_CONFIG_DIR is not taken"),
])
def test_what_decides_where_claude_connects_is_refused_offline(tmp_path: Path, host: PluginHost,
                                                                 options: dict[str, Any], env: dict[str, str],
                                                                 said: str) -> None:
    spec = AgentRunSpec(prompt="p", cwd=tmp_path, provider_options=options, env=env)
    with pytest.raises(InvalidSpecError) as refused, offline_spec(spec, "claude", "say", host=host):
        pytest.fail("must not be entered")
    assert said in refused.value.message


def test_other_options_merge_into_the_offline_ones(tmp_path: Path, host: PluginHost) -> None:
    spec = AgentRunSpec(prompt="p", cwd=tmp_path, provider_options={"max_turns": 3}, env={"MINE": "1"})
    with offline_spec(spec, "claude", "say", host=host) as merged:
        assert merged.provider_options == {"max_retries": 0, "setting_sources": "", "max_turns": 3}
        assert merged.env["MINE"] == "1" and merged.env["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:")
