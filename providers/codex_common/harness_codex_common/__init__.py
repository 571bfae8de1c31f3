"""What both Codex providers share: the codex CLI's discovery, options, `-c` config rendering, offline setup.

Layer: provider support (a library, not a provider: it registers no entry point). Knows the `codex` CLI;
knows nothing of app-server's JSON-RPC or `codex exec --json` (each provider has its own protocol).
"""

from __future__ import annotations

from harness_codex_common.cli import (
    INSTALL_HINT,
    MIN_CODEX_VERSION,
    NATIVE_GLOBS,
    CodexCliOptions,
    config_args,
    flat_config,
    offline_options,
    offline_setup,
    probe_codex,
    toml_value,
)

__all__ = [
    "CodexCliOptions",
    "INSTALL_HINT",
    "MIN_CODEX_VERSION",
    "NATIVE_GLOBS",
    "config_args",
    "flat_config",
    "offline_options",
    "offline_setup",
    "probe_codex",
    "toml_value",
]
