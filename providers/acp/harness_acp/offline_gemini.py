"""How the real Gemini CLI (`gemini --acp`) runs offline: against Harness's scripted Gemini API on 127.0.0.1.

Layer: provider configuration (harness-acp). Knows the Gemini CLI's tool dialect, its side calls, and the
environment and `settings.json` that keep it on the loopback backend; knows nothing of ACP messages or Harness
events and imports no other harness_acp module. Observed facts (0.61.0): providers/acp/docs/gemini.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness_core.provider import OfflineSetup
from harness_core.scripted.backends import FunctionCall, GeminiBackend, GeminiDialect
from harness_core.scripted.scenarios import EditFile, ReadFile, RunCommand, Scenario, WriteFile

__all__ = ["ENV_PINS", "GEMINI_SETTINGS", "GeminiCliTools", "gemini_env", "offline_setup", "write_settings"]

API_KEY = "scripted-offline-key"

GEMINI_SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "general": {
        "enableAutoUpdate": False,
        "enableAutoUpdateNotification": False,
        "maxAttempts": 1,
        "retryFetchErrors": False,
        "checkpointing": {"enabled": False},
    },
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "ide": {"enabled": False},
}
"""`~/.gemini/settings.json` for offline runs: API-key auth (no login), no folder-trust prompt, no update check,
one attempt per model call (a scripted failure fails at once), no usage statistics, telemetry or IDE link."""

_WORKSPACE_RE = re.compile(r"Workspace Directories:\*\*\s*\n\s*-\s*(/[^\n]*)")


def _texts(content: object) -> str:
    if isinstance(content, Mapping):
        parts = content.get("parts")
        if isinstance(parts, list):
            return "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, Mapping))
    return ""


class GeminiCliTools(GeminiDialect):
    """The Gemini CLI's tools: `run_shell_command` (`command`, `description`), `read_file`, `write_file` and
    `replace` (`file_path` absolute; `replace` also `instruction`, `old_string`, `new_string`)."""

    def run_command(self, step: RunCommand, cwd: str | None) -> FunctionCall:
        return FunctionCall("run_shell_command", {"command": step.command, "description": "Run a scripted command"})

    def read_file(self, step: ReadFile, cwd: str | None) -> FunctionCall:
        return FunctionCall("read_file", {"file_path": self.path(step.path, cwd)})

    def write_file(self, step: WriteFile, cwd: str | None) -> FunctionCall:
        return FunctionCall("write_file", {"file_path": self.path(step.path, cwd), "content": step.content})

    def edit_file(self, step: EditFile, cwd: str | None) -> FunctionCall:
        return FunctionCall("replace", {
            "file_path": self.path(step.path, cwd),
            "instruction": f"Replace {step.old!r} with {step.new!r}.",
            "old_string": step.old,
            "new_string": step.new,
        })

    def find_cwd(self, body: Mapping[str, Any]) -> str | None:
        """The first of the "Workspace Directories" in the session context that opens the first user content."""
        contents = body.get("contents")
        first = contents[0] if isinstance(contents, list) and contents else None
        found = _WORKSPACE_RE.search(_texts(first))
        return found.group(1).strip() if found else None

    def is_turn(self, body: Mapping[str, Any], model: str) -> bool:
        """A turn offers the agent loop's `tools`; a call without them (the routing classifier, a next-speaker or
        loop check, a summary) is a side call."""
        return "tools" in body


GEMINI_CLI_TOOLS = GeminiCliTools()


def write_settings(home: Path, settings: Mapping[str, Any] = GEMINI_SETTINGS) -> Path:
    """Write `settings` as `home/.gemini/settings.json` (the user settings of a CLI whose HOME is `home`)."""
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2) + "\n")
    return path


def gemini_env(backend: GeminiBackend, home: Path) -> dict[str, str]:
    """Environment for `gemini` to use `backend` only, with its state under `home` (write the settings there
    with `write_settings`)."""
    return {
        "GEMINI_API_KEY": API_KEY,
        "GOOGLE_GEMINI_BASE_URL": backend.url,
        "HOME": str(home),
        "GEMINI_CLI_HOME": str(home),
        "GEMINI_CLI_NO_RELAUNCH": "true",
        "GEMINI_SANDBOX": "false",
        "GEMINI_TELEMETRY_ENABLED": "false",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
        "NO_BROWSER": "true",
    }


ENV_PINS: dict[str, str] = {
    "GEMINI_CLI_SYSTEM_SETTINGS_PATH": "is where the Gemini CLI reads system settings, which win over the offline "
    "ones",
    "GEMINI_CLI_SYSTEM_DEFAULTS_PATH": "is where the Gemini CLI reads default settings",
    "GEMINI_DEFAULT_AUTH_TYPE": "chooses how the Gemini CLI signs in, and so which API it calls",
    "GOOGLE_GENAI_USE_VERTEXAI": "sends the model calls to Vertex AI",
    "GOOGLE_GENAI_USE_GCA": "sends the model calls to Code Assist",
    "GOOGLE_VERTEX_BASE_URL": "is another model API the Gemini CLI may call",
    "GEMINI_TELEMETRY_OTLP_ENDPOINT": "is where the Gemini CLI exports telemetry",
    "GEMINI_TELEMETRY_TARGET": "chooses where the Gemini CLI exports telemetry",
}
"""Variables an offline run holds fixed beyond those it sets (`OfflineSetup.pinned_env`), each with why."""


def offline_setup(scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
    """A `GeminiBackend` with the Gemini CLI's tools playing `scenario` (bound, not yet serving: the caller
    enters it), the settings written under `state_dir/home`, and the environment pointing the CLI at it."""
    home = state_dir / "home"
    home.mkdir(parents=True, exist_ok=True)
    write_settings(home)
    backend = GeminiBackend(scenario, cwd=workspace, dialect=GEMINI_CLI_TOOLS)
    empty = home / "system-settings.json"  # the machine's /etc/gemini-cli or the shell's: not read offline
    empty.write_text("{}\n")
    env = {**gemini_env(backend, home), "GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(empty),
           "GEMINI_CLI_SYSTEM_DEFAULTS_PATH": str(empty)}
    return OfflineSetup(backend=backend, provider_options={}, env=env, pinned_options={},
                        pinned_env={**dict.fromkeys(env, "is set by the offline setup"), **ENV_PINS})
