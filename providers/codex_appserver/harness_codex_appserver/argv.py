"""The `codex app-server` command line and environment for a run, and the command line as a log shows it.

Layer: provider configuration, pure. Knows Codex's flags (`app-server --listen stdio://`, `-c`, `--enable`,
`--disable`) and `CODEX_HOME`; `-c` values are written and hidden as codex-exec does (`harness_codex_common`).
Knows nothing of JSON-RPC, processes or events.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from harness_codex_common import config_args, redacted_argv

from harness_codex_appserver.options import CodexAppServerOptions

__all__ = ["build_argv", "build_env", "redacted_argv"]


def build_argv(binary: str, options: CodexAppServerOptions) -> list[str]:
    """`codex app-server --listen stdio://` with the options' `-c` overrides and feature flags."""
    argv = [binary, "app-server", "--listen", "stdio://"]
    argv += config_args(options.config)
    for feature in options.enable:
        argv += ["--enable", feature]
    for feature in options.disable:
        argv += ["--disable", feature]
    return argv


def build_env(extra: Mapping[str, str], options: CodexAppServerOptions) -> dict[str, str]:
    """Our environment, the spec's `env` over it, and `CODEX_HOME` when the options name one."""
    env = dict(os.environ)
    env.update(extra)
    if options.codex_home:
        env["CODEX_HOME"] = os.path.expanduser(options.codex_home)
    return env
