"""The tool calls Codex refused without telling its client: found in a thread's rollout file, as tool events.

Layer: provider support shared by the Codex providers. `rollout_path` and the `read_*` functions read files (a
provider reads them through `RunContext.read_side_input`, so a replay answers them); the rest is pure. Knows
codex's rollout files; knows nothing of processes, JSON-RPC or exec lines. Why: providers/codex_common/README.md.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

from harness_core import HarnessEvent, HarnessToolDetails, ToolKind, ToolResult, ToolStatus, ToolUse
from harness_core.provider import bounded_head, bounded_tail, classify_command, file_change_display

__all__ = [
    "read_finished_tail",
    "read_finished_turn",
    "read_tail",
    "read_turn",
    "refused_events",
    "rollout_path",
    "turn_finished",
    "turn_records",
]

_TAIL_BYTES = 4 * 1024 * 1024
_CALLS = ("custom_tool_call", "function_call")
_OUTPUTS = ("custom_tool_call_output", "function_call_output")
_REFUSED = ("rejected", "declined", "not allowed", "blocked by")
_PATCH_TOOLS = frozenset({"apply_patch"})
"""The only calls whose missing item means Codex refused them (a patch); any other item-less call is a tool that
never has an item (`write_stdin`, `update_plan`, ...)."""
_PATCH_FILE = {"*** Add File: ": "add", "*** Update File: ": "update", "*** Delete File: ": "delete"}


def rollout_path(home: Path, thread_id: str) -> Path | None:
    """The rollout file of `thread_id` under CODEX_HOME `home` (the newest, archived ones too), or None. The
    day folders of today and yesterday (local time and UTC) are looked in first: a thread a run just used is
    almost always there, and a home with months of sessions is walked only when it is not."""
    if not thread_id or "/" in thread_id or "*" in thread_id:
        return None
    name = f"rollout-*-{thread_id}.jsonl"
    now = time.time()
    days = dict.fromkeys(time.strftime("%Y/%m/%d", clock(now - lag)) for lag in (0, 86400)
                         for clock in (time.localtime, time.gmtime))
    for day in days:
        found = sorted((home / "sessions" / day).glob(name))
        if found:
            return found[-1]
    for folder in ("sessions", "archived_sessions"):
        found = sorted((home / folder).glob(f"**/{name}"))
        if found:
            return found[-1]
    return None


_TURN_ENDS = ("task_complete", "turn_aborted")
"""How codex records a turn's end in its rollout: finished (also with an error), or aborted (interrupted)."""


def turn_finished(records: list[dict[str, Any]]) -> bool:
    """Whether `records` (from `read_turn`) end their turn: a `task_complete` (or, for an interrupted turn, a
    `turn_aborted`) after the `task_started`."""
    return any(r.get("type") == "event_msg" and isinstance(r.get("payload"), dict)
               and r["payload"].get("type") in _TURN_ENDS for r in records)


def read_finished_turn(path: Path | None, wait: float = 1.0) -> list[dict[str, Any]]:
    """`read_turn`, read again (every 50 ms, for at most `wait` seconds) until the turn's `task_complete` is in
    the file: Codex writes its rollout asynchronously, and may say the turn completed before the file does."""
    return turn_records(read_finished_tail(path, wait))


def read_finished_tail(path: Path | None, wait: float = 1.0) -> bytes | None:
    """`read_tail`, read again (every 50 ms, for at most `wait` seconds) until its latest turn has its
    `task_complete` (see `read_finished_turn`); for `RunContext.read_side_input`, which records what was read."""
    if path is None:
        return None
    deadline = time.monotonic() + wait
    tail = read_tail(path)
    while not turn_finished(turn_records(tail)) and time.monotonic() < deadline:
        time.sleep(0.05)
        tail = read_tail(path)
    return tail


def read_tail(path: Path) -> bytes | None:
    """The last 4 MiB of a rollout file (its latest turns), or None when it cannot be read."""
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - _TAIL_BYTES))
            return fh.read()
    except OSError:
        return None


def read_turn(path: Path | None) -> list[dict[str, Any]]:
    """The rollout records of the thread's latest turn (after its last `task_started`), from the file's last
    4 MiB; an unreadable file or line is skipped (best effort: nothing found, nothing shown)."""
    return turn_records(read_tail(path) if path is not None else None)


def turn_records(tail: bytes | None) -> list[dict[str, Any]]:
    """The records of the latest turn in `tail` (a rollout's last bytes, as `read_tail` gives them; None: no
    file): pure, so a replayed run parses what the recorded one read."""
    if tail is None:
        return []
    records: list[dict[str, Any]] = []
    for raw in tail.splitlines():
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        payload = record.get("payload")
        if record.get("type") == "event_msg" and isinstance(payload, dict) and payload.get("type") == "task_started":
            records = []
        records.append(record)
    return records


