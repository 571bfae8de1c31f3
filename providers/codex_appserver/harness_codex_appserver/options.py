"""Options of the codex-appserver provider and the command line they make.

Layer: provider configuration. Knows Codex's command-line flags (`app-server --listen stdio://`, `-c`,
`--enable`, `--disable`) and environment (`CODEX_HOME`); how a `-c` value is written is shared with
codex-exec (`harness_core.codex_cli.config_args`). Knows nothing of JSON-RPC or events.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from harness_core.codex_cli import config_args
from harness_core.provider import ProviderOptions
from pydantic import Field, field_validator, model_validator

__all__ = ["CodexAppServerOptions", "build_argv", "build_env"]


class CodexAppServerOptions(ProviderOptions):
    """`-o KEY=VALUE` options of `codex-appserver`."""

    codex_bin: str | None = Field(default=None, description="Path to `codex` (default: `codex` on PATH).")
    config: dict[str, Any] = Field(
        default_factory=dict,
        description="Codex config overrides, passed as `-c KEY=VALUE` (`-o config.KEY=V`).",
    )
    enable: list[str] = Field(default_factory=list, description="Codex features to enable (`--enable`).")
    disable: list[str] = Field(default_factory=list, description="Codex features to disable (`--disable`).")
    codex_home: str | None = Field(
        default=None, description="CODEX_HOME for the app-server (config, sessions)."
    )
    ephemeral: bool | None = Field(
        default=None,
        description="Start an ephemeral thread (no rollout on disk, cannot be resumed). Default: resumable.",
    )
    startup_timeout: float = Field(default=30.0, gt=0, description="Seconds for initialize + thread start.")
    request_timeout: float = Field(default=60.0, gt=0, description="Seconds for any other request.")
    interrupt_timeout: float = Field(
        default=5.0, gt=0, description="Seconds to wait for `turn/completed` after `turn/interrupt`."
    )

    @model_validator(mode="before")
    @classmethod
    def _fold_dotted_config(cls, data: Any) -> Any:
        """Accept `config.model=...` as a flat key too (how `-o config.KEY=VALUE` may arrive)."""
        if not isinstance(data, Mapping):
            return data
        folded: dict[str, Any] = {}
        config = dict(data.get("config") or {})
        for key, value in data.items():
            if isinstance(key, str) and key.startswith("config."):
                config[key[len("config.") :]] = value
            elif key != "config":
                folded[key] = value
        if config:
            folded["config"] = config
        return folded

    @field_validator("enable", "disable", mode="before")
    @classmethod
    def _split_features(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("config")
    @classmethod
    def _no_empty_keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        for key in value:
            if not key or key.strip() != key or "=" in key:
                raise ValueError(f"bad config key {key!r}: use a dotted Codex config path such as `model`")
        return value


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
