"""Record real Claude Code transcripts for the golden tests (needs the real CLI; offline backend).

    python providers/claude/tests/record.py [NAME ...]    # default: every recording below

Each recording runs one scenario through the real provider and the runner with a wire log, then stores the
CLI's stdout lines as `transcripts/recorded/<name>.jsonl` and what was written to its stdin as
`<name>.stdin.jsonl`, with the temporary directory rewritten to /tmp/e2e. Review the diff, then regenerate
the golden files (HARNESS_UPDATE_GOLDEN=1 pytest providers/claude/tests/test_mapping.py).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from harness_core import AgentRunSpec, ApprovalDecision, ApprovalPolicy, HarnessEvent, open_run
from harness_core.scripted.scenarios import SCENARIOS, RunCommand, Say, Scenario, WriteFile

from harness_claude.provider import ClaudeProvider

HERE = Path(__file__).parent
OUT = HERE / "transcripts" / "recorded"
CLAUDE = (
    os.environ.get("HARNESS_CLAUDE_BIN")
    or shutil.which("claude")
    or str(HERE.parents[2] / ".tools" / "bin" / "claude")
)


@dataclass(frozen=True)
class Recording:
    scenario: Scenario
    approval: ApprovalPolicy = ApprovalPolicy.NEVER
    decision: ApprovalDecision = ApprovalDecision.APPROVE
    interrupt_on: str | None = None
    """Interrupt once an event of this type arrives ("text_delta", "tool_use")."""
    options: dict[str, Any] = field(default_factory=dict)
    resume: str | None = None
    """A session id to `--resume` (one the CLI does not know, for the failure)."""


TOUCH = Scenario("touch", (RunCommand("touch touched.txt"), Say("after permission")))
RECORDINGS: dict[str, Recording] = {
    "tools": Recording(SCENARIOS["tools"]),
    "think": Recording(SCENARIOS["think"]),
    "fail_500": Recording(SCENARIOS["fail_500"]),
    "fail_401": Recording(SCENARIOS["fail_401"]),
    "fail_429": Recording(SCENARIOS["fail_429"]),
    "approve": Recording(TOUCH, ApprovalPolicy.UNTRUSTED),
    "deny": Recording(TOUCH, ApprovalPolicy.UNTRUSTED, ApprovalDecision.DENY),
    "interrupt_stream": Recording(SCENARIOS["slow_text"], interrupt_on="text_delta"),
    "interrupt_tool": Recording(SCENARIOS["slow_command"], interrupt_on="tool_use"),
    "stall": Recording(SCENARIOS["stall"], options={"stream_idle_timeout_ms": 10_000}),
    # approval never: a write that needs a permission is denied automatically (--permission-prompts none)
    "never_denied": Recording(
        Scenario("write_denied", (WriteFile("denied.txt", "x\n"), Say("could not write"))),
        options={"permission_mode": "default"},
    ),
    # --resume of a session this CLI home never saw: a well-formed id, and a value that is not a UUID at all
    "resume_unknown": Recording(SCENARIOS["say"], resume="3f1c2a9e-0000-4000-8000-000000000000"),
    "resume_not_uuid": Recording(SCENARIOS["say"], resume="not-a-session"),
}


async def record(name: str, rec: Recording) -> list[HarnessEvent]:
    tmp = Path(tempfile.mkdtemp(prefix="harness-claude-rec-"))
    try:
        ws, state, runs = tmp / "ws", tmp / "state", tmp / "runs"
        for d in (ws, state, runs):
            d.mkdir()
        for rel, content in rec.scenario.files.items():
            (ws / rel).write_text(content)
        events: list[HarnessEvent] = []
        setup = ClaudeProvider().offline_setup(rec.scenario, ws, state)
        assert setup.backend is not None
        with setup.backend:
            spec = AgentRunSpec(
                prompt=f"SCENARIO:{rec.scenario.name}",
                cwd=ws,
                approval=rec.approval,
                resume_session=rec.resume,
                env=setup.env,
                provider_options={"claude_bin": CLAUDE, "max_retries": 0, **rec.options},
            )
            with anyio.fail_after(60):
                async with open_run(
                    spec, "claude", runs_dir=runs, record_wire=True, approver=lambda _r: rec.decision
                ) as live:
                    async for event in live:
                        events.append(event)
                        if rec.interrupt_on == event.type:
                            live.interrupt()
        wire = next(runs.glob("*.wire.jsonl"))
        lines = [json.loads(x) for x in wire.read_text().splitlines()]
        OUT.mkdir(parents=True, exist_ok=True)
        for direction, suffix in (("in", ".jsonl"), ("out", ".stdin.jsonl")):
            text = "".join(r["line"] + "\n" for r in lines if r["dir"] == direction)
            (OUT / f"{name}{suffix}").write_text(text.replace(str(tmp), "/tmp/e2e"))
        return events
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


async def main(names: list[str]) -> None:
    for name in names or list(RECORDINGS):
        events = await record(name, RECORDINGS[name])
        done = events[-1]
        print(f"{name}: {len(events)} events, {done.model_dump(mode='json').get('result', {}).get('status')}")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1:])