def refused_events(
    records: Iterable[dict[str, Any]], cwd: str | None = None, seen: Collection[str] = ()
) -> list[HarnessEvent]:
    """A `tool_use` and a `tool_result` for each `apply_patch` call of `records` (one turn's rollout lines) that
    Codex answered without an item of its own (in the rollout, or among the item ids `seen` on the wire), in call
    order; file paths are resolved against `cwd`."""
    calls: dict[str, dict[str, Any]] = {}
    answers: dict[str, str] = {}
    items: set[str] = set()
    for record in records:
        payload = record.get("payload")
        if not isinstance(payload, dict):
            continue
        kind = payload.get("type")
        if (record.get("type") == "response_item" and kind in _CALLS and payload.get("call_id")
                and payload.get("name") in _PATCH_TOOLS):
            calls[str(payload["call_id"])] = payload
        elif record.get("type") == "response_item" and kind in _OUTPUTS and payload.get("call_id"):
            answers[str(payload["call_id"])] = _text(payload.get("output"))
        elif record.get("type") == "event_msg" and kind in ("item_started", "item_completed"):
            item = payload.get("item")
            if isinstance(item, dict) and item.get("id"):
                items.add(str(item["id"]))
    events: list[HarnessEvent] = []
    for call_id, call in calls.items():
        if call_id in items or call_id in seen or call_id not in answers:
            continue
        answer = answers[call_id]
        lower = answer.lower()
        status = ToolStatus.DECLINED if any(word in lower for word in _REFUSED) else ToolStatus.FAILED
        for tool_id, name, display, tool_input in _describe(call_id, call, cwd):
            ended = display.model_copy(update={"status": status, "summary": bounded_tail(answer)})
            events.append(ToolUse(tool_id=tool_id, name=name, display=display, input=tool_input))
            events.append(
                ToolResult(tool_id=tool_id, name=name, display=ended, output=bounded_head(answer), is_error=True)
            )
    return events


def _describe(
    call_id: str, call: dict[str, Any], cwd: str | None
) -> list[tuple[str, str, HarnessToolDetails, dict[str, Any] | None]]:
    name = str(call.get("name") or "tool")
    if name == "apply_patch":
        text = call.get("input")
        if text is None:  # the function-tool form of apply_patch: {"input": "..."} as arguments
            text = _arguments(call).get("input")
        files = _patch_files(str(text or ""))
        described: list[tuple[str, str, HarnessToolDetails, dict[str, Any] | None]] = []
        for index, (change, path) in enumerate(files):
            kind, title = file_change_display(change)
            display = HarnessToolDetails(
                kind=kind, title=title, path=_absolute(path, cwd), status=ToolStatus.STARTED, raw={"kind": change}
            )
            tool_id = call_id if len(files) == 1 else f"{call_id}#{index}"
            described.append((tool_id, name, display, {"path": display.path, "kind": change}))
        if described:
            return described
        display = HarnessToolDetails(kind=ToolKind.EDIT, title="Editing files", status=ToolStatus.STARTED)
        return [(call_id, name, display, None)]
    args = _arguments(call)
    command = args.get("cmd") or args.get("command")
    if isinstance(command, list):
        command = " ".join(str(part) for part in command)
    if isinstance(command, str) and command:
        action = classify_command(command)
        display = HarnessToolDetails(
            kind=action.kind,
            title=action.title,
            path=_absolute(action.path, cwd),
            command=action.command,
            cwd=cwd,
            status=ToolStatus.STARTED,
        )
        return [(call_id, "shell", display, {"command": action.command, "cwd": cwd})]
    display = HarnessToolDetails(kind=ToolKind.UNKNOWN, title=f"Calling {name}", status=ToolStatus.STARTED)
    return [(call_id, name, display, args or None)]


def _patch_files(patch: str) -> list[tuple[str, str]]:
    files: list[tuple[str, str]] = []
    for line in patch.splitlines():
        for marker, change in _PATCH_FILE.items():
            if line.startswith(marker) and line[len(marker) :].strip():
                files.append((change, line[len(marker) :].strip()))
    return files


def _arguments(call: dict[str, Any]) -> dict[str, Any]:
    raw = call.get("arguments")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {}
    return raw if isinstance(raw, dict) else {}


def _text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):  # content items
        return "\n".join(str(part.get("text", "")) for part in output if isinstance(part, dict))
    if isinstance(output, dict):
        return str(output.get("content") or output.get("output") or "")
    return "" if output is None else str(output)


def _absolute(path: str | None, cwd: str | None) -> str | None:
    if path is None or os.path.isabs(path) or not cwd:
        return path
    return os.path.normpath(os.path.join(cwd, path))
