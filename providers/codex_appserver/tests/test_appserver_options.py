"""Provider options become the app-server's argv (config overrides, features), and the argv a log shows."""

from __future__ import annotations

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
