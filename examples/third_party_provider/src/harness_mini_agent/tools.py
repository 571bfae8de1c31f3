"""The two tools mini-agent offers the model: `exec_command` (a shell command) and `apply_patch`.

Layer: tool execution. Knows processes (through the run context's `spawn`), the workspace, the sandbox mode
and how a tool action is displayed; must not know HTTP, the Responses wire, approvals or the event stream.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from harness_core import HarnessToolDetails, MessageTooLargeError, SandboxMode, ToolStatus
from harness_core.provider import (
    ChildProcess,
    bounded_tail,
    classify_command,
    file_change_display,
    get_logger,
    redact_argv,
)

from harness_mini_agent.patch import (
    AddFile,
    DeleteFile,
    PatchError,
    parse_patch,
    plan_patch,
    resolve_inside,
    write_changes,
)

__all__ = [
    "OUTPUT_LIMIT",
    "Spawn",
    "ToolOutcome",
    "command_display",
    "command_env",
    "patch_display",
    "run_command",
    "run_patch",
]

log = get_logger(__name__)

OUTPUT_LIMIT = 32 * 1024
"""Bytes of command output kept for the model; the rest is cut from the middle."""

Spawn = Callable[..., ChildProcess]
"""What builds the `ChildProcess` of a command (argv, then `env=`, `cwd=` and its options): `ChildProcess`
itself. Not `RunContext.spawn`: a tool command is not agent protocol, its output stays out of the wire log."""


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool did: the text sent back to the model and the final display."""

    output: str
    display: HarnessToolDetails
    is_error: bool = False


def command_display(cmd: str, cwd: Path) -> HarnessToolDetails:
    """What the command does, read from its text by the core's `classify_command`: "Reading file PATH" for
    `cat PATH`, "Listing files" for `ls`, "Searching" for `rg`/`grep`/`find`, else "Running command CMD"."""
    action = classify_command(cmd)
    return HarnessToolDetails(
        kind=action.kind, title=action.title, path=action.path, command=cmd, cwd=str(cwd)
    )


def patch_display(patch: str, cwd: Path) -> HarnessToolDetails:
    """ "Writing file PATH" when the patch only adds files, "Deleting file PATH" when it only deletes, else
    "Editing file PATH" (the first file), with the core's kinds for each."""
    try:
        ops = parse_patch(patch)
    except PatchError:
        kind, title = file_change_display("update")
        return HarnessToolDetails(kind=kind, title=title, cwd=str(cwd))
    if all(isinstance(op, AddFile) for op in ops):
        change = "add"
    elif all(isinstance(op, DeleteFile) for op in ops):
        change = "delete"
    else:
        change = "update"
    kind, title = file_change_display(change)
    return HarnessToolDetails(
        kind=kind, title=title, path=ops[0].path, cwd=str(cwd), raw={"files": [op.path for op in ops]}
    )


def _bounded(chunks: list[bytes], dropped: int) -> str:
    text = b"".join(chunks).decode("utf-8", "replace")
    return text if not dropped else f"{text}\n… [{dropped} more bytes of output cut]"


async def run_command(
    cmd: str, cwd: Path, env: Mapping[str, str], spawn: Spawn = ChildProcess, *, login: bool = True
) -> ToolOutcome:
    """Run `bash -lc cmd` (`bash -c` unless `login`) in `cwd` as a child made by `spawn`; keep
    `OUTPUT_LIMIT` bytes of stdout and the stderr tail.

    Cancelling it (an interrupt) kills the command's whole process group promptly (ChildProcess, shielded).
    """
    display = command_display(cmd, cwd)
    argv = ["bash", "-lc" if login else "-c", cmd]
    started = time.monotonic()
    kept: list[bytes] = []
    size = dropped = 0
    async with spawn(
        argv,
        cwd=cwd,
        env=dict(env),
        stdin=False,
        max_line_bytes=OUTPUT_LIMIT,
        stderr_tail_bytes=8 * 1024,
        stdin_close_timeout=0.1,
        term_timeout=1.0,
        kill_timeout=1.0,
    ) as child:
        log.debug("command_started", pid=child.pid, argv=redact_argv(argv, ()))
        async for line in child.lines():
            piece = (
                f"[{line.details.get('size')}-byte line cut]".encode()
                if isinstance(line, MessageTooLargeError)
                else line
            ) + b"\n"
            if size + len(piece) <= OUTPUT_LIMIT:
                kept.append(piece)
                size += len(piece)
            else:
                dropped += len(piece)
        code = await child.wait()
        stderr = child.stderr_tail()
    output = _bounded(kept, dropped)
    if stderr.strip():
        output = f"{output}{stderr}" if output else stderr
    duration = int((time.monotonic() - started) * 1000)
    log.debug("command_finished", exit_code=code, duration_ms=duration)
    status = ToolStatus.COMPLETED if code == 0 else ToolStatus.FAILED
    final = display.model_copy(
        update={
            "status": status,
            "exit_code": code,
            "duration_ms": duration,
            "summary": bounded_tail(output.strip()),
        }
    )
    return ToolOutcome(f"{output}\n[exit code {code}, {duration} ms]".lstrip("\n"), final, is_error=code != 0)


def run_patch(patch: str, cwd: Path, sandbox: SandboxMode) -> ToolOutcome:
    """Apply `patch` inside `cwd`; a read-only sandbox or a path outside `cwd` refuses it (no write)."""
    display = patch_display(patch, cwd)
    started = time.monotonic()

    def read(rel: str) -> str | None:
        path = resolve_inside(cwd, rel)
        return path.read_text() if path.is_file() else None

    try:
        if sandbox is SandboxMode.READ_ONLY:
            raise PatchError("the sandbox is read-only: no file may be changed in this run")
        changes = plan_patch(parse_patch(patch), read)
        write_changes(cwd, changes)
    except (PatchError, OSError) as exc:
        message = f"patch not applied: {exc}"
        final = display.model_copy(
            update={
                "status": ToolStatus.FAILED,
                "summary": bounded_tail(message),
                "duration_ms": int((time.monotonic() - started) * 1000),
            }
        )
        return ToolOutcome(message, final, is_error=True)
    done = ", ".join(f"{c.action} {c.path}" for c in changes)
    final = display.model_copy(
        update={
            "status": ToolStatus.COMPLETED,
            "summary": done,
            "duration_ms": int((time.monotonic() - started) * 1000),
        }
    )
    return ToolOutcome(f"Success. Updated the following files: {done}", final)


def command_env(extra: Mapping[str, str], hide: str) -> dict[str, str]:
    """The environment of a command: this process's plus `spec.env`, without the API key variable `hide`."""
    env = {**os.environ, **extra}
    env.pop(hide, None)
    return env
