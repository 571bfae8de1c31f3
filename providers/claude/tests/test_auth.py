"""Claude Code's credentials check (`harness_claude.auth`, what `harness doctor` shows): the pure reading of
`claude auth status --json` against outputs recorded from 2.1.328, then the real CLI with an isolated home (no
credentials → not logged in with the next step; ANTHROPIC_API_KEY → found; no model call)."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from claude_helpers import CLAUDE, needs_real_claude
from harness_core import ProtocolError
from harness_core.provider import CliInfo

from harness_claude.auth import LOGIN_HINT, auth_status, check_claude_auth
from harness_claude.provider import ClaudeProvider

NOT_LOGGED_IN = """{
  "loggedIn": false,
  "authMethod": "none",
  "apiProvider": "firstParty",
  "analyticsDisabled": true,
  "projectsDirectory": "/tmp/h/.claude/projects",
  "configDirectory": "/tmp/h/.claude",
  "loginExpiresAt": null,
  "consoleProfileSignInOffered": true
}"""
API_KEY = NOT_LOGGED_IN.replace('"loggedIn": false', '"loggedIn": true').replace(
    '"authMethod": "none"', '"authMethod": "api_key"'
).replace('"consoleProfileSignInOffered": true', '"consoleProfileSignInOffered": true,\n  "apiKeySource": '
          '"ANTHROPIC_API_KEY"')
"""Both recorded from 2.1.328 (`claude auth status --json`: exit 1, then exit 0 with the key set)."""


def test_not_logged_in_says_the_next_step() -> None:
    status = auth_status(1, NOT_LOGGED_IN)
    assert not status.logged_in and status.detail == "not logged in" and status.next_step == LOGIN_HINT
    assert "/login" in LOGIN_HINT and "ANTHROPIC_API_KEY" in LOGIN_HINT


def test_an_api_key_says_where_it_comes_from() -> None:
    status = auth_status(0, API_KEY)
    assert status.logged_in and status.detail == "API key from ANTHROPIC_API_KEY" and status.next_step is None
    login = auth_status(0, API_KEY.replace('"api_key"', '"claude.ai"').replace(',\n  "apiKeySource": '
                                                                                '"ANTHROPIC_API_KEY"', ""))
    assert login.logged_in and login.detail == "claude.ai login"


def test_output_that_is_not_the_json_is_not_checked_rather_than_not_logged_in() -> None:
    """A check that cannot read the answer (another version's format) says so; doctor shows "not checked (...)"
    instead of blaming the user's login."""
    with pytest.raises(ProtocolError) as caught:
        auth_status(1, "error: unknown command 'auth'")
    assert "unknown command" in caught.value.message and "run it by hand" in caught.value.message


def _isolated(tmp_path: Path, **extra: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TERM")}
    return {**keep, "HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(tmp_path / ".claude"), **extra}


@pytest.mark.real_cli
@needs_real_claude[1]
def test_real_claude_without_credentials_is_not_logged_in(tmp_path: Path) -> None:
    status = anyio.run(check_claude_auth, CliInfo(path=CLAUDE), _isolated(tmp_path))
    assert not status.logged_in and status.next_step == LOGIN_HINT


@pytest.mark.real_cli
@needs_real_claude[1]
def test_real_claude_with_an_api_key_is_found(tmp_path: Path) -> None:
    env = _isolated(tmp_path, ANTHROPIC_API_KEY="sk-ant-harness-test-not-a-real-key")
    status = anyio.run(check_claude_auth, CliInfo(path=CLAUDE), env)
    assert status.logged_in and status.detail == "API key from ANTHROPIC_API_KEY"


def test_the_provider_declares_the_check() -> None:
    from harness_core.provider import Provider

    assert ClaudeProvider.check_auth is not Provider.check_auth
