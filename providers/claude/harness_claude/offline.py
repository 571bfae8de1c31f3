"""How the real `claude` runs offline: against Harness's scripted Anthropic Messages backend on 127.0.0.1.

Layer: provider configuration. Knows what Claude Code needs to talk only to a loopback model API (its tool
dialect, environment, no retries, no settings files, the pins). Imported only by `ClaudeProvider.offline_setup`
(and tests), so a normal run never loads the backends. Details and side calls: providers/claude/README.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness_core.provider import OfflineSetup
from harness_core.scripted.backends import MessagesBackend, MessagesDialect, ToolUse, Turn
from harness_core.scripted.scenarios import EditFile, ReadFile, RunCommand, Scenario, WriteFile

__all__ = ["CLAUDE_CODE_TOOLS", "OFFLINE_ENV_PINS", "OFFLINE_OPTIONS", "OFFLINE_PINS", "OTHER_APIS",
           "ClaudeCodeBackend", "ClaudeCodeTools", "check_offline_options", "offline_setup"]

OFFLINE_OPTIONS: dict[str, Any] = {
    "max_retries": 0,
    "setting_sources": "",
}
"""No retries (a scripted failure fails at once, not after ~3 minutes of backoff), and no settings files, so
hooks and permission rules from the directories around the workspace take no part. Not `--bare`: with it,
Claude Code 2.1.328 offers no Write tool, and scenarios that write a file would fail."""

OTHER_APIS: tuple[str, ...] = (
    "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY", "CLAUDE_CODE_USE_ANTHROPIC_AWS",
    "CLAUDE_CODE_USE_ANTHROPIC_GOOGLE_CLOUD", "CLAUDE_CODE_USE_GATEWAY", "CLAUDE_CODE_USE_MANTLE",
)
"""The switches of 2.1.328 that send model calls to another API (Bedrock, Vertex, ...) instead of
ANTHROPIC_BASE_URL: set to "0" offline, so that one exported in the user's shell does not take the run there."""

OFFLINE_PINS: dict[str, str] = {
    "setting_sources": "chooses the settings files Claude Code reads, whose `env` can set ANTHROPIC_BASE_URL",
}
"""The options an offline run holds fixed (`OfflineSetup.pinned_options`); `extra_args` is refused by
`check_offline_options`."""

OFFLINE_ENV_PINS: dict[str, str] = {
    "ANTHROPIC_BASE_URL": "is the model API Claude Code calls",
    "CLAUDE_CONFIG_DIR": "is where Claude Code reads its settings, whose `env` can set ANTHROPIC_BASE_URL",
    "HOME": "is where Claude Code finds its configuration",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "stops Claude Code's other traffic (updates, telemetry)",
    "CLAUDE_CODE_PLUGIN_CACHE_DIR": "is where Claude Code keeps its plugin lists (fetched from the network when "
    "missing)",
    **dict.fromkeys(OTHER_APIS, "sends the model calls to another API"),
    **{f"ANTHROPIC_{api}_BASE_URL": "is another model API Claude Code may call"
       for api in ("BEDROCK", "VERTEX", "FOUNDRY", "AWS", "GOOGLE_CLOUD", "BEDROCK_MANTLE")},
}
"""The variables an offline run holds fixed (`OfflineSetup.pinned_env`), each with why."""

STRUCTURED_TOOL = "StructuredOutput"
"""The tool Claude Code 2.1.328 offers with `--json-schema`: its input is the answer."""

_CWD_RE = re.compile(r"(?:Primary working directory|Working directory|CWD):\s*(/[^\n<]*)")


def _texts(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


class ClaudeCodeTools(MessagesDialect):
    """Claude Code's tools: Bash (`command`, `description`), Read, Write and Edit (`file_path`, absolute)."""

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
        """`CWD:` in the system prompt (`--bare`), or "Primary working directory:" in the environment reminder
        of the first user message."""
        messages = body.get("messages") or []
        first = messages[0].get("content") if messages and isinstance(messages[0], dict) else None
        for text in (_texts(body.get("system")), _texts(first)):
            found = _CWD_RE.search(text)
            if found:
                return found.group(1).strip()
        return None

    def is_turn(self, body: Mapping[str, Any]) -> bool:
        """A turn carries the agent loop's `tools` (even `[]`, as with `--tools ""`) or `thinking` keys; a
        bare call without them (a title, a summary) is a side call."""
        return "tools" in body or "thinking" in body


CLAUDE_CODE_TOOLS = ClaudeCodeTools()


class ClaudeCodeBackend(MessagesBackend):
    """A `MessagesBackend` that speaks to Claude Code: its tool dialect, and the environment to point it here.

    Without `cwd`, the working directory comes from Claude Code's own prompt. With `--json-schema` Claude Code
    2.1.328 offers a `StructuredOutput` tool and takes the answer only from a call to it (a text answer is asked
    for again once, then the turn ends with the text, unparsed): a scripted answer that is a JSON object is
    given as that call when the tool is offered, as a real model does.
    """

    def __init__(self, scenario: Scenario, cwd: str | Path | None = None) -> None:
        super().__init__(scenario, cwd=cwd, dialect=CLAUDE_CODE_TOOLS)
        self._structured: set[int] = set()

    def _blocks(self, turn: Turn, body: Mapping[str, Any]) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = super()._blocks(turn, dict(body))
        offered = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
        last = blocks[-1] if blocks else {}
        if STRUCTURED_TOOL in offered and last.get("type") == "text":
            try:
                value = json.loads(last["text"])
            except ValueError:
                return blocks
            if isinstance(value, dict):
                blocks[-1] = {"type": "tool_use", "id": f"toolu_{turn.index:04d}", "name": STRUCTURED_TOOL,
                              "input": value}
                self._structured.add(turn.index)
        return blocks

    def _stop_reason(self, turn: Turn) -> str:  # type: ignore[override]  # a staticmethod in the base
        return "tool_use" if turn.index in self._structured else MessagesBackend._stop_reason(turn)

    def claude_env(self, home: Path) -> dict[str, str]:
        """Environment for `claude` to use this backend only, with its state isolated under `home`."""
        return {
            "ANTHROPIC_BASE_URL": self.url,
            "ANTHROPIC_API_KEY": "scripted-offline-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "CLAUDE_CODE_TMPDIR": str(home / "tmp"),
            **dict.fromkeys(OTHER_APIS, "0"),
        }


def check_offline_options(options: Mapping[str, Any]) -> str | None:
    """`extra_args` is refused offline: Claude Code's own flags (`--settings`, `--setting-sources`, ...) can point
    it at another model API, and an offline run does not judge them one by one."""
    if options.get("extra_args"):
        return ("option extra_args is not taken: Claude Code's own flags (--settings, --setting-sources, ...) can "
                "point it at another model API")
    return None


def offline_setup(scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
    """A `ClaudeCodeBackend` playing `scenario` (bound, not yet serving: the caller enters it), the options
    above, and the environment pointing Claude Code at it with its home under `state_dir/home`."""
    home = state_dir / "home"
    home.mkdir(parents=True, exist_ok=True)
    backend = ClaudeCodeBackend(scenario, cwd=workspace)
    return OfflineSetup(backend=backend, provider_options=dict(OFFLINE_OPTIONS), env=backend.claude_env(home),
                        pinned_options=OFFLINE_PINS, pinned_env=OFFLINE_ENV_PINS,
                        check_options=check_offline_options)
