"""What both Codex providers share: the codex CLI's discovery, options, `-c` config, log argv, errors, offline setup.

Layer: provider support (a library, not a provider: it registers no entry point). Knows the `codex` CLI;
knows nothing of app-server's JSON-RPC or `codex exec --json` (each provider has its own protocol).
Its modules, one line each: providers/codex_common/README.md.
"""

from __future__ import annotations

from harness_codex_common.argv import redacted_argv
from harness_codex_common.cli import (
    INSTALL_HINT,
    MIN_CODEX_VERSION,
    NATIVE_GLOBS,
    CodexCliOptions,
    config_args,
    flat_config,
    probe_codex,
    toml_value,
)
from harness_codex_common.errors import (
    AUTH_HINT,
    FAILURE_HINT,
    HINTS,
    MAX_PROMPT_CHARS,
    RETRY_HINT,
    RETRYING,
    CodexHints,
    ErrorKind,
    classify_message,
    codex_error,
    mcp_servers_failed,
    message_kind,
    message_status,
    prompt_too_long,
    session_not_found,
)
from harness_codex_common.offline import (
    OFFLINE_DISABLE,
    OFFLINE_ENV_PINS,
    OFFLINE_KEY_ENV,
    OFFLINE_MODEL,
    OFFLINE_PINS,
    check_offline_options,
    offline_args,
    offline_config,
    offline_env,
    offline_options,
    offline_setup,
)
from harness_codex_common.retries import (
    MAX_RECONNECTS,
    Reconnect,
    Reconnects,
    is_connection_failure,
    model_api_url,
    parse_reconnect,
    unreachable_error,
)
from harness_codex_common.rollout import read_finished_turn, read_turn, refused_events, rollout_path
from harness_codex_common.toolconfig import TOOL_ALLOW_LISTS, TOOL_FILTERS, McpConfig, mcp_config, mcp_result_text

__all__ = [
    "AUTH_HINT",
    "CodexCliOptions",
    "CodexHints",
    "ErrorKind",
    "FAILURE_HINT",
    "HINTS",
    "INSTALL_HINT",
    "MAX_PROMPT_CHARS",
    "MAX_RECONNECTS",
    "MIN_CODEX_VERSION",
    "NATIVE_GLOBS",
    "OFFLINE_DISABLE",
    "OFFLINE_ENV_PINS",
    "OFFLINE_KEY_ENV",
    "OFFLINE_MODEL",
    "OFFLINE_PINS",
    "RETRYING",
    "RETRY_HINT",
    "TOOL_ALLOW_LISTS",
    "TOOL_FILTERS",
    "McpConfig",
    "Reconnect",
    "Reconnects",
    "check_offline_options",
    "classify_message",
    "codex_error",
    "config_args",
    "flat_config",
    "is_connection_failure",
    "message_kind",
    "mcp_config",
    "mcp_result_text",
    "mcp_servers_failed",
    "message_status",
    "model_api_url",
    "offline_args",
    "offline_config",
    "offline_env",
    "offline_options",
    "offline_setup",
    "parse_reconnect",
    "probe_codex",
    "prompt_too_long",
    "read_finished_turn",
    "read_turn",
    "redacted_argv",
    "refused_events",
    "rollout_path",
    "session_not_found",
    "toml_value",
    "unreachable_error",
]
