"""The app-server message shapes (codex-cli 0.169.0) that the fake app-server sends: threads, turns, items, usage.

Layer: testing. Pure builders of plain dicts (stdlib only), copied from real transcripts and checked against
`codex app-server generate-json-schema` by the codex-appserver tests, apart from `server` and `player` so that those
hold only the protocol's behaviour. Knows nothing of Harness providers or events.
"""

from __future__ import annotations

import os
import shlex
import time
import uuid
from pathlib import Path
from typing import Any

__all__ = [
    "FAKE_VERSION",
    "LAST_USAGE",
    "agent_message",
    "command_item",
    "empty_total",
    "file_change_item",
    "model_entry",
    "new_id",
    "new_thread",
    "now_ms",
    "thread_response",
    "turn",
    "user_message",
]

FAKE_VERSION = "0.169.0"
LAST_USAGE = {
    "totalTokens": 15,
    "inputTokens": 10,
    "cachedInputTokens": 0,
    "cacheWriteInputTokens": 0,
    "outputTokens": 5,
    "reasoningOutputTokens": 0,
}
"""The `last` token usage of every model call the fake plays."""


def now_ms() -> int:
    return int(time.time() * 1000)


def new_id() -> str:
    return str(uuid.uuid4())


def empty_total() -> dict[str, int]:
    return dict.fromkeys(LAST_USAGE, 0)


def new_thread(params: dict[str, Any], home: Path) -> dict[str, Any]:
    """A `Thread` for `thread/start` params, its rollout under `home` unless ephemeral."""
    tid, now, cwd = new_id(), int(time.time()), str(params.get("cwd") or os.getcwd())
    ephemeral = bool(params.get("ephemeral"))
    return {
        "id": tid,
        "environments": [{"environmentId": "local", "cwd": cwd, "runtimeWorkspaceRoots": [cwd]}],
        "extra": None,
        "sessionId": tid,
        "forkedFromId": None,
        "attachedToThreadId": None,
        "parentThreadId": None,
        "preview": "",
        "ephemeral": ephemeral,
        "section": None,
        "sectionEnteredAt": None,
        "projectId": None,
        "historyMode": "paginated",
        "modelProvider": "mock",
        "model": params.get("model") or "gpt-5.5",
        "reasoningEffort": None,
        "createdAt": now,
        "updatedAt": now,
        "recencyAt": now,
        "status": {"type": "idle"},
        "path": None if ephemeral else str(home / "sessions" / f"rollout-{tid}.jsonl"),
        "cwd": cwd,
        "cliVersion": FAKE_VERSION,
        "originator": "harness",
        "source": "vscode",
        "canAcceptDirectInput": True,
        "threadSource": None,
        "agentNickname": None,
        "agentRole": None,
        "gitInfo": None,
        "name": None,
        "daybreakEnabled": None,
        "turns": [],
    }


