"""A trajectory as the chat-messages list fine-tuning tools read, `{"messages": [...]}` in OpenAI's chat format
(`openai_messages`, `messages_from_trajectory`): built from the ATIF trajectory, so both cut a run alike.

Layer: trajectory (pure: an ATIF dict in, a JSON-able dict out). The mapping: docs/trajectories.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from harness_core.events import HarnessEvent
from harness_core.trajectory.atif import REBUILT, atif_trajectory

__all__ = ["messages_from_trajectory", "openai_messages"]


def _text(content: Any) -> str:
    """A message or result's content as text (ATIF allows a list of parts: their texts joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text") or "" for part in content if isinstance(part, dict))


_CHANGE_KEYS = ("path", "kind", "diff", "move_path")
_EDIT_KINDS = ("edit", "write")


def _whole(change: dict[str, Any]) -> bool:
    """A file change that says all it does: its diff, or a delete, or a move without a diff (a rename alone)."""
    return bool(change.get("diff")) or change.get("kind") == "delete" or (
        change.get("kind") == "rename" and bool(change.get("move_path")))


def _call_arguments(call: dict[str, Any], drop_reconstructed: bool) -> dict[str, Any] | None:
    """The arguments a chat message gives `call`; None: the call is left out. The agent's own input as it is. For
    arguments Harness rebuilt (`extra.arguments_from`): with the file changes the call announced, each with its
    content, those changes as `changes` (so a patch call carries its patch); else, with `drop_reconstructed`, a
    call that changes files (its content unknown) or that has no arguments at all is left out, and one whose
    rebuilt arguments name what it did (a command, a path read) is kept."""
    arguments: dict[str, Any] = call["arguments"]
    extra = call.get("extra") or {}
    if extra.get("arguments_from") != REBUILT:
        return arguments
    changes = [c for c in extra.get("changes") or [] if isinstance(c, dict)]
    if changes and all(_whole(c) for c in changes):
        return {**arguments, "changes": [{k: c[k] for k in _CHANGE_KEYS if c.get(k) is not None} for c in changes]}
    if drop_reconstructed and (changes or extra.get("kind") in _EDIT_KINDS or not arguments):
        return None
    return arguments


def messages_from_trajectory(trajectory: dict[str, Any], *, reasoning: bool = False,
                             drop_reconstructed: bool = True) -> dict[str, Any]:
    """`{"messages": [...]}` of an ATIF trajectory (see the module's doc); `reasoning` adds each assistant
    message's `reasoning_content`. A tool call whose arguments Harness rebuilt (`extra.arguments_from: "display"`)
    gets the file changes it announced as `changes`; without them, `drop_reconstructed` leaves out such a call that
    changes files or has no arguments (with its result), so a training set holds no patch call without its patch
    (`False`: kept as rebuilt). docs/trajectories.md."""
    messages: list[dict[str, Any]] = []
    for step in trajectory["steps"]:
        source = step["source"]
        if source == "system" and "error" in (step.get("extra") or {}):
            continue
        if source in ("system", "user"):
            messages.append({"role": source, "content": _text(step.get("message"))})
            continue
        calls = []
        for call in step.get("tool_calls") or []:
            arguments = _call_arguments(call, drop_reconstructed)
            if arguments is not None:
                calls.append((call["tool_call_id"], call["function_name"], arguments))
        text = _text(step.get("message"))
        thought = step.get("reasoning_content") if reasoning else None
        if not text and not calls and not thought:
            continue  # a step with only metrics (a failed call), or only calls left out: nothing was said
        message: dict[str, Any] = {"role": "assistant", "content": text if text or not calls else None}
        if thought:
            message["reasoning_content"] = thought
        if calls:
            message["tool_calls"] = [
                {"id": call_id, "type": "function",
                 "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}
                for call_id, name, arguments in calls
            ]
        messages.append(message)
        results = {r.get("source_call_id"): r for r in (step.get("observation") or {}).get("results", [])}
        for call_id, _, _ in calls:
            result = results.get(call_id)
            messages.append({"role": "tool", "tool_call_id": call_id,
                             "content": _text(result.get("content")) if result is not None else ""})
    return {"messages": messages}


def openai_messages(events: Iterable[HarnessEvent], *, reasoning: bool = False,
                    drop_reconstructed: bool = True) -> dict[str, Any]:
    """`{"messages": [...]}` of one run's events (or a session's turns); see `messages_from_trajectory`.

    Raises:
        ValueError: no events.
    """
    return messages_from_trajectory(atif_trajectory(events), reasoning=reasoning,
                                    drop_reconstructed=drop_reconstructed)
