"""Codex app-server thread items → provider-neutral tool details (`HarnessToolDetails`).

Layer: provider mapping, pure: plain dicts in, new values out. Knows the shapes of Codex `ThreadItem`s
(commandExecution, fileChange, mcpToolCall, dynamicToolCall, webSearch, imageView, collabAgentToolCall); knows
nothing of processes, JSON-RPC or the runner. Titles, `bash -lc` unwrapping, bounds: `harness_core.provider`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from harness_codex_common import mcp_result_text
from harness_core import HarnessToolDetails, ToolKind, ToolStatus
from harness_core.provider import (
    EDITING_FILE,
    LISTING_FILES,
    READING_FILE,
    RUNNING_COMMAND,
    SEARCHING,
    WRITING_FILE,
    bounded_head,
    bounded_tail,
    command_display,
    file_change_display,
    mcp_call_text,
    unwrap_shell,
)

__all__ = ["TOOL_ITEM_TYPES", "ToolCall", "file_changes", "infer_kind", "tool_calls", "with_changes"]

TOOL_ITEM_TYPES = frozenset(
    {
        "commandExecution",
        "fileChange",
        "mcpToolCall",
        "dynamicToolCall",
        "webSearch",
        "imageView",
        "collabAgentToolCall",
    }
)

_STATUS = {
    "inProgress": ToolStatus.STARTED,
    "completed": ToolStatus.COMPLETED,
    "failed": ToolStatus.FAILED,
    "declined": ToolStatus.DECLINED,
    "interrupted": ToolStatus.FAILED,
}

_ACTION_KIND = {"read": "read", "listFiles": "list", "search": "search"}
"""Codex `commandActions` types → the neutral command kinds of `harness_core.tooldisplay`."""


@dataclass(frozen=True)
class ToolCall:
    """One tool action derived from an item (a fileChange with several files gives several)."""

    tool_id: str
    name: str
    display: HarnessToolDetails
    input: dict[str, Any] | None = None
    output: str | None = None

    @property
    def is_error(self) -> bool:
        d = self.display
        return d.status in (ToolStatus.FAILED, ToolStatus.DECLINED) or (d.exit_code not in (None, 0))


def _status(item: dict[str, Any]) -> ToolStatus:
    return _STATUS.get(str(item.get("status")), ToolStatus.STARTED)


def _command(item: dict[str, Any]) -> list[ToolCall]:
    command = str(item.get("command") or "")
    script = unwrap_shell(command)
    actions = [a for a in item.get("commandActions") or [] if isinstance(a, dict)]
    kinds = {a.get("type") for a in actions}
    kind, title, path = *command_display("shell"), None
    if len(kinds) == 1 and (only := next(iter(kinds))) in _ACTION_KIND:
        kind, title = command_display(_ACTION_KIND[str(only)])
        path = next((a.get("path") for a in actions if a.get("path")), None)
    output = item.get("aggregatedOutput")
    display = HarnessToolDetails(
        kind=kind,
        title=title,
        path=path,
        command=script,
        cwd=item.get("cwd"),
        status=_status(item),
        exit_code=item.get("exitCode"),
        duration_ms=item.get("durationMs"),
        summary=bounded_tail(output),
        raw={"command": command, "commandActions": actions, "processId": item.get("processId")},
    )
    return [
        ToolCall(
            str(item["id"]),
            "shell",
            display,
            {"command": script, "cwd": item.get("cwd")},
            bounded_head(output),
        )
    ]


def _file_change(item: dict[str, Any]) -> list[ToolCall]:
    changes = [c for c in item.get("changes") or [] if isinstance(c, dict)]
    item_id = str(item["id"])
    calls = []
    for index, change in enumerate(changes):
        kind_obj = change.get("kind") or {}
        change_type = kind_obj.get("type") if isinstance(kind_obj, dict) else str(kind_obj)
        kind, title = file_change_display(str(change_type))
        move_path = kind_obj.get("move_path") if isinstance(kind_obj, dict) else None
        if move_path:
            title = "Moving file"
        display = with_changes(HarnessToolDetails(
            kind=kind,
            title=title,
            path=change.get("path"),
            status=_status(item),
            summary=bounded_tail(change.get("diff")),
            raw={"kind": kind_obj, "move_path": move_path} if move_path else {"kind": kind_obj},
        ), file_changes(change))
        tool_id = item_id if len(changes) == 1 else f"{item_id}#{index}"
        calls.append(
            ToolCall(tool_id, "apply_patch", display, {"path": change.get("path"), "kind": change_type})
        )
    if not calls:  # a patch whose changes are not known yet still shows up once
        display = HarnessToolDetails(kind=ToolKind.EDIT, title="Editing files", status=_status(item))
        calls.append(ToolCall(item_id, "apply_patch", display))
    return calls


_CHANGE_KINDS = {"add": "add", "delete": "delete", "update": "modify"}


def file_changes(change: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """One `fileChange` change as `HarnessToolDetails.changes` (validated into `FileChange`s by the model):
    Codex sends an update's hunks without file headers, and an added or deleted file's whole content as its
    "diff"; both become a unified diff with `--- a/PATH` / `+++ b/PATH` headers."""
    path = change.get("path")
    if not isinstance(path, str) or not path:
        return ()
    kind_obj = change.get("kind") or {}
    wire = kind_obj.get("type") if isinstance(kind_obj, dict) else str(kind_obj)
    move_path = kind_obj.get("move_path") if isinstance(kind_obj, dict) else None
    kind = "rename" if move_path else _CHANGE_KINDS.get(str(wire), "modify")
    text = change.get("diff")
    diff = None
    name = path.lstrip("/")
    if isinstance(text, str) and wire == "add":
        diff = _whole_file(f"--- /dev/null\n+++ b/{name}\n", "+", text)
    elif isinstance(text, str) and wire == "delete":
        diff = _whole_file(f"--- a/{name}\n+++ /dev/null\n", "-", text)
    elif isinstance(text, str) and text:
        target = str(move_path).lstrip("/") if move_path else name
        diff = text if text.startswith(("---", "diff ")) else f"--- a/{name}\n+++ b/{target}\n{text}"
    return ({"path": path, "kind": kind, "diff": diff, "move_path": move_path},)


def with_changes(display: HarnessToolDetails, changes: tuple[dict[str, Any], ...]) -> HarnessToolDetails:
    """`display` with its `changes` (plain dicts, validated into `FileChange`s by the model)."""
    if not changes:
        return display
    return HarnessToolDetails.model_validate({**dict(display), "changes": changes})


def _whole_file(header: str, sign: str, content: str) -> str:
    """A diff adding (`+`) or removing (`-`) every line of `content`."""
    lines = content.splitlines()
    if not lines:
        return header
    span = f"-1,{len(lines)} +0,0" if sign == "-" else f"-0,0 +1,{len(lines)}"
    body = "".join(f"{sign}{line}\n" for line in lines)
    tail = "" if content.endswith("\n") else "\\ No newline at end of file\n"
    return f"{header}@@ {span} @@\n{body}{tail}"


_DYNAMIC_HINTS: tuple[tuple[tuple[str, ...], ToolKind, str], ...] = (
    (("shell", "exec", "bash", "command", "terminal", "run"), ToolKind.SHELL, RUNNING_COMMAND),
    (("search", "grep", "find", "glob"), ToolKind.SEARCH, SEARCHING),
    (("list", "ls"), ToolKind.SEARCH, LISTING_FILES),
    (("read", "view", "cat", "open", "get_file"), ToolKind.READ, READING_FILE),
    (("edit", "patch", "replace", "update"), ToolKind.EDIT, EDITING_FILE),
    (("write", "create", "save"), ToolKind.WRITE, WRITING_FILE),
    (("web", "fetch", "http", "browse", "url"), ToolKind.WEB, "Fetching"),
    (("agent", "task", "delegate"), ToolKind.AGENT, "Delegating to agent"),
)


def infer_kind(tool_name: str) -> tuple[ToolKind, str]:
    """Guess what a dynamic tool does from its name (`read_file` → read). Unknown names stay unknown."""
    lowered = tool_name.lower()
    words = set(lowered.replace("-", "_").replace("/", "_").replace(".", "_").split("_"))
    for hints, kind, title in _DYNAMIC_HINTS:
        if words & set(hints) or any(len(h) > 3 and h in lowered for h in hints):
            return kind, title
    return ToolKind.UNKNOWN, f"Calling {tool_name}"


def _json_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _args(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    return None if value is None else {"arguments": value}


def _mcp(item: dict[str, Any]) -> list[ToolCall]:
    server, tool = str(item.get("server") or ""), str(item.get("tool") or "")
    error = item.get("error") or {}
    result_text = mcp_result_text((item.get("result") or {}).get("content"))
    summary = error.get("message") if isinstance(error, dict) and error else result_text
    arguments = _args(item.get("arguments"))
    display = HarnessToolDetails(
        kind=ToolKind.MCP,
        title=tool,
        command=mcp_call_text(tool, arguments),
        status=_status(item),
        duration_ms=item.get("durationMs"),
        summary=bounded_tail(summary),
        raw={"server": server, "tool": tool},
    )
    return [
        ToolCall(
            str(item["id"]),
            f"{server}.{tool}" if server else tool,
            display,
            arguments,
            bounded_head(result_text),
        )
    ]


def _dynamic(item: dict[str, Any]) -> list[ToolCall]:
    tool = str(item.get("tool") or "")
    kind, title = infer_kind(tool)
    args = _args(item.get("arguments"))
    status = _status(item)
    if item.get("success") is False and status is ToolStatus.COMPLETED:
        status = ToolStatus.FAILED
    text = _json_text(item.get("contentItems"))
    path = next((str(args[k]) for k in ("path", "file", "file_path") if args and args.get(k)), None)
    display = HarnessToolDetails(
        kind=kind,
        title=title,
        path=path,
        status=status,
        duration_ms=item.get("durationMs"),
        summary=bounded_tail(text),
        raw={"tool": tool, "namespace": item.get("namespace")},
    )
    return [ToolCall(str(item["id"]), tool, display, args, bounded_head(text))]


def _web(item: dict[str, Any]) -> list[ToolCall]:
    action = item.get("action") or {}
    url = action.get("url") if isinstance(action, dict) else None
    query = item.get("query") or ""
    title = "Opening page" if url else "Searching the web"
    done = ToolStatus.COMPLETED if item.get("_completed") else ToolStatus.STARTED
    display = HarnessToolDetails(
        kind=ToolKind.WEB,
        title=title,
        path=url,
        command=query or None,
        status=done,
        summary=bounded_tail(query or url),
        raw={"action": action} if action else None,
    )
    return [ToolCall(str(item["id"]), "web_search", display, {"query": query})]


def _image(item: dict[str, Any]) -> list[ToolCall]:
    done = ToolStatus.COMPLETED if item.get("_completed") else ToolStatus.STARTED
    display = HarnessToolDetails(
        kind=ToolKind.READ, title="Viewing image", path=item.get("path"), status=done
    )
    return [ToolCall(str(item["id"]), "view_image", display, {"path": item.get("path")})]


_COLLAB_TITLES = {
    "spawnAgent": "Starting agent",
    "sendInput": "Messaging agent",
    "sendMessage": "Messaging agent",
    "resumeAgent": "Resuming agent",
    "wait": "Waiting for agents",
    "closeAgent": "Closing agent",
    "followupTask": "Delegating to agent",
    "interruptAgent": "Interrupting agent",
    "listAgents": "Listing agents",
}


def _collab(item: dict[str, Any]) -> list[ToolCall]:
    tool = str(item.get("tool") or "")
    receivers = item.get("receiverThreadIds") or []
    display = HarnessToolDetails(
        kind=ToolKind.AGENT,
        title=_COLLAB_TITLES.get(tool, "Delegating to agent"),
        status=_status(item),
        summary=bounded_tail(item.get("prompt")),
        raw={"tool": tool, "receiverThreadIds": receivers, "model": item.get("model")},
    )
    return [ToolCall(str(item["id"]), tool, display, {"prompt": item.get("prompt")})]


_BUILDERS = {
    "commandExecution": _command,
    "fileChange": _file_change,
    "mcpToolCall": _mcp,
    "dynamicToolCall": _dynamic,
    "webSearch": _web,
    "imageView": _image,
    "collabAgentToolCall": _collab,
}


def tool_calls(item: dict[str, Any], *, completed: bool) -> list[ToolCall]:
    """The tool actions of one tool item (see `TOOL_ITEM_TYPES`). Items without a status of their own
    (webSearch, imageView) count as completed when `completed` is true."""
    builder = _BUILDERS[str(item.get("type"))]
    if "status" not in item:
        item = {**item, "_completed": completed}
    calls = builder(item)
    if completed:
        return [
            c if c.display.status is not ToolStatus.STARTED else _with_status(c, ToolStatus.COMPLETED)
            for c in calls
        ]
    return calls


def _with_status(call: ToolCall, status: ToolStatus) -> ToolCall:
    return ToolCall(
        call.tool_id, call.name, call.display.model_copy(update={"status": status}), call.input, call.output
    )
