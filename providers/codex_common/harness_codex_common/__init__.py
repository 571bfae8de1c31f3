"""What both Codex providers share: the codex CLI's discovery, options, `-c` config, log argv, errors, offline setup.

Layer: provider support (a library, not a provider: it registers no entry point). Knows the `codex` CLI;
knows nothing of app-server's JSON-RPC or `codex exec --json` (each provider has its own protocol).

- `harness_codex_common.cli`: finding codex, `CodexCliOptions`, `config_args`/`flat_config`/`toml_value`.
- `harness_codex_common.argv`: a codex command line for a log (`redacted_argv`: `-c` values hidden).
- `harness_codex_common.errors`: a Codex failure as a Harness error (`codex_error`, `classify_message`) and
  the next steps its messages end with (`CodexHints`, `HINTS`, `RETRYING`).
- `harness_codex_common.offline`: codex against the scripted Responses backend (`offline_setup`, and the
  `-c` overrides, `--disable` flags and environment it is made of, for tests that run codex by hand).
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
    RETRY_HINT,
    RETRYING,
    CodexHints,
    ErrorKind,
    classify_message,
    codex_error,
    message_kind,
    message_status,
)
from harness_codex_common.offline import (
    OFFLINE_DISABLE,
    OFFLINE_KEY_ENV,
    OFFLINE_MODEL,
    offline_args,
    offline_config,
    offline_env,
    offline_options,
    offline_setup,
)

__all__ = [
    "AUTH_HINT",
    "CodexCliOptions",
    "CodexHints",
    "ErrorKind",
    "FAILURE_HINT",
    "HINTS",
    "INSTALL_HINT",
    "MIN_CODEX_VERSION",
    "NATIVE_GLOBS",
    "OFFLINE_DISABLE",
    "OFFLINE_KEY_ENV",
    "OFFLINE_MODEL",
    "RETRYING",
    "RETRY_HINT",
    "classify_message",
    "codex_error",
    "config_args",
    "flat_config",
    "message_kind",
    "message_status",
    "offline_args",
    "offline_config",
    "offline_env",
    "offline_options",
    "offline_setup",
    "probe_codex",
    "redacted_argv",
    "toml_value",
]
