"""A trajectory as the chat-messages list fine-tuning tools read, `{"messages": [...]}` in OpenAI's chat format
(`openai_messages`, `messages_from_trajectory`): built from the ATIF trajectory, so both cut a run alike.

Layer: trajectory (pure: an ATIF dict in, a JSON-able dict out). The mapping: docs/trajectories.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from harness_core.events import HarnessEvent
from harness_core.trajectory.atif import atif_trajectory

__all__ = ["messages_from_trajectory", "openai_messages"]


def _text(content: Any) -> str:
    """A message or result's content as text (ATIF allows a list of parts: their texts joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text") or "" for part in content if isinstance(part, dict))


def messages_from_trajectory(trajectory: dict[str, Any], *, reasoning: bool = False) -> dict[str, Any]:
    """`{"messages": [...]}` of an ATIF trajectory (see the module's doc); `reasoning` adds each assistant
    message's `reasoning_content`."""
    messages: list[dict[str, Any]] = []
    for step in trajectory["steps"]:
        source = step["source"]
        if source == "system" and "error" in (step.get("extra") or {}):
            continue
        if source in ("system", "user"):
            messages.append({"role": source, "content": _text(step.get("message"))})
            continue
        calls = step.get("tool_calls") or []
        text = _text(step.get("message"))
        thought = step.get("reasoning_content") if reasoning else None
        if not text and not calls and not thought:
            continue  # a step with only metrics (a failed call): nothing was said
        message: dict[str, Any] = {"role": "assistant", "content": text if text or not calls else None}
        if thought:
            message["reasoning_content"] = thought
        if calls:
            message["tool_calls"] = [
                {"id": call["tool_call_id"], "type": "function",
                 "function": {"name": call["function_name"],
                              "arguments": json.dumps(call["arguments"], ensure_ascii=False)}}
                for call in calls
            ]
        messages.append(message)
        results = {r.get("source_call_id"): r for r in (step.get("observation") or {}).get("results", [])}
        for call in calls:
            result = results.get(call["tool_call_id"])
            messages.append({"role": "tool", "tool_call_id": call["tool_call_id"],
                             "content": _text(result.get("content")) if result is not None else ""})
    return {"messages": messages}


def openai_messages(events: Iterable[HarnessEvent], *, reasoning: bool = False) -> dict[str, Any]:
    """`{"messages": [...]}` of one run's events (or a session's turns); see `messages_from_trajectory`.

    Raises:
        ValueError: no events.
    """
    return messages_from_trajectory(atif_trajectory(events), reasoning=reasoning)
