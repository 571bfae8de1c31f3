"""The Codex login check (`harness_codex_common.auth`, what `harness doctor` shows as credentials): the pure
reading of `codex login status` against outputs recorded from 0.169.0, then the real CLI with an isolated
CODEX_HOME (no credentials → not logged in with the next step; OPENAI_API_KEY or a stored key → found; never a
network call)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from harness_core import ProtocolError
from harness_core.provider import AuthStatus, CliInfo
from test_offline_real import CODEX, pytestmark as real_marks

from harness_codex_common.auth import LOGIN_HINT, check_codex_login, login_status

WARNING = ('WARNING: proceeding, even though we could not create PATH aliases: Refusing to create helper binaries '
           'under temporary dir "/tmp" (codex_home: AbsolutePathBuf("/tmp/h"))\n')
"""Recorded from 0.169.0 (stderr) with CODEX_HOME under /tmp."""


def real_cli(test: Any) -> Any:
    """The marks of a test against the real codex (`real_cli`, skipped with the install hint when missing)."""
    for mark in real_marks:
        test = mark(test)
    return test


def test_not_logged_in_says_the_next_step() -> None:
    status = login_status(1, WARNING + "Not logged in\n", {})
    assert not status.logged_in and status.detail == "not logged in" and status.next_step == LOGIN_HINT
    assert "codex login" in LOGIN_HINT and "OPENAI_API_KEY" in LOGIN_HINT


def test_an_api_key_in_the_environment_counts_without_a_stored_login() -> None:
    status = login_status(1, "Not logged in\n", {"OPENAI_API_KEY": "sk-x"})
    assert status.logged_in and status.detail == "API key from OPENAI_API_KEY (no stored login)"
    assert not login_status(1, "Not logged in\n", {"OPENAI_API_KEY": "  "}).logged_in


def test_stored_logins_are_found_and_never_quote_the_key() -> None:
    key = login_status(0, WARNING + "API key configured - sk-test-***lmnop\n"
                       "Authentication is checked when you send a request.\n", {})
    assert key.logged_in and key.detail == "API key stored by `codex login`" and "sk-" not in key.detail
    chatgpt = login_status(0, "Logged in using ChatGPT\n", {})
    assert chatgpt.logged_in and chatgpt.detail == "logged in using ChatGPT"


def test_unexpected_output_is_not_checked_shown_scrubbed() -> None:
    """A failing check with an answer it cannot read says so (doctor: "not checked (...)"), never "not logged in"."""
    with pytest.raises(ProtocolError) as caught:
        login_status(2, "error: sk-abcdefghijklmnopqrstuvwx is malformed\n", {})
    message = caught.value.message
    assert "sk-abcdefghijklmnop" not in message and "exit 2" in message and "run it by hand" in message


def _isolated(tmp_path: Path, **extra: str) -> dict[str, str]:
    home = tmp_path / "codex-home"
    home.mkdir(exist_ok=True)
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TERM")}
    return {**keep, "HOME": str(tmp_path), "CODEX_HOME": str(home), **extra}


def _check(env: dict[str, str]) -> AuthStatus:
    """The check under a deadline (`cli_output` kills the command after 10 s)."""
    return anyio.run(check_codex_login, CliInfo(path=str(CODEX)), env)


@real_cli
def test_real_codex_without_credentials_is_not_logged_in(tmp_path: Path) -> None:
    status = _check(_isolated(tmp_path))
    assert not status.logged_in and status.next_step == LOGIN_HINT


@real_cli
def test_real_codex_with_an_api_key_is_found(tmp_path: Path) -> None:
    status = _check(_isolated(tmp_path, OPENAI_API_KEY="sk-harness-test-not-a-real-key"))
    assert status.logged_in and "OPENAI_API_KEY" in status.detail
    (tmp_path / "stored").mkdir()
    stored = _isolated(tmp_path / "stored")
    subprocess.run([str(CODEX), "login", "--with-api-key"], input="sk-harness-test-not-a-real-key\n", env=stored,
                   capture_output=True, text=True, timeout=30, check=True)
    status = _check(stored)
    assert status.logged_in and status.detail == "API key stored by `codex login`"
