"""Options of the codex-appserver provider and the command line they make.

Layer: provider configuration. Knows Codex's command-line flags (`app-server --listen stdio://`, `-c`,
`--enable`, `--disable`) and environment (`CODEX_HOME`); how a `-c` value is written is shared with
codex-exec (`harness_codex_common.cli.config_args`). Knows nothing of JSON-RPC or events.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from harness_codex_common.cli import CodexCliOptions, config_args
from pydantic import Field

__all__ = ["CodexAppServerOptions", "build_argv", "build_env"]


class CodexAppServerOptions(CodexCliOptions):
    """`-o KEY=VALUE` options of `codex-appserver`: the shared Codex options plus the app-server's own."""

    ephemeral: bool | None = Field(
        default=None,
        description="Start an ephemeral thread (no rollout on disk, cannot be resumed). Default: resumable.",
    )
    startup_timeout: float = Field(default=30.0, gt=0, description="Seconds for initialize + thread start.")
    request_timeout: float = Field(default=60.0, gt=0, description="Seconds for any other request.")
    interrupt_timeout: float = Field(
        default=5.0, gt=0, description="Seconds to wait for `turn/completed` after `turn/interrupt`."
    )


def build_argv(binary: str, options: CodexAppServerOptions) -> list[str]:
    argv = [binary, "app-server", "--listen", "stdio://"]
    argv += config_args(options.config)
    for feature in options.enable:
        argv += ["--enable", feature]
    for feature in options.disable:
        argv += ["--disable", feature]
    return argv


def build_env(extra: Mapping[str, str], options: CodexAppServerOptions) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    if options.codex_home:
        env["CODEX_HOME"] = os.path.expanduser(options.codex_home)
    return env
