"""Provider options become the app-server's argv: config overrides, features."""

from __future__ import annotations

from harness_codex_appserver.options import CodexAppServerOptions, build_argv


def test_nested_config_becomes_dotted_keys_that_codex_parses_itself() -> None:
    options = CodexAppServerOptions.model_validate(
        {"config": {"tools": {"web_search": "true"}, "model_reasoning_effort": "high"}, "disable": "plugins"}
    )
    argv = build_argv("codex", options)
    assert argv[:4] == ["codex", "app-server", "--listen", "stdio://"]
    assert "tools.web_search=true" in argv and "model_reasoning_effort=high" in argv
    assert argv[argv.index("--disable") + 1] == "plugins"
