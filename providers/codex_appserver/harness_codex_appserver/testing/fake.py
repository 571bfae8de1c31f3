"""The fake `codex` command line: `--version`, and `app-server` speaking JSON-RPC on stdio for a `Scenario`.

Layer: testing. Knows the fake's environment and the two commands it supports; the protocol is in `server`,
the turn in `player`. Stdlib plus `harness_core.scripted.scenarios`; threads only, so it starts fast.

    HARNESS_FAKE_SCENARIO=tools python -m harness_codex_appserver.testing.fake app-server --listen stdio://

Environment (the wrapper `write_fake_codex` writes sets the first two, and the scenario's default):

- `HARNESS_FAKE_VERSION`: what `--version` prints after `codex-cli ` (default: the pinned version).
- `HARNESS_FAKE_CRASH`: when set, exit with status 101 right after the turn's first item starts, printing
  the value on stderr (`1` prints a standard message).
- `HARNESS_FAKE_SCENARIO`: a name from `SCENARIOS` (default `say`).
- `HARNESS_FAKE_STEPS`: when set, the steps to play instead of the scenario's, as JSON: a list of
  `[step class name, {field: value}]` pairs of `harness_core.scripted.scenarios` (`[["Say", {"text": "{}"}]]`).
- `HARNESS_FAKE_INTERRUPT`: `ignore` (answer `turn/interrupt`, play on, never complete the turn early) or
  `early` (answer it and send `turn/completed` at once, but play on: the next `turn/start` steers into the turn).
- `HARNESS_FAKE_STEER`: `late` (accept a `turn/steer`, answer it only when the next `turn/start` arrives).
- `CODEX_HOME`: where threads are remembered, so a second process can `thread/resume`.

Simulates what the model would do and what Codex would run: commands are not executed (a `sleep N` command waits N
seconds, interruptibly, a real `sleep` running meanwhile in a session of its own); approved file steps really change
the workspace.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from typing import cast

import harness_core.scripted.scenarios as steps_module
from harness_core.scripted.scenarios import SCENARIOS, Scenario, Step

from harness_codex_appserver.testing.server import FakeAppServer
from harness_codex_appserver.testing.shapes import FAKE_VERSION

__all__ = ["STEPS_ENV", "main", "steps_env"]

STEPS_ENV = "HARNESS_FAKE_STEPS"

_CRASH_MESSAGE = "fake codex: simulated crash in the middle of a turn"
_MODES = {"HARNESS_FAKE_INTERRUPT": ("ignore", "early"), "HARNESS_FAKE_STEER": ("late",)}


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
    steps = os.environ.get(STEPS_ENV)
    if steps:
        try:
            scenario = dataclasses.replace(scenario, steps=_steps(steps))
        except (ValueError, TypeError, AttributeError) as exc:
            sys.stderr.write(f"fake codex: bad {STEPS_ENV}: {exc}\n")
            return 2
    crash = os.environ.get("HARNESS_FAKE_CRASH")
    if crash:
        crash = _CRASH_MESSAGE if crash == "1" else crash
    modes = {name: os.environ.get(name) or None for name in _MODES}
    for name, value in modes.items():
        if value is not None and value not in _MODES[name]:
            sys.stderr.write(f"fake codex: bad {name} {value!r}; known: {', '.join(_MODES[name])}\n")
            return 2
    return FakeAppServer(scenario, crash=crash or None, interrupt=modes["HARNESS_FAKE_INTERRUPT"],
                         steer=modes["HARNESS_FAKE_STEER"]).serve()


def steps_env(scenario: Scenario) -> dict[str, str]:
    """The environment that makes the fake play `scenario`'s steps (put it in the run's `spec.env`)."""
    pairs = [[type(step).__name__, dataclasses.asdict(step)] for step in scenario.steps]
    return {STEPS_ENV: json.dumps(pairs)}


def _steps(raw: str) -> tuple[Step, ...]:
    out: list[Step] = []
    for name, fields in json.loads(raw):
        cls = getattr(steps_module, str(name))
        if not isinstance(cls, type) or not dataclasses.is_dataclass(cls):
            raise ValueError(f"{name!r} is not a scenario step")
        out.append(cast("Step", cls(**fields)))
    return tuple(out)


if __name__ == "__main__":
    sys.exit(main())
