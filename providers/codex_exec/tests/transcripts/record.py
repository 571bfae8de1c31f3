"""Record real `codex exec --json` transcripts against the scripted Responses backend (golden fixtures).

Layer: test tooling for codex-exec. Run by hand when the pinned codex changes:

    .venv/bin/python providers/codex_exec/tests/transcripts/record.py [CODEX_BIN]

Each case writes `<case>.jsonl`: a header line `{"case", "argv", "exit"}` then codex's stdout lines as
printed. Workspace and CODEX_HOME paths are rewritten to `/tmp/e2e/ws` and `/tmp/e2e/home` and the
backend's port to 1, so the files are stable. Needs loopback only.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness_codex_common import offline_setup

from harness_codex_exec.argv import build_argv
from harness_codex_exec.options import CodexExecOptions
from harness_core import AgentRunSpec, SandboxMode
from harness_core.offline import SCENARIOS, Scenario
from harness_core.scripted.scenarios import Say

HERE = Path(__file__).parent
NATIVE = (
    Path(__file__).resolve().parents[4]
    / ".tools/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
)


def _run(
    codex: str,
    scenario: Scenario,
    root: Path,
    *,
    resume: str | None = None,
    kill_after: float | None = None,
    system_prompt: str | None = None,
) -> tuple[list[str], list[str], int]:
    ws = root / "ws"
    ws.mkdir(exist_ok=True)
    for rel, content in scenario.files.items():
        (ws / rel).write_text(content)
    setup = offline_setup(scenario, ws, root / "state")  # the provider's own offline setup, codex run by hand
    assert setup.backend is not None
    home = Path(setup.provider_options["codex_home"])
    with setup.backend as backend:
        spec = AgentRunSpec(
            prompt="do the scripted work",
            cwd=ws,
            sandbox=SandboxMode.WORKSPACE_WRITE,
            resume_session=resume,
            system_prompt=system_prompt,
        )
        options = CodexExecOptions.model_validate(setup.provider_options)
        argv = build_argv(codex, spec, options)
        env = {**os.environ, "CODEX_HOME": str(home), **setup.env}
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=ws,
            start_new_session=True,
        )
        if kill_after is not None:
            time.sleep(kill_after)
            os.killpg(proc.pid, signal.SIGTERM)
        out, _err = proc.communicate(timeout=60)
        port = str(backend.port)

    def clean(text: str) -> str:
        return (
            text.replace(str(ws), "/tmp/e2e/ws")
            .replace(str(home), "/tmp/e2e/home")
            .replace(f"127.0.0.1:{port}", "127.0.0.1:1")
            .replace(codex, "codex")
        )

    return [clean(a) for a in argv], [clean(line) for line in out.decode().splitlines()], proc.returncode


def _write(case: str, argv: list[str], lines: list[str], code: int) -> None:
    header = json.dumps({"case": case, "argv": argv, "exit": code})
    (HERE / f"{case}.jsonl").write_text("\n".join([header, *lines]) + "\n")
    print(f"{case}: {len(lines)} lines, exit {code}")


def main() -> None:
    codex = sys.argv[1] if len(sys.argv) > 1 else str(NATIVE)
    for name in ("say", "tools", "think", "fail_500", "fail_401", "fail_429"):
        with tempfile.TemporaryDirectory() as tmp:
            _write(name, *_run(codex, SCENARIOS[name], Path(tmp)))
    with tempfile.TemporaryDirectory() as tmp:
        argv, lines, code = _run(codex, SCENARIOS["tools"], Path(tmp), system_prompt="Answer tersely.")
        _write("resume_first", argv, lines, code)
        thread = json.loads(lines[0])["thread_id"]
        _write(
            "resume_second",
            *_run(codex, Scenario("again", (Say("Resumed and done."),)), Path(tmp), resume=thread),
        )
    with tempfile.TemporaryDirectory() as tmp:
        _write("sigterm_mid_command", *_run(codex, SCENARIOS["slow_command"], Path(tmp), kill_after=1.5))


if __name__ == "__main__":
    main()
