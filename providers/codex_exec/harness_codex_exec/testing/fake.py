"""A fake `codex` that plays a scenario as `codex exec --json` lines, with the real 0.169.0 shapes.

Layer: testing. Knows the exec JSONL format (checked against recorded real transcripts by the codex-exec
tests) and the scenario vocabulary; knows nothing of Harness providers or events. Tool steps are simulated,
never executed, and nothing outside `$CODEX_HOME` is written.

Run it as `python -m harness_codex_exec.testing.fake exec --json ... PROMPT` or through the wrapper
`write_fake_codex(dir)` creates (for `-o codex_bin=PATH`). Environment:

- `HARNESS_FAKE_SCENARIO`: a name from `SCENARIOS` (default `say`).
- `HARNESS_FAKE_CODEX_VERSION`: what `--version` prints after `codex-cli ` (default 0.169.0).
- `HARNESS_FAKE_CODEX_CRASH`: when set, print it on stderr after `turn.started` and exit 101 (a crash).
- `CODEX_HOME`: when set, threads are saved as rollout files there (the same token totals the real CLI
  keeps), so `resume` continues a thread and usage keeps growing; an unknown thread fails as codex does.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from harness_core.offline.scenarios import (
    SCENARIOS,
    EditFile,
    Fail,
    ReadFile,
    RunCommand,
    Say,
    Scenario,
    Stall,
    TakeLong,
    Think,
    WriteFile,
    apply_file_step,
    command_sleep,
)

__all__ = ["DEFAULT_VERSION", "main", "write_fake_codex"]

DEFAULT_VERSION = "0.169.0"
_VALUE_FLAGS = {
    "-C",
    "--cd",
    "-s",
    "--sandbox",
    "-m",
    "--model",
    "-c",
    "--config",
    "--enable",
    "--disable",
    "-p",
    "--profile",
    "-o",
    "--output-last-message",
    "-i",
    "--image",
    "--color",
}
_PER_STEP = {"input_tokens": 100, "cached_input_tokens": 0, "output_tokens": 20, "reasoning_output_tokens": 0}
_FAIL_MESSAGES = {
    401: "unexpected status 401 Unauthorized: {message}, url: http://127.0.0.1/v1/responses",
    429: "exceeded retry limit, last status: 429 Too Many Requests",
    500: "We\u2019re currently experiencing high demand, which may cause temporary errors.",
}


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _parse(argv: list[str]) -> dict[str, Any]:
    opts: dict[str, Any] = {"cwd": os.getcwd(), "resume": None, "positionals": []}
    i, only_positionals = 0, False
    while i < len(argv):
        arg = argv[i]
        if only_positionals or not arg.startswith("-") or arg == "-":
            if (
                arg == "resume"
                and not only_positionals
                and not opts["positionals"]
                and opts["resume"] is None
            ):
                opts["resume"] = ""
            else:
                opts["positionals"].append(arg)
        elif arg == "--":
            only_positionals = True
        elif arg in _VALUE_FLAGS:
            if arg in ("-C", "--cd"):
                opts["cwd"] = argv[i + 1]
            i += 1
        i += 1
    if opts["resume"] is not None and opts["positionals"]:
        opts["resume"] = opts["positionals"].pop(0)
    return opts


def _rollout_path(home: Path, thread_id: str) -> Path:
    return home / "sessions" / "2026" / "01" / "01" / f"rollout-2026-01-01T00-00-00-{thread_id}.jsonl"


def _load_total(home: Path | None, thread_id: str) -> dict[str, int] | None:
    if home is None:
        return dict.fromkeys(_PER_STEP, 0)
    path = _rollout_path(home, thread_id)
    if not path.exists():
        return None
    total = dict.fromkeys(_PER_STEP, 0)
    for line in path.read_text().splitlines():
        payload = json.loads(line).get("payload", {})
        if payload.get("type") == "token_count":
            total = {k: payload["info"]["total_token_usage"][k] for k in _PER_STEP}
    return total


def _save_total(home: Path | None, thread_id: str, total: dict[str, int]) -> None:
    if home is None:
        return
    path = _rollout_path(home, thread_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    info = {"total_token_usage": {**total, "total_tokens": total["input_tokens"] + total["output_tokens"]}}
    with path.open("a") as f:
        f.write(json.dumps({"type": "event_msg", "payload": {"type": "token_count", "info": info}}) + "\n")


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


def _play(scenario: Scenario, cwd: str, items: _Items) -> str | None:
    """Emit the scenario's items; return a failure message if the scripted API fails."""
    for step in scenario.steps:
        if isinstance(step, Think):
            _emit(
                {
                    "type": "item.completed",
                    "item": {"id": items.next_id(), "type": "reasoning", "text": step.text},
                }
            )
        elif isinstance(step, Say):
            if step.delay:
                time.sleep(step.delay * max(step.chunks - 1, 0))
            _emit(
                {
                    "type": "item.completed",
                    "item": {"id": items.next_id(), "type": "agent_message", "text": step.text},
                }
            )
        elif isinstance(step, (RunCommand, ReadFile)):
            command = step.command if isinstance(step, RunCommand) else f"cat {shlex.quote(step.path)}"
            output = step.output if isinstance(step, RunCommand) else apply_file_step(step, cwd)
            code = step.exit_code if isinstance(step, RunCommand) else 0
            item_id = items.next_id()
            _emit({"type": "item.started", "item": _command_item(item_id, command, "", None)})
            if command_sleep(command):
                time.sleep(command_sleep(command))
            _emit({"type": "item.completed", "item": _command_item(item_id, command, output, code)})
        elif isinstance(step, (WriteFile, EditFile)):
            apply_file_step(step, cwd)
            change = {
                "path": os.path.join(cwd, step.path),
                "kind": "add" if isinstance(step, WriteFile) else "update",
            }
            item_id = items.next_id()
            for phase, status in (("item.started", "in_progress"), ("item.completed", "completed")):
                _emit(
                    {
                        "type": phase,
                        "item": {"id": item_id, "type": "file_change", "changes": [change], "status": status},
                    }
                )
        elif isinstance(step, Fail):
            template = _FAIL_MESSAGES.get(step.status, "unexpected status {status}: {message}")
            return template.format(status=step.status, message=step.message)
        elif isinstance(step, (Stall, TakeLong)):
            time.sleep(step.seconds)
    return None


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["--version"], ["-V"]):
        print(f"codex-cli {os.environ.get('HARNESS_FAKE_CODEX_VERSION', DEFAULT_VERSION)}")
        return 0
    if args[:1] != ["exec"] or "--json" not in args:
        print("fake codex: only `codex exec --json ...` and `--version` are supported", file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, lambda *_: os._exit(1))  # the real CLI exits 1 on SIGINT, no final line
    opts = _parse(args[1:])
    home = Path(os.environ["CODEX_HOME"]) if os.environ.get("CODEX_HOME") else None
    if not sys.stdin.isatty():
        print("Reading additional input from stdin...", file=sys.stderr, flush=True)
    scenario = SCENARIOS[os.environ.get("HARNESS_FAKE_SCENARIO", "say")]
    thread_id = opts["resume"] or str(uuid.uuid4())
    total = _load_total(home, thread_id) if opts["resume"] else dict.fromkeys(_PER_STEP, 0)
    if total is None:
        print(
            f"Error: thread/resume: thread/resume failed: no rollout found for thread id {thread_id} "
            "(code -32600)",
            file=sys.stderr,
        )
        return 1
    _emit({"type": "thread.started", "thread_id": thread_id})
    _emit({"type": "turn.started"})
    crash = os.environ.get("HARNESS_FAKE_CODEX_CRASH")
    if crash:
        print(crash, file=sys.stderr, flush=True)
        return 101
    failure = _play(scenario, opts["cwd"], _Items())
    if failure is not None:
        _emit({"type": "error", "message": failure})
        _emit({"type": "turn.failed", "error": {"message": failure}})
        return 1
    steps = max(1, sum(1 for s in scenario.steps if not isinstance(s, Think)))
    total = {k: total[k] + v * steps for k, v in _PER_STEP.items()}
    _save_total(home, thread_id, total)
    usage = {k: total[k] for k in ("input_tokens", "cached_input_tokens")}
    usage.update(
        cache_write_input_tokens=0,
        output_tokens=total["output_tokens"],
        reasoning_output_tokens=total["reasoning_output_tokens"],
    )
    _emit({"type": "turn.completed", "usage": usage})
    return 0


def write_fake_codex(directory: str | os.PathLike[str], *, version: str | None = None) -> Path:
    """Write an executable `codex` into `directory` that runs this fake with this Python; return its path."""
    path = Path(directory) / "codex"
    env = f"HARNESS_FAKE_CODEX_VERSION={shlex.quote(version)} " if version else ""
    path.write_text(
        f'#!/bin/sh\n{env}exec {shlex.quote(sys.executable)} -m harness_codex_exec.testing.fake "$@"\n'
    )
    path.chmod(0o755)
    return path


if __name__ == "__main__":
    sys.exit(main())
