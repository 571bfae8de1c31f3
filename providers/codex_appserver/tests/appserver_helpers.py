"""Helpers to run the real codex app-server through the provider against the scripted Responses backend.

Used by the real-CLI tests and by `record.py`. Everything is local: the backend listens on 127.0.0.1 and
CODEX_HOME is a fresh directory per run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness_core.events import HarnessEvent
from harness_core.plugins import PluginHost
from harness_core.runner import Approver, open_run
from harness_core.spec import AgentRunSpec
from harness_core.testing.backends.responses import CODEX_FLAGS, ResponsesBackend
from harness_core.testing.scenarios import Scenario


def backend_options(backend: ResponsesBackend, codex: Path, home: Path) -> dict[str, Any]:
    """Provider options pointing the real codex at `backend` (its `-c` overrides and `CODEX_FLAGS`)."""
    config = dict(value.split("=", 1) for value in backend.codex_config_overrides())
    disable = [CODEX_FLAGS[i + 1] for i, flag in enumerate(CODEX_FLAGS) if flag == "--disable"]
    return {"codex_bin": str(codex), "codex_home": str(home), "config": config, "disable": disable}


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
