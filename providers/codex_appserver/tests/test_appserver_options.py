"""Provider options become the app-server's argv (config overrides, features), and the argv a log shows."""

from __future__ import annotations

import pathlib

import pytest
from harness_core.provider import REDACTED

from harness_codex_appserver.argv import build_argv, redacted_argv
from harness_codex_appserver.options import CodexAppServerOptions


def test_nested_config_becomes_dotted_keys_that_codex_parses_itself() -> None:
    options = CodexAppServerOptions.model_validate(
        {"config": {"tools": {"web_search": "true"}, "model_reasoning_effort": "high"}, "disable": "plugins"}
    )
    argv = build_argv("codex", options)
    assert argv[:4] == ["codex", "app-server", "--listen", "stdio://"]
    assert "tools.web_search=true" in argv and "model_reasoning_effort=high" in argv
    assert argv[argv.index("--disable") + 1] == "plugins"


def test_argv_log_keeps_config_keys_but_not_values() -> None:
    options = CodexAppServerOptions.model_validate(
        {"config": {"model_providers.x.http_headers": "Bearer abcdefghijkl", "model": "gpt-5.5"}}
    )
    argv = [*build_argv("/opt/codex", options), "--token-file", "/home/u/sk-abcdefghijklmnop"]
    shown = redacted_argv(argv, known=("private-value",))
    text = " ".join(shown)
    assert "abcdefghijkl" not in text and "gpt-5.5" not in text and "sk-abcdefghijklmnop" not in text
    assert f"model_providers.x.http_headers={REDACTED}" in shown and f"model={REDACTED}" in shown
    assert shown[:4] == ["/opt/codex", "app-server", "--listen", "stdio://"]
    assert redacted_argv(["codex", "--flag", "private-value"], known=("private-value",))[-1] == REDACTED



def test_doctor_checks_codex_login_in_the_runs_codex_home(tmp_path: pathlib.Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """`check_auth` (what `harness doctor` calls) runs `codex login status` with the CODEX_HOME a run would use."""
    import anyio
    from harness_core.provider import CliInfo

    from harness_codex_appserver.provider import CodexAppServerProvider

    for name in ("OPENAI_API_KEY", "CODEX_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    seen = tmp_path / "seen"
    codex = tmp_path / "codex"
    codex.write_text(f"#!/bin/sh\necho \"$* $CODEX_HOME\" > {seen}\necho 'Not logged in'\nexit 1\n")
    codex.chmod(0o755)
    provider = CodexAppServerProvider()
    options = provider.parse_options({"codex_home": str(tmp_path / "home")})
    status = anyio.run(provider.check_auth, options, CliInfo(path=str(codex), version="0.169.0"))
    assert seen.read_text().strip() == f"login status {tmp_path / 'home'}"
    assert status is not None and not status.logged_in and "codex login" in (status.next_step or "")
