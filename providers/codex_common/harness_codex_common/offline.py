"""Codex offline: the real `codex` against Harness's scripted Responses backend on 127.0.0.1.

Layer: provider support shared by the Codex providers. Knows what Codex needs to talk only to a loopback
Responses API, and which options and variables would undo that (refused offline). The backend is imported only
inside `offline_setup`, so importing a Codex provider does not load it. Details: providers/codex_common/README.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_core.provider import OfflineSetup

from harness_codex_common.cli import flat_config

if TYPE_CHECKING:
    from harness_core.scripted.backends import ResponsesBackend
    from harness_core.scripted.scenarios import Scenario

__all__ = [
    "OFFLINE_CONFIG_TAKEN",
    "OFFLINE_DISABLE",
    "OFFLINE_ENV_PINS",
    "OFFLINE_KEY_ENV",
    "OFFLINE_MODEL",
    "OFFLINE_PINS",
    "check_offline_options",
    "config_key_refusal",
    "offline_args",
    "offline_config",
    "offline_env",
    "offline_options",
    "offline_setup",
]

OFFLINE_MODEL = "gpt-5.5"
"""A slug from Codex's bundled model catalogue: only for such a model does Codex offer `exec_command` and
`apply_patch` (an unknown slug gets other tools, which the backend's default dialect does not play)."""
OFFLINE_CATALOG = Path(__file__).with_name("offline-models.json")
"""The model catalogue offline runs use (`model_catalog_json`): codex 0.169.0's bundled `gpt-5.5` entry (`codex
debug models --bundled`) with `supports_search_tool` false and `tool_mode` direct, so a run's MCP tools are in each
request's tool list (a `mcp__SERVER` namespace), not deferred behind `tool_search`: the scripted model calls a tool
by name, as it finds it there."""
OFFLINE_KEY_ENV = "HARNESS_MOCK_API_KEY"
"""The `env_key` of the loopback model provider: Codex refuses to call it unless this variable is set (the
backend accepts any value)."""
OFFLINE_DISABLE: tuple[str, ...] = ("unbounded_connection_retries", "plugins")
"""Codex features to `--disable` offline: without the first a refused connection is retried forever; the
second silences plugin sync, which has nothing to reach offline."""


OFFLINE_PINS: dict[str, str] = {
    "config.model_provider": "chooses the model API Codex calls",
    "config.model_providers": "defines where a model API is",
    "config.profile": "selects a config profile, which can choose another model API",
    "config.profiles": "defines config profiles, which can choose another model API",
    "config.analytics": "would send Codex's usage metrics to ab.chatgpt.com (off offline)",
    "config.otel": "exports Codex's telemetry to a collector",
    "config.chatgpt_base_url": "is where Codex reaches ChatGPT's services",
    "config.features.plugins": "turns on plugin sync, which reaches the network (off offline)",
    "codex_home": "is where Codex reads its config.toml, which can choose another model API",
}
"""The options an offline run holds fixed (`OfflineSetup.pinned_options`), each with why: every one decides where
Codex connects. The rest of `-o config.*` merges into the offline config."""
OFFLINE_ENV_PINS: dict[str, str] = {
    "CODEX_HOME": "is where Codex reads its config.toml, which can choose another model API",
    "CODEX_EXEC_SERVER_URL": "sends Codex's commands to a remote exec server",
}
"""The variables an offline run holds fixed (`OfflineSetup.pinned_env`), each with why."""
OFFLINE_CONFIG_TAKEN: tuple[str, ...] = (
    "model", "model_reasoning_effort", "model_reasoning_summary", "model_verbosity",
    "model_supports_reasoning_summaries", "model_context_window", "model_auto_compact_token_limit",
    "developer_instructions", "instructions", "approval_policy", "sandbox_mode",
    "sandbox_workspace_write.writable_roots", "sandbox_workspace_write.exclude_tmpdir_env_var",
    "sandbox_workspace_write.exclude_slash_tmp", "hide_agent_reasoning", "show_raw_agent_reasoning",
    "project_doc_max_bytes", "tool_output_token_limit", "history.persistence", "history.max_bytes", "file_opener",
)
"""The only `config.*` keys an offline run takes (an allowlist: Codex has many keys that reach something —
`mcp_servers`, `notify`, `tools`, `*_base_url`, `experimental_*` — and a new version adds more); each shapes the
model's answer, the sandbox or local files, never a connection. Mirrored by `harness_acp.offline_adapters`."""


def offline_config(backend: ResponsesBackend) -> dict[str, str]:
    """The config overrides (dotted key → TOML value, each passed as `-c KEY=VALUE`) that make Codex use
    `backend` as its only model provider, with no request or stream retries, and no analytics (`codex exec`
    0.169.0 sends metrics to ab.chatgpt.com unless `analytics.enabled` is false)."""
    provider = (
        f'{{name="mock", base_url="{backend.base_url}", wire_api="responses", env_key="{OFFLINE_KEY_ENV}", '
        "request_max_retries=0, stream_max_retries=0}"
    )
    return {"model_provider": '"mock"', "model_providers.mock": provider, "model": f'"{OFFLINE_MODEL}"',
            "analytics.enabled": "false", "model_catalog_json": json.dumps(str(OFFLINE_CATALOG))}


def check_offline_options(options: Mapping[str, Any]) -> str | None:
    """What `OfflineSetup.check_options` refuses beyond the pinned paths: a `config` key not in
    `OFFLINE_CONFIG_TAKEN`, and `enable` of a feature offline runs turn off (`OFFLINE_DISABLE`: plugin sync
    reaches the network, unbounded retries never end)."""
    for key, _ in flat_config(options.get("config") or {}):
        refusal = config_key_refusal(key)
        if refusal is not None:
            return f"option config.{refusal}"
    enabled = [f for f in options.get("enable") or () if f in OFFLINE_DISABLE]
    if enabled:
        return (f"option enable={','.join(enabled)} is not taken: an offline run turns "
                f"{' and '.join(enabled)} off (plugin sync reaches the network; unbounded retries never end)")
    return None


def config_key_refusal(key: str) -> str | None:
    """Why an offline run does not take the dotted Codex config `key` ("KEY is not taken: ..."), or None when it is
    one of `OFFLINE_CONFIG_TAKEN` (parts compared without TOML quotes)."""
    path = ".".join(part.strip().strip('"').strip("'") for part in key.split("."))
    if path in OFFLINE_CONFIG_TAKEN:
        return None
    return (f"{key} is not taken: offline, Codex takes only config keys that cannot reach anything "
            f"({', '.join(OFFLINE_CONFIG_TAKEN)}); this one is not among them")


def offline_args(backend: ResponsesBackend) -> list[str]:
    """`--disable FEATURE` for each of `OFFLINE_DISABLE`, then `-c KEY=VALUE` for each of `offline_config`:
    splice into a `codex exec` or `codex app-server` command line."""
    args: list[str] = []
    for feature in OFFLINE_DISABLE:
        args += ["--disable", feature]
    for key, value in offline_config(backend).items():
        args += ["-c", f"{key}={value}"]
    return args


def offline_env() -> dict[str, str]:
    """The environment Codex needs to call the loopback provider (its key variable; any value is accepted)."""
    return {OFFLINE_KEY_ENV: "scripted-offline-key"}


def offline_options(backend: ResponsesBackend, codex_home: Path) -> dict[str, Any]:
    """Provider options (`CodexCliOptions` fields) pointing codex at `backend`, with `codex_home` (created) as
    CODEX_HOME."""
    codex_home.mkdir(parents=True, exist_ok=True)
    return {"config": offline_config(backend), "disable": list(OFFLINE_DISABLE), "codex_home": str(codex_home)}


def offline_setup(scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
    """The real codex against a `ResponsesBackend` playing `scenario` (bound, not yet serving: the caller
    enters it), with its own CODEX_HOME and HOME under `state_dir`."""
    from harness_core.scripted.backends import ResponsesBackend

    from harness_codex_common.dialect import CodexDialect

    backend = ResponsesBackend(scenario, cwd=workspace, dialect=CodexDialect())  # its url is bound before it serves
    options = offline_options(backend, state_dir / "codex-home")
    env = {**offline_env(), **_isolated_home(state_dir)}
    return OfflineSetup(backend=backend, provider_options=options, env=env, pinned_options=OFFLINE_PINS,
                        pinned_env=OFFLINE_ENV_PINS, check_options=check_offline_options)


def _isolated_home(state_dir: Path) -> dict[str, str]:
    """Codex runs every command as `bash -lc`: with the user's HOME, each command sources their dotfiles
    (slow, noisy, and not reproducible). Offline and test runs get an empty home of their own."""
    home = state_dir / "home"
    home.mkdir(parents=True, exist_ok=True)
    return {"HOME": str(home)}
