"""The Codex CLI as both Codex providers see it: how to find it and how to pass it config.

Layer: provider support shared by the Codex providers (codex-appserver, codex-exec), which drive the same CLI
but cannot import each other. The core runner never imports it. Knows the pinned Codex version, where npm puts
its native binary, the shared options and how a `-c KEY=` value is written; offline is `offline`'s job.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from harness_core.provider import CliInfo, ProviderOptions, probe_cli
from pydantic import Field, field_validator, model_validator

__all__ = [
    "CodexCliOptions",
    "INSTALL_HINT",
    "MIN_CODEX_VERSION",
    "NATIVE_GLOBS",
    "config_args",
    "flat_config",
    "probe_codex",
    "toml_value",
]

MIN_CODEX_VERSION = "0.169.0"
INSTALL_HINT = f"npm install -g @openai/codex@{MIN_CODEX_VERSION}"
NATIVE_GLOBS = (
    "node_modules/@openai/codex-linux-*/vendor/*/bin/codex",
    "node_modules/@openai/codex-darwin-*/vendor/*/bin/codex",
    "node_modules/@openai/codex/node_modules/@openai/codex-*/vendor/*/bin/codex",
)
"""From an npm prefix to the native binary: the node wrapper would orphan it when killed. The last glob (a
nested install) also covers `codex-linux-*` there."""


async def probe_codex(explicit: str | None) -> CliInfo:
    """The codex binary to run (`explicit`, the `codex_bin` option, else `codex` on PATH, resolved to its
    native binary) and its version, checked against `MIN_CODEX_VERSION`."""
    return await probe_cli(
        "codex",
        explicit,
        install_hint=INSTALL_HINT,
        option_name="codex_bin",
        minimum=MIN_CODEX_VERSION,
        native_globs=NATIVE_GLOBS,
    )


# -- config values ---------------------------------------------------------------------------------------


MAX_RECONNECTS = 5
"""How many times Codex may reconnect to its model API in one run before Harness ends the run (the
`max_reconnects` option). The same as Codex's own `stream_max_retries` default, so a retry policy Codex bounds
itself is never cut short; what it bounds is Codex's unbounded "waiting for network" mode (about 2.5 minutes
of backoff at 5)."""


class CodexCliOptions(ProviderOptions):
    """The options both Codex providers take (`-o KEY=VALUE`); each provider's own options model adds to it."""

    codex_bin: str | None = Field(default=None, description="Path to `codex` (default: `codex` on PATH).")
    config: dict[str, Any] = Field(
        default_factory=dict,
        description="Codex config overrides, passed as `-c KEY=VALUE` (`-o config.KEY=V`, dotted keys nest); "
        "VALUE is TOML (a bare word is taken as a string).",
    )
    enable: list[str] = Field(default_factory=list, description="Codex features to `--enable` (comma-separated).")
    disable: list[str] = Field(default_factory=list, description="Codex features to `--disable` (comma-separated).")
    codex_home: str | None = Field(default=None, description="CODEX_HOME for the run (config, sessions).")
    max_reconnects: int = Field(
        default=MAX_RECONNECTS,
        ge=0,
        description="How many times Codex may reconnect to its model API in one run (each one a `reconnecting` "
        "notice) before Harness ends the run as a model error; 5 is Codex's own retry default.",
    )

    @model_validator(mode="before")
    @classmethod
    def _fold_dotted_config(cls, data: Any) -> Any:
        """Accept `config.model=...` as a flat key too (how `-o config.KEY=VALUE` may arrive)."""
        if not isinstance(data, Mapping):
            return data
        folded: dict[str, Any] = {}
        config = data.get("config") or {}
        config = dict(config) if isinstance(config, Mapping) else config
        for key, value in data.items():
            if isinstance(key, str) and key.startswith("config.") and isinstance(config, dict):
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

    @field_validator("config", mode="before")
    @classmethod
    def _pairs(cls, value: Any) -> Any:
        """Also accept `KEY=VALUE` strings (one, or a list) as given on a command line."""
        items = [value] if isinstance(value, str) else value
        if isinstance(items, list):
            pairs: dict[str, str] = {}
            for item in items:
                key, sep, val = str(item).partition("=")
                if not sep or not key.strip():
                    raise ValueError(f"expected KEY=VALUE, got {item!r}")
                pairs[key.strip()] = val
            return pairs
        return value

    @field_validator("config")
    @classmethod
    def _no_bad_keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        for key in value:
            if not key or key.strip() != key or "=" in key:
                raise ValueError(f"bad config key {key!r}: use a dotted Codex config path such as `model`")
        return value


def toml_value(value: Any) -> str:
    """A Python value as the TOML text Codex parses after `-c KEY=` (strings pass through: Codex falls back
    to the literal string when the text is not TOML)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        inner = ", ".join(f"{k} = {_toml_item(v)}" for k, v in value.items())
        return f"{{{inner}}}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_item(v) for v in value) + "]"
    raise ValueError(f"cannot pass {value!r} as a Codex config value")


def _toml_item(value: Any) -> str:
    return json.dumps(value) if isinstance(value, str) else toml_value(value)


def flat_config(config: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """Nested tables as dotted keys (`{"tools": {"web_search": "true"}}` → `tools.web_search`), so each leaf
    reaches Codex as its own `-c KEY=VALUE` and Codex parses the value itself (`true` is a boolean there)."""
    flat: list[tuple[str, Any]] = []
    for key, value in config.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.extend(flat_config(value, f"{dotted}."))
        else:
            flat.append((dotted, value))
    return flat


def config_args(config: Mapping[str, Any]) -> list[str]:
    """`-c KEY=VALUE` arguments for a config mapping: nested mappings as dotted keys, values through
    `toml_value`."""
    args: list[str] = []
    for key, value in flat_config(config):
        args += ["-c", f"{key}={toml_value(value)}"]
    return args

