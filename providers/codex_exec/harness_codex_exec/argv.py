"""The `codex exec` command line for a spec, and the options that shape it.

Layer: provider (codex-exec), pure. Knows the exec flags of codex 0.169.0 (checked against the real binary)
and `AgentRunSpec`; knows nothing of processes, events or the runner.

Observed facts this module relies on:
- `-C` and `-s` belong to `exec`, not to `exec resume`; given before `resume` they apply to the resumed
  thread too (the resumed turn's permissions follow the new `-s`).
- A system prompt goes in `-c developer_instructions=...` (a developer message ahead of the user turn);
  the `instructions` key is not sent by 0.169.0.
- `--` before the positionals lets a prompt start with `-`; for resume it goes after `resume`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import Field, field_validator, model_validator

from harness_core.codex_cli import config_args
from harness_core.provider import ProviderOptions
from harness_core.spec import AgentRunSpec

__all__ = ["CodexExecOptions", "build_argv", "redacted_argv", "toml_string"]


def _split_names(value: Any) -> Any:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class CodexExecOptions(ProviderOptions):
    """Options of the codex-exec provider (`-o KEY=VALUE`)."""

    codex_bin: str | None = Field(default=None, description="Path to the codex binary (default: PATH).")
    config: dict[str, Any] = Field(
        default_factory=dict,
        description="Extra `-c KEY=VALUE` overrides (`-o config.KEY=V`, dotted keys nest); VALUE is TOML (a bare "
        "word is taken as a string).",
    )
    enable: list[str] = Field(default_factory=list, description="Features to `--enable` (comma-separated).")
    disable: list[str] = Field(default_factory=list, description="Features to `--disable` (comma-separated).")
    codex_home: str | None = Field(default=None, description="CODEX_HOME for the run (sessions, config).")

    @model_validator(mode="before")
    @classmethod
    def _fold_dotted_config(cls, data: Any) -> Any:
        """Accept `config.model=...` as a flat key too (as codex-appserver does)."""
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

    @field_validator("config")
    @classmethod
    def _no_bad_keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        for key in value:
            if not key or key.strip() != key or "=" in key:
                raise ValueError(f"bad config key {key!r}: use a dotted Codex config path such as `model`")
        return value

    @field_validator("enable", "disable", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        return _split_names(value)

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


def toml_string(text: str) -> str:
    """`text` as a TOML basic string. JSON escapes are TOML escapes as long as non-ASCII stays literal
    (TOML rejects the surrogate pairs `ensure_ascii` would write)."""
    return json.dumps(text, ensure_ascii=False)


def build_argv(
    codex: str, spec: AgentRunSpec, options: CodexExecOptions, *, extra_config: Mapping[str, str] = {}
) -> list[str]:
    """`codex exec --json ... PROMPT` (or `... resume -- ID PROMPT`) for one run; stdin must be closed."""
    argv = [codex, "exec", "--json", "--skip-git-repo-check", "-C", str(spec.cwd), "-s", spec.sandbox.value]
    if spec.model is not None:
        argv += ["-m", spec.model]
    if spec.system_prompt:
        argv += ["-c", f"developer_instructions={toml_string(spec.system_prompt)}"]
    argv += config_args({**extra_config, **options.config})
    for feature in options.enable:
        argv += ["--enable", feature]
    for feature in options.disable:
        argv += ["--disable", feature]
    if spec.resume_session is not None:
        argv += ["resume", "--", spec.resume_session, spec.prompt]
    else:
        argv += ["--", spec.prompt]
    return argv


def redacted_argv(argv: list[str]) -> list[str]:
    """`argv` for a log line: every `-c KEY=VALUE` keeps its key but not its value (values may hold the system
    prompt or secrets), and the prompt (the last argument) is dropped."""
    out: list[str] = []
    for i, arg in enumerate(argv[:-1]):
        if i and argv[i - 1] == "-c":
            key, sep, _ = arg.partition("=")
            out.append(f"{key}=<redacted>" if sep else "<redacted>")
        else:
            out.append(arg)
    return out
