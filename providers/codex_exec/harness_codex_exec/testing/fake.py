"""A fake `codex` that plays a scenario as `codex exec --json` lines, with the real 0.169.0 shapes.

Layer: testing. Knows the exec command line, its start and end lines, how codex exits and where it keeps a
thread's token total; the items are `player`'s. Knows nothing of Harness providers or events. Nothing outside
the workspace and `$CODEX_HOME` is written. How to run it, its environment: providers/codex_exec/README.md.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import uuid
from pathlib import Path
from typing import Any

from harness_codex_exec.testing.player import emit, play
from harness_codex_exec.testing.wrapper import DEFAULT_VERSION
from harness_core.scripted.scenarios import SCENARIOS, Think

__all__ = ["ENV_FILE", "main"]

_CRASH_MESSAGE = "fake codex: simulated crash in the middle of a turn"
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
    "--output-schema",
}
_PER_STEP = {"input_tokens": 100, "cached_input_tokens": 0, "output_tokens": 20, "reasoning_output_tokens": 0}


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
            if arg in ("-i", "--image"):
                opts.setdefault("images", []).append(argv[i + 1])
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
    info = {"total_token_usage": {**total, "total_tokens": total["input_tokens"] + total["output_tokens"]}}
    _save(home, thread_id, {"type": "event_msg", "payload": {"type": "token_count", "info": info}})


def _save(home: Path | None, thread_id: str, record: dict[str, Any]) -> None:
    """Append `record` to the thread's rollout file (nothing without `CODEX_HOME`)."""
    if home is None:
        return
    path = _rollout_path(home, thread_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        f.write(json.dumps(record) + "\n")


ENV_FILE = "fake-env.jsonl"
"""Under `$CODEX_HOME`: one line per `codex exec` the fake played, the trace context its environment gave it
(`TRACEPARENT`, `TRACESTATE`, null when unset), which the real one continues its own spans from."""


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["--version"], ["-V"]):
        print(f"codex-cli {os.environ.get('HARNESS_FAKE_VERSION') or DEFAULT_VERSION}")
        return 0
    if args[:1] != ["exec"] or "--json" not in args:
        print("fake codex: only `codex exec --json ...` and `--version` are supported", file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, lambda *_: os._exit(1))  # the real CLI exits 1 on SIGINT, no final line
    opts = _parse(args[1:])
    home = Path(os.environ["CODEX_HOME"]) if os.environ.get("CODEX_HOME") else None
    if home is not None:  # what the real one continues its trace from (ENV_FILE)
        home.mkdir(parents=True, exist_ok=True)
        with (home / ENV_FILE).open("a") as out:
            out.write(json.dumps({name: os.environ.get(name) for name in ("TRACEPARENT", "TRACESTATE")}) + "\n")
    prompt = opts["positionals"][-1] if opts["positionals"] else "-"
    if prompt == "-":  # as 0.169.0: the prompt is all of stdin, and there must be one
        prompt = "" if sys.stdin.isatty() else sys.stdin.read()
        if not prompt.strip():
            print("No prompt provided via stdin.", file=sys.stderr)
            return 1
    elif not sys.stdin.isatty():  # a prompt argument and piped input: the input is appended as a <stdin> block
        print("Reading additional input from stdin...", file=sys.stderr, flush=True)
        prompt += f"\n<stdin>\n{sys.stdin.read()}\n</stdin>"
    name = os.environ.get("HARNESS_FAKE_SCENARIO") or "say"
    scenario = SCENARIOS.get(name)
    if scenario is None:
        print(f"fake codex: unknown scenario {name!r}; known: {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    thread_id = opts["resume"] or str(uuid.uuid4())
    total = _load_total(home, thread_id) if opts["resume"] else dict.fromkeys(_PER_STEP, 0)
    if total is None:
        print(
            f"Error: thread/resume: thread/resume failed: no rollout found for thread id {thread_id} "
            "(code -32600)",
            file=sys.stderr,
        )
        return 1
    _save(home, thread_id, {"type": "response_item", "payload": {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": prompt}]}})  # the thread keeps the user's message, as the real rollout does
    emit({"type": "thread.started", "thread_id": thread_id})
    emit({"type": "turn.started"})
    crash = os.environ.get("HARNESS_FAKE_CRASH")
    if crash:
        print(_CRASH_MESSAGE if crash == "1" else crash, file=sys.stderr, flush=True)
        return 101
    failure = play(scenario, opts["cwd"], images=opts.get("images", []))
    if failure is not None:
        emit({"type": "error", "message": failure})
        emit({"type": "turn.failed", "error": {"message": failure}})
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
    emit({"type": "turn.completed", "usage": usage})
    return 0


if __name__ == "__main__":
    sys.exit(main())
