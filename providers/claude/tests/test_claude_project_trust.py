"""The claude provider keeps Claude Code from loading an untrusted project's settings (hooks), `.mcp.json` and
commands: `--setting-sources user` unless the spec trusts the project or the options choose their own sources. The
real CLI's behaviour under each is `test_claude_project_trust_real.py`."""

from __future__ import annotations

import pytest
from harness_core import AgentRunSpec

from harness_claude.argv import build_argv
from harness_claude.options import ClaudeOptions
from harness_claude.provider import ClaudeProvider


def _sources(spec: AgentRunSpec, **options: object) -> list[str]:
    argv = build_argv("claude", spec, ClaudeOptions.model_validate(options), is_root=False)
    return [argv[i + 1] for i, arg in enumerate(argv) if arg == "--setting-sources"]


@pytest.mark.parametrize("live", [False, True])
def test_an_untrusted_project_loads_only_the_users_settings(live: bool) -> None:
    spec = AgentRunSpec(prompt="x")
    argv = build_argv("claude", spec, ClaudeOptions(), is_root=False, live=live)
    assert argv[argv.index("--setting-sources") + 1] == "user"


def test_a_trusted_project_loads_what_claude_code_loads_by_itself() -> None:
    assert _sources(AgentRunSpec(prompt="x", trust_project=True)) == []


@pytest.mark.parametrize(("options", "expected"), [
    ({"setting_sources": "user,project"}, ["user,project"]),
    ({"setting_sources": ""}, [""]),
    ({"bare": True}, []),  # --bare loads no settings files at all
])
def test_the_options_own_choice_wins(options: dict[str, object], expected: list[str]) -> None:
    assert _sources(AgentRunSpec(prompt="x"), **options) == expected


def test_the_project_files_it_keeps_out_are_declared() -> None:
    assert set(ClaudeProvider.info.project_config) == {".claude/settings.json", ".claude/settings.local.json",
                                                       ".mcp.json", ".claude/commands"}
