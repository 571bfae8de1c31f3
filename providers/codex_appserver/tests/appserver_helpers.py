"""Helpers shared by the codex-appserver tests (a uniquely named module, not `conftest`, so that several
test directories can run in one pytest session): finding the real codex, listing this process's children,
and running the real app-server through the provider against the scripted Responses backend.

Used by the real-CLI tests, the contract test and `record.py`. Everything is local: the backend listens on
127.0.0.1 and CODEX_HOME is a fresh directory per run.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness_codex_common.cli import offline_options
from harness_core.events import HarnessEvent
from harness_core.plugins import PluginHost
from harness_core.runner import Approver, open_run
from harness_core.spec import AgentRunSpec
from harness_core.offline.backends.responses import ResponsesBackend
from harness_core.offline.scenarios import Scenario

REPO = Path(__file__).resolve().parents[3]
NATIVE_IN_TOOLS = "codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
MISSING_CODEX = "real codex not installed: run scripts/install-clis.sh or set HARNESS_CODEX_BIN"


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


def backend_options(backend: ResponsesBackend, codex: Path, home: Path) -> dict[str, Any]:
    """Provider options pointing the real codex at `backend`: the provider's own offline options (the same
    ones `harness run --offline` uses) with `home` as CODEX_HOME, plus `codex_bin`."""
    return {**offline_options(backend, home), "codex_bin": str(codex)}


def prepare(scenario: Scenario, ws: Path) -> None:
    for rel, content in scenario.files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(content)


async def run_real(
    scenario: Scenario,
    ws: Path,
    home: Path,
    codex: Path,
    host: PluginHost,
    *,
    approver: Approver | None = None,
    on_event: Callable[[HarnessEvent, Any], None] | None = None,
    runs_dir: Path | None = None,
    **spec_fields: Any,
) -> tuple[list[HarnessEvent], Any]:
    """Run one turn; `on_event(event, live)` may interrupt. Returns (events, live run)."""
    prepare(scenario, ws)
    events: list[HarnessEvent] = []
    with ResponsesBackend(scenario, cwd=ws) as backend:
        spec = AgentRunSpec(
            prompt=f"scenario {scenario.name}",
            cwd=ws,
            env=backend.codex_env(),
            provider_options=backend_options(backend, codex, home),
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
    """A runner wire log (`{"dir","t","line"}`) → a transcript (`{"dir","t","msg"}`, t from 0, paths
    rewritten). Returns the number of lines written."""
    rows = [json.loads(line) for line in wire.read_text().splitlines() if line.strip()]
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
