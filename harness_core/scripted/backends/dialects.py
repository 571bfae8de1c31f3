"""Tool dialects: how a scenario's tool step becomes a tool call in a model API's response.

Layer: offline. Knows the scenario vocabulary and the shape of a tool call in the OpenAI Responses and the
Anthropic Messages APIs; knows no HTTP, no streaming and no concrete agent. What an agent calls its tools (and
what arguments they take) is that agent's business: its provider passes its own dialect to the backend, and
the defaults here are the tools those APIs' own documentation describes.

A dialect is a small class with one method per tool step (`run_command`, `read_file`, `write_file`,
`edit_file`) behind one dispatching method (`tool_call` / `tool_use`); subclass it and override only what your
agent does differently:

    class MyAgentTools(ResponsesDialect):
        def read_file(self, step: ReadFile, cwd: Path | None) -> ResponsesToolCall:
            return FunctionCall("read_file", {"path": step.path})

    ResponsesBackend(scenario, cwd=workspace, dialect=MyAgentTools())
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Union

from harness_core.scripted.scenarios import EditFile, ReadFile, RunCommand, WriteFile

__all__ = [
    "TOOL_STEPS",
    "CustomToolCall",
    "FunctionCall",
    "MessagesDialect",
    "ResponsesDialect",
    "ResponsesToolCall",
    "ToolStep",
    "ToolUse",
    "apply_patch_text",
]

_ONE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.:/-]*")
ToolStep = Union[RunCommand, ReadFile, WriteFile, EditFile]
"""A scenario step that the model plays as one tool call."""
TOOL_STEPS = (RunCommand, ReadFile, WriteFile, EditFile)
"""The classes of `ToolStep`, for `isinstance` checks."""


# -- OpenAI Responses --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FunctionCall:
    """A `function_call` output item: the model calls function tool `name` with JSON `arguments`."""

    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class CustomToolCall:
    """A `custom_tool_call` output item: the model calls free-form tool `name` with plain-text `input`."""

    name: str
    input: str


ResponsesToolCall = Union[FunctionCall, CustomToolCall]


def _lines(text: str) -> list[str]:
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


def apply_patch_text(step: WriteFile | EditFile, current: str | None = None) -> str:
    """The `apply_patch` patch (`*** Begin Patch` ... `*** End Patch`) for a write or an edit.

    An edit is line-based: given the file's `current` text, the hunk spans the whole lines around the first
    occurrence of `step.old`; without it, `old` and `new` are taken to be whole lines.
    """
    if isinstance(step, WriteFile):
        body = "".join(f"+{line}\n" for line in _lines(step.content))
        return f"*** Begin Patch\n*** Add File: {step.path}\n{body}*** End Patch\n"
    old, new = step.old, step.new
    if current is not None and step.old in current:
        start = current.rfind("\n", 0, current.index(step.old)) + 1
        end_at = current.find("\n", current.index(step.old) + len(step.old))
        end = len(current) if end_at < 0 else end_at
        old = current[start:end]
        new = old.replace(step.old, step.new, 1)
    minus = "".join(f"-{line}\n" for line in _lines(old))
    plus = "".join(f"+{line}\n" for line in _lines(new))
    return f"*** Begin Patch\n*** Update File: {step.path}\n@@\n{minus}{plus}*** End Patch\n"


_COMMAND_WAIT_MS = 3_600_000
"""How long the scripted model asks Codex to wait for a command (Codex caps it at its own maximum)."""


class ResponsesDialect:
    """How tool steps become Responses output items. The defaults are the tools OpenAI's own Responses tooling
    uses: the function tool `exec_command` (`{"cmd": "..."}`) runs commands and reads files (`cat PATH`),
    and the custom tool `apply_patch` (a patch as plain text) writes and edits them.

    `cwd` is the workspace when the backend knows it (its `cwd`), else None; the default `edit_file` reads the
    file there so that an edit of part of a line becomes an exact hunk. Paths stay relative, as in the scenario.
    """

    def tool_result_text(self, output: str) -> str:
        """The result a tool gave, from the `output` of its `function_call_output` item (an agent may wrap it: its
        provider's dialect unwraps it, so `{tool_result}` quotes the tool)."""
        return output

    def tool_call(self, step: ToolStep, cwd: Path | None) -> ResponsesToolCall:
        """The output item for `step`: dispatches to the method for its kind."""
        if isinstance(step, RunCommand):
            return self.run_command(step, cwd)
        if isinstance(step, ReadFile):
            return self.read_file(step, cwd)
        if isinstance(step, WriteFile):
            return self.write_file(step, cwd)
        return self.edit_file(step, cwd)

    def run_command(self, step: RunCommand, cwd: Path | None) -> ResponsesToolCall:
        # Codex stops waiting for a command after `yield_time_ms` (10 s by default) and hands the model what it
        # printed so far: the scenario's model would then end the turn with the command still running.
        return FunctionCall("exec_command", {"cmd": step.command, "yield_time_ms": _COMMAND_WAIT_MS})

    def read_file(self, step: ReadFile, cwd: Path | None) -> ResponsesToolCall:
        return FunctionCall("exec_command", {"cmd": f"cat {shlex.quote(step.path)}"})

    def write_file(self, step: WriteFile, cwd: Path | None) -> ResponsesToolCall:
        return CustomToolCall("apply_patch", apply_patch_text(step))

    def edit_file(self, step: EditFile, cwd: Path | None) -> ResponsesToolCall:
        current = None
        if cwd is not None:
            try:
                current = (cwd / step.path).read_text()
            except OSError:
                current = None
        return CustomToolCall("apply_patch", apply_patch_text(step, current))


# -- Anthropic Messages ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolUse:
    """A `tool_use` content block: the model calls tool `name` with JSON `input`."""

    name: str
    input: Mapping[str, Any]


class MessagesDialect:
    """How tool steps become Messages `tool_use` blocks, and what a request tells about the agent. The
    defaults are Anthropic's documented client tools: `bash` (`{"command": "..."}`) runs commands and the
    text editor tool `str_replace_based_edit_tool` views (reads), creates (writes) and `str_replace`s (edits)
    files.

    `cwd` is the working directory when known (the backend's `cwd`, else what `find_cwd` learnt from a
    request): file paths are made absolute against it, and stay relative, as in the scenario, without it.
    """

    def tool_use(self, step: ToolStep, cwd: str | None) -> ToolUse:
        """The `tool_use` block for `step`: dispatches to the method for its kind."""
        if isinstance(step, RunCommand):
            return self.run_command(step, cwd)
        if isinstance(step, ReadFile):
            return self.read_file(step, cwd)
        if isinstance(step, WriteFile):
            return self.write_file(step, cwd)
        return self.edit_file(step, cwd)

    def run_command(self, step: RunCommand, cwd: str | None) -> ToolUse:
        return ToolUse("bash", {"command": step.command})

    def read_file(self, step: ReadFile, cwd: str | None) -> ToolUse:
        return ToolUse("str_replace_based_edit_tool", {"command": "view", "path": self.path(step.path, cwd)})

    def write_file(self, step: WriteFile, cwd: str | None) -> ToolUse:
        return ToolUse(
            "str_replace_based_edit_tool",
            {"command": "create", "path": self.path(step.path, cwd), "file_text": step.content},
        )

    def edit_file(self, step: EditFile, cwd: str | None) -> ToolUse:
        return ToolUse(
            "str_replace_based_edit_tool",
            {"command": "str_replace", "path": self.path(step.path, cwd), "old_str": step.old, "new_str": step.new},
        )

    @staticmethod
    def path(path: str, cwd: str | None) -> str:
        """`path` made absolute against `cwd` (unchanged if already absolute or `cwd` is None)."""
        if cwd is None or PurePosixPath(path).is_absolute():
            return path
        return str(PurePosixPath(cwd) / path)

    def find_cwd(self, body: Mapping[str, Any]) -> str | None:
        """The working directory the agent states in a request (its system prompt, say), if it states one.
        Asked only while the backend knows none. Default: None (paths stay relative)."""
        return None

    def deferred_tools(self, body: Mapping[str, Any]) -> list[str]:
        """The tools a request names as deferred, not offered until loaded through `tool_search`: by default the
        lines that are one name each in a text block that speaks of the `ToolSearch` tool (an agent that lists its
        MCP tools so, to load their schemas on demand)."""
        texts: list[str] = []
        system = body.get("system")
        for source in (system if isinstance(system, list) else [system]), *(
                m.get("content") for m in body.get("messages") or [] if isinstance(m, dict)):
            for block in source if isinstance(source, list) else [source]:
                text = block.get("text") if isinstance(block, dict) else block
                if isinstance(text, str) and "ToolSearch" in text:
                    texts.append(text)
        return [line.strip() for text in texts for line in text.splitlines() if _ONE_NAME.fullmatch(line.strip())]

    def tool_search(self, name: str) -> tuple[str, dict[str, Any]] | None:
        """The call that loads deferred tool `name`: by default `ToolSearch` with `select:NAME`."""
        return "ToolSearch", {"query": f"select:{name}", "max_results": 1}

    def is_turn(self, body: Mapping[str, Any]) -> bool:
        """Whether a `POST /v1/messages` with this body is a turn of the agent loop (it plays the next scenario
        step) rather than a side call of the agent's own (a title, a summary), answered without consuming one.
        Default: every such call is a turn."""
        return True
