"""A fake `claude` CLI speaking `claude -p` bidirectional stream-json for a `Scenario` (no model, no Node).

Layer: testing (fake CLI), the command's entry point, stdlib only (plus the scenarios). Knows the command line,
the first stdin message and how a scenario is chosen; the turn is `player`'s, its lines `shapes`', the pipes
`control`'s. Knows nothing of Harness providers or events. Its flags and environment: providers/claude/README.md.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import uuid
from dataclasses import replace
from typing import Any

from harness_core.scripted.scenarios import SCENARIOS, Say, Scenario, WriteFile

from harness_claude.testing import shapes
from harness_claude.testing.control import Wire
from harness_claude.testing.player import Flags, Player
from harness_claude.testing.writer import CRASH_ENV, SCENARIO_ENV, VERSION_ENV

__all__ = ["ENV_LOG_ENV", "IGNORE_ENV", "LOG_ENV", "main", "prompt_text", "scenario_for"]

LOG_ENV = "HARNESS_FAKE_CLAUDE_STDIN_LOG"
ENV_LOG_ENV = "HARNESS_FAKE_CLAUDE_ENV_LOG"
"""A file the fake appends, once per process, the trace context its environment gave it (`TRACEPARENT`,
`TRACESTATE`, each null when unset): what the real CLI reads for its own telemetry."""
IGNORE_ENV = "HARNESS_FAKE_CLAUDE_IGNORE"


def prompt_text(message: dict[str, Any]) -> str:
    """The text of the stream-json user message that starts the turn."""
    inner = message.get("message")
    content = inner.get("content", "") if isinstance(inner, dict) else ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def attachments_of(message: dict[str, Any]) -> list[tuple[str, int]]:
    """The media type and size in bytes of each image or document block of a user message."""
    inner = message.get("message")
    content = inner.get("content") if isinstance(inner, dict) else None
    found: list[tuple[str, int]] = []
    for block in content if isinstance(content, list) else []:
        source = block.get("source") if isinstance(block, dict) else None
        if block.get("type") not in ("image", "document") or not isinstance(source, dict):
            continue
        data = str(source.get("data") or "")
        if source.get("type") == "base64":
            found.append((str(source.get("media_type")), len(base64.b64decode(data))))
        else:
            found.append((str(source.get("media_type") or "text/plain"), len(data.encode())))
    return found


def scenario_for(prompt: str, default: str | None) -> Scenario:
    """The scenario a prompt asks for (`SCENARIO:<name>`), else `default`, else `say`; an unknown name plays
    one answer echoing the prompt; `ANSWER:<text>` answers exactly `text`."""
    if prompt.startswith("ANSWER:"):
        return Scenario("answer", (Say(prompt.removeprefix("ANSWER:")),))
    if prompt.startswith("WRITE:"):
        return Scenario("write", (WriteFile(prompt.removeprefix("WRITE:").strip(), "written\n"), Say("wrote it")))
    words = prompt.split("SCENARIO:", 1)[1].split() if "SCENARIO:" in prompt else []
    name = words[0] if words else (default or "say")
    return SCENARIOS.get(name) or Scenario(name, (Say(f"echo: {prompt}"),))


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if "--version" in args:
        print(f"{os.environ.get(VERSION_ENV) or shapes.VERSION} (Claude Code)")
        return 0
    _log_env()
    ignore = frozenset(s.strip() for s in os.environ.get(IGNORE_ENV, "").split(",") if s.strip())
    wire = Wire(ignore=ignore)
    wire.start()
    first = wire.next_message()
    if first is None:
        return 0
    flags = Flags.parse(args)
    if flags.resume is not None and not _is_uuid(flags.resume):  # as 2.1.328: no such session or title
        line, said = shapes.resume_refused(flags.resume)
        wire.emit(line)
        print(said, file=sys.stderr, flush=True)
        return 1
    player = Player(flags, wire, cwd=os.getcwd(), crash=bool(os.environ.get(CRASH_ENV)))
    code = 0
    msg: dict[str, Any] | None = first
    while msg is not None:  # like the real CLI: a turn per user message, until stdin closes
        _log(msg)
        request = msg.get("request") if msg.get("type") == "control_request" else None
        if isinstance(request, dict) and request.get("subtype") not in wire.ignore:
            answer = _control(player, request)
            if answer is not None:
                wire.emit(shapes.control_success(msg.get("request_id"), answer))
        elif msg.get("type") == "user":
            player.attachments = attachments_of(msg)
            player.init()
            code = player.play(scenario_for(prompt_text(msg), os.environ.get(SCENARIO_ENV)))
        msg = wire.next_message()
    return code


def _control(player: Player, request: dict[str, Any]) -> dict[str, Any] | None:
    """Apply `set_model` / `set_permission_mode` (the answer), ignore the rest (an interrupt between turns)."""
    if request.get("subtype") == "set_model":
        model = request.get("model")
        player.flags = replace(player.flags, model=model if isinstance(model, str) and model else shapes.MODEL)
        return {"model": player.flags.model}
    if request.get("subtype") == "set_permission_mode":
        player.flags = replace(player.flags, mode=str(request.get("mode")))
        return {"mode": player.flags.mode}
    return None


def _log_env() -> None:
    path = os.environ.get(ENV_LOG_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps({name: os.environ.get(name) for name in ("TRACEPARENT", "TRACESTATE")}) + "\n")


def _log(msg: dict[str, Any]) -> None:
    path = os.environ.get(LOG_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps(msg) + "\n")


if __name__ == "__main__":
    sys.exit(main())
