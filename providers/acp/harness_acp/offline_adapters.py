"""How Zed's two ACP adapters run offline: codex-acp and claude-agent-acp against Harness's scripted model backends.

Layer: provider configuration (harness-acp). Knows what each adapter needs to talk only to a loopback model API;
knows nothing of ACP messages or Harness events, and must not import the Codex or Claude providers (shared facts are
copied, each with a comment naming its source). Backends load only offline. Facts: providers/acp/docs/adapters.md.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness_core.provider import OfflineSetup
from harness_core.scripted.backends import MessagesBackend, MessagesDialect, ResponsesBackend, ResponsesDialect, ToolUse
from harness_core.scripted.scenarios import EditFile, ReadFile, RunCommand, Scenario, WriteFile

__all__ = [
    "CLAUDE_ENV_PINS",
    "CLAUDE_OTHER_APIS",
    "CODEX_ACP_CONFIG_TAKEN",
    "CODEX_ACP_DISABLED_FEATURES",
    "CODEX_ACP_PINS",
    "CODEX_ENV_PINS",
    "CODEX_ACP_KEY_ENV",
    "CODEX_ACP_MODEL",
    "ClaudeCodeAcpTools",
    "check_codex_acp_args",
    "claude_acp_env",
    "claude_acp_offline_setup",
    "codex_acp_args",
    "codex_acp_config",
    "codex_acp_offline_setup",
    "find_bwrap",
]

# -- codex-acp -----------------------------------------------------------------------------------------------

CODEX_ACP_MODEL = "gpt-5.5"
"""Mirrors `harness_codex_common.offline.OFFLINE_MODEL`: a slug from Codex's bundled catalogue, for which Codex
offers `exec_command` and the `apply_patch` custom tool (the Responses backend's default dialect)."""
CODEX_ACP_KEY_ENV = "HARNESS_MOCK_API_KEY"
"""Mirrors `harness_codex_common.offline.OFFLINE_KEY_ENV`: the loopback provider's `env_key` (any value works)."""
CODEX_ACP_DISABLED_FEATURES: tuple[str, ...] = ("unbounded_connection_retries", "plugins")
"""Mirrors `harness_codex_common.offline.OFFLINE_DISABLE`; codex-acp has no `--disable`, so each becomes
`-c features.NAME=false`."""


CODEX_ACP_PINS: dict[str, str] = {
    "model_provider": "chooses the model API Codex calls",
    "model_providers": "defines where a model API is",
    "profile": "selects a config profile, which can choose another model API",
    "profiles": "defines config profiles, which can choose another model API",
    "analytics": "would send Codex's usage metrics to ab.chatgpt.com (off offline)",
    "otel": "exports Codex's telemetry to a collector",
    "chatgpt_base_url": "is where Codex reaches ChatGPT's services",
    **{f"features.{feature}": "is off offline (plugin sync reaches the network; unbounded retries never end)"
       for feature in CODEX_ACP_DISABLED_FEATURES},
}
"""The config keys a `-c` in `-o args` may not set offline, each with why. Mirrors the `config.*` entries of
`harness_codex_common.offline.OFFLINE_PINS`."""
CODEX_ACP_CONFIG_TAKEN: tuple[str, ...] = (
    "model", "model_reasoning_effort", "model_reasoning_summary", "model_verbosity",
    "model_supports_reasoning_summaries", "model_context_window", "model_auto_compact_token_limit",
    "developer_instructions", "instructions", "approval_policy", "sandbox_mode",
    "sandbox_workspace_write.writable_roots", "sandbox_workspace_write.exclude_tmpdir_env_var",
    "sandbox_workspace_write.exclude_slash_tmp", "hide_agent_reasoning", "show_raw_agent_reasoning",
    "project_doc_max_bytes", "tool_output_token_limit", "history.persistence", "history.max_bytes", "file_opener",
)
"""The only config keys a `-c` in `-o args` may set offline (an allowlist: `mcp_servers`, `notify`, `tools`,
`*_base_url` and more reach something). Mirrors `harness_codex_common.offline.OFFLINE_CONFIG_TAKEN`."""
CODEX_ENV_PINS: dict[str, str] = {
    "CODEX_HOME": "is where Codex reads its config.toml, which can choose another model API",
    "CODEX_EXEC_SERVER_URL": "sends Codex's commands to a remote exec server",
}
"""Mirrors `harness_codex_common.offline.OFFLINE_ENV_PINS`."""


def codex_acp_config(base_url: str) -> dict[str, str]:
    """Config overrides (dotted key → TOML value) making Codex inside codex-acp use the Responses API at
    `base_url` (ending in `/v1`) as its only model provider, with no retries and the features above off.
    Mirrors `harness_codex_common.offline.offline_config`."""
    provider = (
        f'{{name="mock", base_url="{base_url}", wire_api="responses", env_key="{CODEX_ACP_KEY_ENV}", '
        "request_max_retries=0, stream_max_retries=0}"
    )
    config = {"model_provider": '"mock"', "model_providers.mock": provider, "model": f'"{CODEX_ACP_MODEL}"',
              "analytics.enabled": "false"}
    for feature in CODEX_ACP_DISABLED_FEATURES:
        config[f"features.{feature}"] = "false"
    return config


def codex_acp_args(base_url: str) -> list[str]:
    """`-c KEY=VALUE` for each of `codex_acp_config(base_url)`: append to the codex-acp command line."""
    args: list[str] = []
    for key, value in codex_acp_config(base_url).items():
        args += ["-c", f"{key}={value}"]
    return args


def check_codex_acp_args(options: Mapping[str, Any]) -> str | None:
    """`OfflineSetup.check_options` of codex-acp: `-o args` may hold only `-c KEY=VALUE` (codex-acp's one flag),
    no KEY at, under or above one of `CODEX_ACP_PINS` (a later `-c` wins over the offline one), and only a KEY of
    `CODEX_ACP_CONFIG_TAKEN`."""
    args = list(options.get("args") or ())
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-c", "--config") and i + 1 < len(args):
            pair, i = args[i + 1], i + 2
        elif arg.startswith("--config="):
            pair, i = arg[len("--config="):], i + 1
        elif arg.startswith("-c") and len(arg) > 2:
            pair, i = arg[2:], i + 1
        else:
            return (f"option args ({arg!r}) is not taken: offline, codex-acp's arguments may only be "
                    "`-c KEY=VALUE` config overrides")
        key = tuple(part.strip().strip('"') for part in pair.partition("=")[0].split("."))
        for pin, why in CODEX_ACP_PINS.items():
            split = tuple(pin.split("."))
            if key[:len(split)] == split or split[:len(key)] == key:
                return f"option args (-c {pair.partition('=')[0]}=...) is not taken: {pin} {why}"
        if ".".join(key) not in CODEX_ACP_CONFIG_TAKEN:
            return (f"option args (-c {pair.partition('=')[0]}=...) is not taken: offline, Codex takes only config "
                    f"keys that cannot reach anything ({', '.join(CODEX_ACP_CONFIG_TAKEN)}); this one is not among "
                    "them")
    return None


def find_bwrap() -> str | None:
    """A directory to put first on PATH so that codex-acp finds a `bwrap`, or None (a system bwrap is already on
    PATH, or none was found).

    The one looked for is the bwrap the `codex` npm package ships: `$HARNESS_TOOLS_DIR/bin/bwrap` (the link
    `scripts/install-clis.sh` makes), else `codex` on PATH (or in `$HARNESS_TOOLS_DIR/bin`) is resolved (symlinks
    followed) to its package's `bin/codex.js`, and `vendor/*/codex-resources/bwrap` is searched in that package and
    in its platform packages (`@openai/codex-<platform>`, beside it or nested under it). A `codex` on PATH that is the
    native binary itself (`vendor/<triple>/bin/codex`) is also understood.
    """
    if shutil.which("bwrap"):
        return None
    tools = os.environ.get("HARNESS_TOOLS_DIR")  # where scripts/install-clis.sh puts the pinned CLIs (and a bwrap)
    tools_bin = Path(tools) / "bin" if tools else None
    if tools_bin is not None and os.access(tools_bin / "bwrap", os.X_OK):
        return str(tools_bin)
    codex = shutil.which("codex")
    if codex is None and tools_bin is not None and os.access(tools_bin / "codex", os.X_OK):
        codex = str(tools_bin / "codex")
    if codex is None:
        return None
    real = Path(codex).resolve()
    package = real.parent.parent  # <package>/bin/codex.js, or vendor/<triple>/bin/codex
    patterns = [
        str(package / "codex-resources" / "bwrap"),  # the native binary: vendor/<triple>/{bin,codex-resources}
        str(package / "vendor" / "*" / "codex-resources" / "bwrap"),
        str(package.parent / "codex-*" / "vendor" / "*" / "codex-resources" / "bwrap"),
        str(package / "node_modules" / "@openai" / "codex-*" / "vendor" / "*" / "codex-resources" / "bwrap"),
    ]
    for pattern in patterns:
        for found in sorted(glob.glob(pattern)):
            if os.access(found, os.X_OK):
                return str(Path(found).parent)
    return None


def codex_acp_offline_setup(scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
    """codex-acp against a `ResponsesBackend` playing `scenario` (bound, not yet serving: the caller enters it):
    `provider_options["args"]` holds the `-c` overrides; the environment gives the key variable, an isolated
    CODEX_HOME (`state_dir/codex-home`) and HOME (`state_dir/home`: Codex runs commands as `bash -lc`), and PATH
    with `find_bwrap()`'s directory first when there is one."""
    backend = ResponsesBackend(scenario, cwd=workspace.resolve(), dialect=_CodexDialect())
    state_dir = state_dir.resolve()  # the adapter runs in the workspace: a relative CODEX_HOME is not found
    codex_home, home = state_dir / "codex-home", state_dir / "home"
    codex_home.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    env = {CODEX_ACP_KEY_ENV: "scripted-offline-key", "CODEX_HOME": str(codex_home), "HOME": str(home)}
    bwrap_dir = find_bwrap()
    if bwrap_dir is not None:
        env["PATH"] = os.pathsep.join([bwrap_dir, os.environ.get("PATH", os.defpath)])
    return OfflineSetup(backend=backend, provider_options={"args": codex_acp_args(backend.base_url)}, env=env,
                        pinned_options={}, pinned_env={**dict.fromkeys(env, "is set by the offline setup"),
                                                      **CODEX_ENV_PINS},
                        check_options=check_codex_acp_args)


# -- claude-agent-acp ----------------------------------------------------------------------------------------

_CWD_RE = re.compile(r"(?:Primary working directory|Working directory|CWD):\s*(/[^\n<]*)")


def _texts(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


class ClaudeCodeAcpTools(MessagesDialect):
    """Claude Code's tools as the Agent SDK offers them: Bash (`command`, `description`), Read, Write and Edit
    (`file_path`, absolute). Mirrors `harness_claude.offline.ClaudeCodeTools`."""

    def run_command(self, step: RunCommand, cwd: str | None) -> ToolUse:
        return ToolUse("Bash", {"command": step.command, "description": "Run a scripted command"})

    def read_file(self, step: ReadFile, cwd: str | None) -> ToolUse:
        return ToolUse("Read", {"file_path": self.path(step.path, cwd)})

    def write_file(self, step: WriteFile, cwd: str | None) -> ToolUse:
        return ToolUse("Write", {"file_path": self.path(step.path, cwd), "content": step.content})

    def edit_file(self, step: EditFile, cwd: str | None) -> ToolUse:
        return ToolUse(
            "Edit", {"file_path": self.path(step.path, cwd), "old_string": step.old, "new_string": step.new}
        )

    def find_cwd(self, body: Mapping[str, Any]) -> str | None:
        """The directory after `Primary working directory:` (or `CWD:`) in the system prompt or the first user
        message."""
        messages = body.get("messages") or []
        first = messages[0].get("content") if messages and isinstance(messages[0], dict) else None
        for text in (_texts(body.get("system")), _texts(first)):
            found = _CWD_RE.search(text)
            if found:
                return found.group(1).strip()
        return None

    def is_turn(self, body: Mapping[str, Any]) -> bool:
        """A turn carries the agent loop's `tools` or `thinking` keys; a call without them is a side call."""
        return "tools" in body or "thinking" in body


CLAUDE_OTHER_APIS: tuple[str, ...] = ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")
"""The switches of Claude Code 2.1.83 that send model calls to another API instead of ANTHROPIC_BASE_URL: "0"
offline. Mirrors `harness_claude.offline.OTHER_APIS` (2.1.328 has more)."""
CLAUDE_ENV_PINS: dict[str, str] = {
    "CLAUDE_CODE_PLUGIN_CACHE_DIR": "is where Claude Code keeps its plugin lists (fetched from the network when "
    "missing)",
    "CLAUDE_CODE_EXECUTABLE": "chooses the Claude Code the adapter runs",
    **{f"ANTHROPIC_{api}_BASE_URL": "is another model API Claude Code may call"
       for api in ("BEDROCK", "VERTEX", "FOUNDRY")},
}
"""Variables an offline claude-acp run holds fixed beyond those it sets. Mirrors `harness_claude.offline`."""


def claude_acp_env(backend: MessagesBackend, home: Path) -> dict[str, str]:
    """Environment for claude-agent-acp (and the Claude Code it spawns, which inherits it) to use `backend`
    only, with its state under `home`. Mirrors `harness_claude.offline.ClaudeCodeBackend.claude_env`."""
    return {
        "ANTHROPIC_BASE_URL": backend.url,
        "ANTHROPIC_API_KEY": "scripted-offline-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CLAUDE_CODE_TMPDIR": str(home / "tmp"),
        "IS_SANDBOX": "1",
        **dict.fromkeys(CLAUDE_OTHER_APIS, "0"),
    }


def _fresh_plugin_blocklist(config_dir: Path) -> Path:
    """An empty plugin blocklist fetched just now, in `config_dir` (CLAUDE_CONFIG_DIR)'s `plugins/blocklist.json`.

    The Claude Code 2.1.83 inside the adapter fetches that list from raw.githubusercontent.com at every start unless
    its copy is less than an hour old (CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC does not stop it): offline, this
    fresh copy stops the lookup."""
    path = config_dir / "plugins" / "blocklist.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    path.write_text(json.dumps({"fetchedAt": stamp, "plugins": []}))
    return path


def claude_acp_offline_setup(scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
    """claude-agent-acp against a `MessagesBackend` with Claude Code's dialect playing `scenario` (bound, not yet
    serving: the caller enters it), its home under `state_dir/home`. No provider options."""
    home = state_dir.resolve() / "home"
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    _fresh_plugin_blocklist(home / ".claude")
    backend = MessagesBackend(scenario, cwd=workspace.resolve(), dialect=ClaudeCodeAcpTools())
    env = claude_acp_env(backend, home)
    return OfflineSetup(backend=backend, env=env, pinned_options={},
                        pinned_env={**dict.fromkeys(env, "is set by the offline setup"), **CLAUDE_ENV_PINS})


_CODEX_ENVELOPE = re.compile(r"Wall time: [0-9.]+ seconds\nOutput:\n(.*)", re.S)


class _CodexDialect(ResponsesDialect):
    """The default Responses tools, reading a tool's result as codex wraps it for the model (`Wall time: …`,
    `Output:`, then the result, its content blocks as JSON: as `harness_codex_common.dialect`, which this
    distribution does not depend on)."""

    def tool_result_text(self, output: str) -> str:
        found = _CODEX_ENVELOPE.fullmatch(output)
        if found is None:
            return output
        inner = found.group(1)
        try:
            blocks = json.loads(inner)
        except ValueError:
            return inner
        texts = [b.get("text") for b in blocks if isinstance(b, dict) and b.get("type") == "text"] \
            if isinstance(blocks, list) else []
        return "".join(str(t) for t in texts) if texts and len(texts) == len(blocks) else inner
