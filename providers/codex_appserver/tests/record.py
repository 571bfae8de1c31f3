"""Record real app-server transcripts for the golden tests: `python tests/record.py` (needs the real codex).

Runs each recorded case through the provider against the scripted Responses backend, takes the runner's wire
log and writes tests/transcripts/<name>.jsonl (`{"dir","t","msg"}` per line; `{"case": ...}` between cases;
temporary paths rewritten to /tmp/e2e). Then regenerate the goldens: HARNESS_UPDATE_GOLDEN=1 pytest.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).parent))

from appserver_helpers import real_codex, run_real, wire_to_transcript
from harness_core import ApprovalDecision
from harness_core.offline import SCENARIOS
from harness_core.plugins import PluginHost

import harness_codex_appserver

OUT = Path(__file__).parent / "transcripts"
CASES = {
    "real-tools": [("tools", {}, None)],
    "real-think": [("think", {}, None)],
    "real-approvals": [
        ("tools", {"approval": "untrusted"}, ApprovalDecision.APPROVE),
        ("tools", {"approval": "untrusted"}, ApprovalDecision.DENY),
        ("tools", {"approval": "untrusted"}, ApprovalDecision.ABORT),
    ],
    "real-errors": [("fail_500", {}, None), ("fail_401", {}, None), ("fail_429", {}, None)],
}


async def main() -> None:
    codex = real_codex()
    if codex is None:
        raise SystemExit("real codex not found; run scripts/install-clis.sh")
    host = PluginHost.create(entry_points=False, plugins=[("codex-appserver", harness_codex_appserver)])
    OUT.mkdir(exist_ok=True)
    for name, cases in CASES.items():
        out = OUT / f"{name}.jsonl"
        out.unlink(missing_ok=True)
        for scenario_name, fields, decision in cases:
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp)
                ws, state, runs = root / "ws", root / "state", root / "runs"
                ws.mkdir()
                with out.open("a") as fh:
                    fh.write(
                        f'{{"case": "{scenario_name}:{fields.get("approval", "never")}:'
                        f'{decision.value if decision else "-"}"}}\n'
                    )
                _, live = await run_real(
                    SCENARIOS[scenario_name],
                    ws,
                    state,
                    codex,
                    host,
                    runs_dir=runs,
                    approver=(lambda _r, d=decision: d) if decision else None,
                    **fields,
                )
                n = wire_to_transcript(
                    runs / f"{live.run_id}.wire.jsonl",
                    out,
                    rewrite={os.path.realpath(root): "/tmp/e2e", str(root): "/tmp/e2e", root.name: "e2e"},  # noqa: ASYNC240
                )
                print(
                    f"{out.name}: {scenario_name} {fields} {decision}: {n} lines, {live.result.status.value}"
                )


if __name__ == "__main__":
    anyio.run(main)
