"""The fake `codex exec`'s turn: a `Scenario` printed as the `item.*` lines the real 0.169.0 prints.

Layer: testing. Knows the exec JSONL item shapes (reasoning, agent_message, command_execution, file_change; checked
against recorded real transcripts by the codex-exec tests) and the scenario vocabulary; knows nothing of Harness
providers or events. Tool steps are simulated, never executed (a command's `sleep N` parts take N seconds, a real
`sleep` running meanwhile in a session of its own); file steps change the workspace as the real tools would.
"""

from __future__ import annotations

import json
import mimetypes
import os
import shlex
import sys
import time
from collections.abc import Sequence
from typing import Any

from harness_core.scripted.command import command_process
from harness_core.scripted.scenarios import (
    TOOL_RESULT,
    CallMcpTool,
    EditFile,
    Fail,
    ReadFile,
    ReportAttachments,
    RunCommand,
    Say,
    Scenario,
    Stall,
    TakeLong,
    Think,
    WriteFile,
    apply_file_step,
)

__all__ = ["emit", "play"]

_FAIL_MESSAGES = {
    401: "unexpected status 401 Unauthorized: {message}, url: http://127.0.0.1/v1/responses",
    429: "exceeded retry limit, last status: 429 Too Many Requests",
    500: "We\u2019re currently experiencing high demand, which may cause temporary errors.",
}


def emit(obj: dict[str, Any]) -> None:
    """Print one JSONL line, as compact as codex prints it."""
    sys.stdout.write(json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n")
    sys.stdout.flush()


class _Items:
    def __init__(self) -> None:
        self.n = 0

    def next_id(self) -> str:
        self.n += 1
        return f"item_{self.n - 1}"


def _command_item(item_id: str, command: str, output: str, exit_code: int | None) -> dict[str, Any]:
    done = exit_code is not None
    return {
        "id": item_id,
        "type": "command_execution",
        "command": f"/bin/bash -lc {shlex.quote(command)}",
        "aggregated_output": output if done else "",
        "exit_code": exit_code,
        "status": ("completed" if exit_code == 0 else "failed") if done else "in_progress",
    }


def play(scenario: Scenario, cwd: str, images: Sequence[str] = ()) -> str | None:
    """Emit the scenario's items; return a failure message if the scripted API fails. `images`: the `-i` files
    (what a `report_attachments` step reports); an MCP tool step reports the step's output (no server runs)."""
    items = _Items()
    results: list[str] = []
    for step in scenario.steps:
        if isinstance(step, ReportAttachments):
            lines = [f"{mimetypes.guess_type(p)[0] or 'application/octet-stream'} {os.path.getsize(p)} bytes"
                     for p in images]
            step = Say("\n".join(lines) or "no attachments", chunks=step.chunks)
        if isinstance(step, Say) and TOOL_RESULT in step.text:
            step = Say(step.text.replace(TOOL_RESULT, results[-1] if results else "(no tool result)"), step.chunks)
        if isinstance(step, CallMcpTool):
            item_id = items.next_id()
            item: dict[str, Any] = {"id": item_id, "type": "mcp_tool_call", "server": step.server, "tool": step.tool,
                    "arguments": dict(step.args), "result": None, "error": None, "status": "in_progress"}
            emit({"type": "item.started", "item": item})
            result: dict[str, Any] = {"content": [{"type": "text", "text": step.output}], "structured_content": None}
            emit({"type": "item.completed", "item": {**item, "result": result, "status": "completed"}})
            results.append(step.output)
            continue
        if isinstance(step, Think):
            emit({"type": "item.completed", "item": {"id": items.next_id(), "type": "reasoning", "text": step.text}})
        elif isinstance(step, Say):
            if step.delay:
                time.sleep(step.delay * max(step.chunks - 1, 0))
            emit(
                {"type": "item.completed", "item": {"id": items.next_id(), "type": "agent_message", "text": step.text}}
            )
        elif isinstance(step, (RunCommand, ReadFile)):
            command = step.command if isinstance(step, RunCommand) else f"cat {shlex.quote(step.path)}"
            output = step.output if isinstance(step, RunCommand) else apply_file_step(step, cwd)
            code = step.exit_code if isinstance(step, RunCommand) else 0
            item_id = items.next_id()
            emit({"type": "item.started", "item": _command_item(item_id, command, "", None)})
            with command_process(command) as seconds:
                time.sleep(seconds)
            emit({"type": "item.completed", "item": _command_item(item_id, command, output, code)})
        elif isinstance(step, (WriteFile, EditFile)):
            apply_file_step(step, cwd)
            change = {
                "path": os.path.join(cwd, step.path),
                "kind": "add" if isinstance(step, WriteFile) else "update",
            }
            item_id = items.next_id()
            for phase, status in (("item.started", "in_progress"), ("item.completed", "completed")):
                item = {"id": item_id, "type": "file_change", "changes": [change], "status": status}
                emit({"type": phase, "item": item})
        elif isinstance(step, Fail):
            template = _FAIL_MESSAGES.get(step.status, "unexpected status {status}: {message}")
            return template.format(status=step.status, message=step.message)
        elif isinstance(step, (Stall, TakeLong)):
            time.sleep(step.seconds)
    return None
