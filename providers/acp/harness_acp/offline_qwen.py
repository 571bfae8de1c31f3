"""How the real Qwen Code (`qwen --acp`) runs offline: against Harness's scripted Chat Completions backend on 127.0.0.1.

Layer: provider configuration (harness-acp). Knows Qwen Code's tool dialect, its side calls, and the environment and
isolated `settings.json` that keep it on the loopback API with no login; knows nothing of ACP messages or Harness
events; importing it starts nothing. Observed facts (0.24.4): providers/acp/docs/qwen.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness_core.provider import OfflineSetup
from harness_core.scripted.backends import ChatCompletionsBackend, ChatDialect, FunctionCall
from harness_core.scripted.scenarios import EditFile, ReadFile, RunCommand, Scenario, WriteFile

__all__ = [
    "ENV_PINS",
    "MAIN_PROMPT_PREFIX",
    "SCHEMA_TOOL",
    "OFFLINE_MODEL",
    "QwenCodeTools",
    "offline_settings",
    "offline_setup",
    "qwen_env",
    "write_settings",
]

OFFLINE_MODEL = "scripted-model"
"""The model name Qwen Code is told to use (any name works with auth type `openai`)."""

MAIN_PROMPT_PREFIX = "You are Qwen Code"
"""How the agent loop's system prompt starts; background subagents (memory extraction) have prompts of their own."""

SCHEMA_TOOL = "respond_in_schema"
"""The one tool a structured side query offers (with `tool_choice: "required"`); its arguments are the answer."""


def _zero_value(schema: Mapping[str, Any]) -> Any:
    """The plainest value a JSON schema accepts: an object of its required properties, False, 0, "", [] or the
    first enum value."""
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: _zero_value(properties.get(name) or {}) for name in schema.get("required") or []}
    return {"boolean": False, "integer": 0, "number": 0, "array": []}.get(str(kind), "")


def _system_text(body: Mapping[str, Any]) -> str:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not isinstance(messages[0], dict):
        return ""
    first = messages[0]
    if first.get("role") != "system":
        return ""
    content = first.get("content")
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


class QwenCodeTools(ChatDialect):
    """Qwen Code 0.24.4's tools: `run_shell_command {command, description}`, `read_file {file_path}`,
    `write_file {file_path, content}` and `edit {file_path, old_string, new_string}`, paths absolute."""

    def run_command(self, step: RunCommand, cwd: str | None) -> FunctionCall:
        return FunctionCall("run_shell_command", {"command": step.command, "description": "Run a scripted command"})

    def read_file(self, step: ReadFile, cwd: str | None) -> FunctionCall:
        return FunctionCall("read_file", {"file_path": self.path(step.path, cwd)})

    def write_file(self, step: WriteFile, cwd: str | None) -> FunctionCall:
        return FunctionCall("write_file", {"file_path": self.path(step.path, cwd), "content": step.content})

    def edit_file(self, step: EditFile, cwd: str | None) -> FunctionCall:
        return FunctionCall(
            "edit", {"file_path": self.path(step.path, cwd), "old_string": step.old, "new_string": step.new}
        )

    def is_turn(self, body: Mapping[str, Any]) -> bool:
        """A turn is a call with the agent loop's system prompt; a subagent of its own (memory extraction), the
        auto mode's permission classifier or a bare call without a system prompt is a side call."""
        return _system_text(body).startswith(MAIN_PROMPT_PREFIX)

    def side_reply(self, body: Mapping[str, Any]) -> str | FunctionCall:
        """A side call that forces `respond_in_schema` (structured side queries: the auto mode's classifier asks
        `{"shouldBlock": bool}`) gets a call to it with the schema's required fields at their zero values (so
        the classifier allows); any other side call gets the default text."""
        for tool in body.get("tools") or []:
            function = tool.get("function") if isinstance(tool, dict) else None
            if isinstance(function, dict) and function.get("name") == SCHEMA_TOOL:
                value = _zero_value(function.get("parameters") or {})
                return FunctionCall(SCHEMA_TOOL, value if isinstance(value, dict) else {})
        return super().side_reply(body)


