"""`ClaudeProvider.offline_setup`: what `harness run --offline` and the demo hand to the real CLI (no CLI run
here; the contract suite's `--harness-real` mode plays every scenario through it)."""

from __future__ import annotations

from pathlib import Path

from harness_core import AgentRunSpec
from harness_core.offline.backends import MessagesBackend
from harness_core.offline.scenarios import SCENARIOS

from harness_claude.argv import build_argv, build_env
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
