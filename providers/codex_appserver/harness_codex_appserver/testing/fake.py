"""The fake `codex` command line: `--version`, and `app-server` speaking JSON-RPC on stdio for a `Scenario`.

Layer: testing. Knows the fake's environment and the two commands it supports; the protocol is in `server`,
the turn in `player`. Stdlib plus `harness_core.offline.scenarios`; threads only, so it starts fast.

    HARNESS_FAKE_SCENARIO=tools python -m harness_codex_appserver.testing.fake app-server --listen stdio://

Environment (the wrapper `write_fake_codex` writes sets the first two, and the scenario's default):

- `HARNESS_FAKE_VERSION`: what `--version` prints after `codex-cli ` (default: the pinned version).
- `HARNESS_FAKE_CRASH`: when set, exit with status 101 right after the turn's first item starts, printing
  the value on stderr (`1` prints a standard message).
- `HARNESS_FAKE_SCENARIO`: a name from `SCENARIOS` (default `say`).
- `CODEX_HOME`: where threads are remembered, so a second process can `thread/resume`.

Simulates what the model would do and what Codex would run: commands are not executed (a `sleep N` command
waits N seconds, interruptibly); approved file steps really change the workspace.
"""

from __future__ import annotations

import os
import sys

from harness_core.offline.scenarios import SCENARIOS

from harness_codex_appserver.testing.server import FakeAppServer
from harness_codex_appserver.testing.shapes import FAKE_VERSION

__all__ = ["main"]

_CRASH_MESSAGE = "fake codex: simulated crash in the middle of a turn"


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["--version"], ["-V"]):
        print(f"codex-cli {os.environ.get('HARNESS_FAKE_VERSION') or FAKE_VERSION}")
        return 0
    if args[:1] != ["app-server"]:
        sys.stderr.write(f"fake codex: only `--version` and `app-server` are supported, got {args}\n")
        return 2
    name = os.environ.get("HARNESS_FAKE_SCENARIO") or "say"
    scenario = SCENARIOS.get(name)
    if scenario is None:
        sys.stderr.write(f"fake codex: unknown scenario {name!r}; known: {', '.join(SCENARIOS)}\n")
        return 2
    crash = os.environ.get("HARNESS_FAKE_CRASH")
    if crash:
        crash = _CRASH_MESSAGE if crash == "1" else crash
    return FakeAppServer(scenario, crash=crash or None).serve()


if __name__ == "__main__":
    sys.exit(main())