def offline_settings() -> dict[str, Any]:
    """The user settings (`~/.qwen/settings.json`) of an offline run: auth type `openai`, the scripted model, no
    retries, no telemetry, usage statistics, auto-update, IDE integration, background memory agents, suggestions
    or skills (the bundled ones add ~550 KB to every `available_commands_update` and a list to every prompt), and
    the `default` approval mode (edits and most commands ask; `auto` would ask an LLM classifier first); the model's
    input modalities say it takes images."""
    return {
        "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": False}},
        "model": {
            "name": OFFLINE_MODEL,
            "skipNextSpeakerCheck": True,
            "skipLoopDetection": True,
            # the scripted model stands for a vision model: Qwen Code drops an image for a model it does not know
            # takes images (an unknown name is text-only)
            "generationConfig": {"maxRetries": 0, "modalities": {"image": True}},
        },
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False},
        "ide": {"enabled": False},
        "tools": {"approvalMode": "default"},
        "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False, "enableAutoSkill": False},
        "ui": {"enableFollowupSuggestions": False, "enableUserFeedback": False},
        "skills": {"disabledLevels": ["bundled", "extension", "user", "project"]},
    }


def write_settings(home: Path) -> Path:
    """Write `offline_settings()` to `home/.qwen/settings.json` (creating the directories); returns the path."""
    path = home / ".qwen" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(offline_settings(), indent=2) + "\n")
    return path


def qwen_env(backend: ChatCompletionsBackend, home: Path) -> dict[str, str]:
    """Environment for `qwen --acp` to use `backend` only, with its state isolated under `home` (write the settings
    there with `write_settings`)."""
    return {
        "HOME": str(home),
        "TMPDIR": str(home / "tmp"),
        "OPENAI_API_KEY": "scripted-offline-key",
        "OPENAI_BASE_URL": backend.base_url,
        "OPENAI_MODEL": OFFLINE_MODEL,
        "QWEN_USAGE_STATISTICS_ENABLED": "false",
        "QWEN_TELEMETRY_ENABLED": "false",
        "QWEN_DISABLE_AUTO_TITLE": "1",
        "QWEN_CODE_DISABLE_PRECONNECT": "1",
        "QWEN_CODE_UNATTENDED_RETRY": "false",  # "true" retries a 429 for up to 6 hours
        "QWEN_CODE_NO_RELAUNCH": "1",  # no third process re-run with a bigger heap; initialize ~2 s sooner
    }


ENV_PINS: dict[str, str] = {
    "QWEN_HOME": "is where Qwen Code reads its settings, which choose the model API",
    "QWEN_CODE_SYSTEM_SETTINGS_PATH": "is where Qwen Code reads system settings, which win over the offline ones",
    "QWEN_CODE_SYSTEM_DEFAULTS_PATH": "is where Qwen Code reads default settings",
    "QWEN_DEFAULT_AUTH_TYPE": "chooses how Qwen Code signs in, and so which API it calls",
    "QWEN_OAUTH_BASE_URL": "is where Qwen Code signs in",
    "QWEN_DAEMON_URL": "sends Qwen Code's work to a daemon",
    "QWEN_TELEMETRY_OTLP_ENDPOINT": "is where Qwen Code exports telemetry",
    "QWEN_TELEMETRY_TARGET": "chooses where Qwen Code exports telemetry",
}
"""Variables an offline run holds fixed beyond those it sets (`OfflineSetup.pinned_env`), each with why."""


def _no_system_settings(home: Path) -> dict[str, str]:
    """The system settings and defaults Qwen Code reads (which win over the offline ones: an `env`, MCP servers, a
    model provider) pointed at empty files under `home`, whatever the user's shell or the machine's /etc has."""
    empty = home / "system-settings.json"
    empty.write_text("{}\n")
    return {"QWEN_CODE_SYSTEM_SETTINGS_PATH": str(empty), "QWEN_CODE_SYSTEM_DEFAULTS_PATH": str(empty)}


def offline_setup(scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
    """A `ChatCompletionsBackend` with Qwen Code's tools playing `scenario` (bound, not yet serving: the caller enters
    it), its settings written under `state_dir/home`, and the environment pointing `qwen --acp` at it."""
    home = state_dir / "home"
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    write_settings(home)
    backend = ChatCompletionsBackend(scenario, cwd=workspace, dialect=QwenCodeTools())
    env = {**qwen_env(backend, home), **_no_system_settings(home)}
    return OfflineSetup(backend=backend, provider_options={}, env=env, pinned_options={},
                        pinned_env={**dict.fromkeys(env, "is set by the offline setup"), **ENV_PINS})
