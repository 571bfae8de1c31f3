"""Helpers shared by the codex-appserver tests (a uniquely named module, not `conftest`, so that several
test directories can run in one pytest session): finding the real codex, listing this process's children,
and running the real app-server through the provider against the scripted Responses backend.

Used by the real-CLI tests and `record.py`. Everything is local: the provider's own `offline_setup` (the one
`harness run --offline` uses) starts the backend on 127.0.0.1, with CODEX_HOME and HOME under a state
directory of the test's.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness_codex_common import offline_setup
from harness_core import AgentRunSpec, Approver, HarnessEvent, open_run
from harness_core.offline import Scenario, seed_workspace
from harness_core.plugins import PluginHost

REPO = Path(__file__).resolve().parents[3]
NATIVE_IN_TOOLS = "codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
MISSING_CODEX = "real codex not installed: run scripts/install-clis.sh or set HARNESS_CODEX_BIN"
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}},
    "required": ["answer"],
    "additionalProperties": False,
}
"""The output schema the session tests (fake and real) ask for."""


def real_codex() -> Path | None:
    """The pinned real codex if installed: $HARNESS_CODEX_BIN, the native binary under $HARNESS_TOOLS_DIR
    (default: the repo's .tools), or `codex` on PATH."""
    explicit = os.environ.get("HARNESS_CODEX_BIN")
    if explicit:
        return Path(explicit)
    native = Path(os.environ.get("HARNESS_TOOLS_DIR") or REPO / ".tools") / NATIVE_IN_TOOLS
    if native.exists():
        return native
    found = shutil.which("codex")
    return Path(found) if found else None


def children() -> set[int]:
    """Live (non-zombie) descendants of this test process, from /proc."""
    me = os.getpid()
    out: set[int] = set()
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields[0] != "Z":
            parents[int(entry)] = int(fields[1])
    frontier = {me}
    while frontier:
        nxt = {pid for pid, ppid in parents.items() if ppid in frontier and pid not in out}
        out |= nxt
        frontier = nxt
    return out


async def run_real(
    scenario: Scenario,
    ws: Path,
    state: Path,
    codex: Path,
    host: PluginHost,
    *,
    approver: Approver | None = None,
    on_event: Callable[[HarnessEvent, Any], None] | None = None,
    runs_dir: Path | None = None,
    **spec_fields: Any,
) -> tuple[list[HarnessEvent], Any]:
    """Run one turn of the real `codex` against the scripted backend, its CODEX_HOME and HOME under `state`
    (the same `state` for two runs: the second can resume the first's thread); `on_event(event, live)` may
    interrupt. Returns (events, live run)."""
    seed_workspace(scenario, ws)
    setup = offline_setup(scenario, ws, state)
    assert setup.backend is not None
    events: list[HarnessEvent] = []
    with setup.backend:
        spec = AgentRunSpec(
            prompt=f"scenario {scenario.name}",
            cwd=ws,
            env=setup.env,
            provider_options={**setup.provider_options, "codex_bin": str(codex)},
            **spec_fields,
        )
        async with open_run(
            spec,
            "codex-appserver",
            host=host,
            approver=approver,
            run_log=runs_dir is not None,
            runs_dir=runs_dir,
            record_wire=runs_dir is not None,
        ) as live:
            async for event in live:
                events.append(event)
                if on_event is not None:
                    on_event(event, live)
    return events, live


def wire_to_transcript(wire: Path, out: Path, *, rewrite: dict[str, str]) -> int:
    """A runner wire log's lines to and from the child (`{"dir": "in"|"out","t","line"}`; the header, `spawn`,
    `err`, `exit`, `file`, `approval` and `interrupt` records of format 2 are left out) → a transcript
    (`{"dir","t","msg"}`, t from 0, paths rewritten). Returns the number of lines written."""
    rows = [row for row in (json.loads(line) for line in wire.read_text().splitlines() if line.strip())
            if row.get("dir") in ("in", "out")]
    if not rows:
        return 0
    t0 = rows[0]["t"]
    with out.open("a") as fh:
        for row in rows:
            text = row["line"]
            for old, new in rewrite.items():
                text = text.replace(old, new)
            fh.write(
                json.dumps({"dir": row["dir"], "t": round(row["t"] - t0, 4), "msg": json.loads(text)}) + "\n"
            )
    return len(rows)