def thread_response(stored: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    """The `thread/start` / `thread/resume` response for a stored thread (keys starting `_` are the fake's
    own) and the request's settings (sandbox, approval policy)."""
    thread = {k: v for k, v in stored.items() if not k.startswith("_")}
    sandbox = {
        "read-only": {"type": "readOnly", "networkAccess": False},
        "danger-full-access": {"type": "dangerFullAccess"},
    }.get(
        str(settings.get("sandbox")),
        {
            "type": "workspaceWrite",
            "writableRoots": [],
            "networkAccess": False,
            "excludeTmpdirEnvVar": False,
            "excludeSlashTmp": False,
        },
    )
    return {
        "thread": thread,
        "model": thread["model"],
        "modelProvider": "mock",
        "serviceTier": None,
        "disabledPluginIds": [],
        "cwd": thread["cwd"],
        "runtimeWorkspaceRoots": [thread["cwd"]],
        "instructionSources": [],
        "approvalPolicy": settings.get("approvalPolicy") or "on-request",
        "approvalsReviewer": "user",
        "sandbox": sandbox,
        "activePermissionProfile": None,
        "reasoningEffort": None,
        "multiAgentMode": "explicitRequestOnly",
    }


def turn(
    turn_id: str | None, status: str, *, started: bool = True, error: Any = None, items: list[Any] | None = None
) -> dict[str, Any]:
    """A `Turn` in `status` (`inProgress`, `completed`, `interrupted`, `failed`)."""
    done = status != "inProgress"
    now = int(time.time())
    return {
        "id": turn_id,
        "rootTurnId": turn_id,
        "items": items or [],
        "itemsView": "summary" if items else "notLoaded",
        "status": status,
        "error": error,
        "startedAt": now if started else None,
        "completedAt": now if done else None,
        "durationMs": 1 if done else None,
    }


def user_message(text: str) -> dict[str, Any]:
    return {
        "type": "userMessage",
        "id": new_id(),
        "clientId": None,
        "content": [{"type": "text", "text": text, "text_elements": []}],
    }


def agent_message(item_id: str, text: str = "") -> dict[str, Any]:
    return {
        "type": "agentMessage",
        "moderation": None,
        "id": item_id,
        "text": text,
        "phase": None,
        "memoryCitation": None,
        "delivery": None,
        "questions": None,
    }


def command_item(call: str, script: str, cwd: str, read_path: str | None = None) -> dict[str, Any]:
    """A `commandExecution` item in progress running `script` (as Codex wraps it: `bash -lc`); with
    `read_path`, its `commandActions` say it reads that file (relative to `cwd`)."""
    if read_path is not None:
        actions = [
            {"type": "read", "command": script, "name": Path(read_path).name, "path": str(Path(cwd) / read_path)}
        ]
    else:
        actions = [{"type": "unknown", "command": script}]
    return {
        "type": "commandExecution",
        "id": call,
        "pluginId": None,
        "scriptPath": None,
        "command": f"/bin/bash -lc {shlex.quote(script)}",
        "cwd": cwd,
        "processId": None,
        "source": "agent",
        "status": "inProgress",
        "commandActions": actions,
        "aggregatedOutput": None,
        "exitCode": None,
        "durationMs": None,
    }


def file_change_item(
    call: str, path: str, *, content: str | None = None, old: str = "", new: str = ""
) -> tuple[dict[str, Any], str]:
    """A `fileChange` item in progress that adds `path` with `content`, or (without content) replaces
    `old` by `new` in it; returned with its diff."""
    if content is not None:
        kind: dict[str, Any] = {"type": "add"}
        diff = "".join(f"+{line}\n" for line in content.splitlines())
    else:
        kind = {"type": "update", "move_path": None}
        diff = f"@@ -1 +1 @@\n-{old}\n+{new}\n"
    item = {"type": "fileChange", "id": call, "changes": [{"path": path, "kind": kind, "diff": diff}],
            "status": "inProgress"}
    return item, diff


def model_entry() -> dict[str, Any]:
    """The `model/list` entry of the offline model (`gpt-5.5` in codex-cli 0.169.0's bundled catalogue)."""
    efforts = {
        "low": "Fast responses with lighter reasoning",
        "medium": "Balances speed and reasoning depth for everyday tasks",
        "high": "Greater reasoning depth for complex problems",
        "xhigh": "Extra high reasoning depth for complex problems",
    }
    return {
        "id": "gpt-5.5",
        "model": "gpt-5.5",
        "upgrade": None,
        "upgradeInfo": None,
        "availabilityNux": None,
        "displayName": "GPT-5.5",
        "description": "Legacy coding model.",
        "modelSpecialty": None,
        "hidden": False,
        "supportedReasoningEfforts": [{"reasoningEffort": k, "description": v} for k, v in efforts.items()],
        "defaultReasoningEffort": "medium",
        "inputModalities": ["text", "image"],
        "supportsPersonality": False,
        "multiAgentVersion": None,
        "additionalSpeedTiers": ["fast"],
        "serviceTiers": [{"id": "priority", "name": "Fast", "description": "1.5x speed, increased usage"}],
        "defaultServiceTier": None,
        "availableAccessPrograms": None,
        "isDefault": False,
    }
