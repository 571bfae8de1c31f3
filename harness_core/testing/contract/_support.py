"""What the contract suite uses besides its tests: a played run, the invariants every run must hold, the secrets
no event may carry, events emitted after a run returned, the processes a run left, where a real CLI is.

Layer: testing (private helper of `harness_core.testing.contract`, which re-exports `Played` and `descendants`).
Knows events, the run store, the runner's log records and the process-tree helpers; knows no concrete provider.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness_core import (
    ApprovalDecision,
    ApprovalRequested,
    Done,
    HarnessEvent,
    HarnessResult,
    RunStarted,
    ToolResult,
    ToolUse,
)
from harness_core._logging import fields_of
from harness_core.store import read_events
from harness_core.testing.contract._secrets import Secret
from harness_core.transport import ChildProcess, proctree

__all__ = ["WALL_CLOCK_FIELDS", "Approver", "LateEmits", "Played", "assert_invariants", "assert_replayed_as_recorded",
           "descendants",
           "find_real_cli", "processes_left", "without_wall_clock"]

WALL_CLOCK_FIELDS = ("ts", "result.duration_ms")
"""The fields of an event that a replay cannot reproduce: when it was stamped (`ts`, every event) and how long the
run took (`result.duration_ms`, of `done`). Everything else a replay must give back as it was recorded."""

Approver = Callable[[ApprovalRequested], ApprovalDecision]


@dataclass
class Played:
    """One run the contract played: its events as the consumer saw them, its result, log and workspace."""

    events: list[HarnessEvent]
    result: HarnessResult
    log_path: Path
    workspace: Path
    requests: list[dict[str, Any]] | None = None
    """The JSON bodies of the model requests the scripted backend received during the run (None: the run had no
    scripted backend to ask, e.g. a fake CLI or an in-process provider)."""
    secrets: tuple[Secret, ...] = ()
    """The secrets of the run's environment (`spec.env` and the process environment), which no event and no file
    it wrote may carry."""
    tool_results: tuple[str, ...] | None = None
    """The tool results the scripted backend received after each MCP tool call of the scenario (None: no scripted
    backend)."""

    def of_type(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]

    @property
    def text(self) -> str:
        return "".join(e.text for e in self.of_type("text_delta"))


def without_wall_clock(events: list[HarnessEvent]) -> list[dict[str, Any]]:
    """`events` as JSON-shaped dicts without their `WALL_CLOCK_FIELDS`, to compare a replay with its recording
    field by field (a plain `==` on the lists: pytest shows the first field that differs)."""
    shaped: list[dict[str, Any]] = []
    for event in events:
        data = event.model_dump(mode="json")
        data.pop("ts", None)
        if isinstance(event, Done):
            data["result"].pop("duration_ms", None)
        shaped.append(data)
    return shaped


def assert_replayed_as_recorded(replayed: list[HarnessEvent], recorded: list[HarnessEvent]) -> None:
    """`replayed` equals `recorded` field by field, `WALL_CLOCK_FIELDS` aside. When they differ only in the tools'
    `display.duration_ms`, the failure says why: the provider timed them with its own clock."""
    got, want = without_wall_clock(replayed), without_wall_clock(recorded)
    if got != want and _without_tool_durations(got) == _without_tool_durations(want):
        assert got == want, (
            "the replay differs from the recording only in the tools' `display.duration_ms`: the provider timed them "
            "with its own clock, which a replay (it does not wait the recorded pauses) cannot reproduce. Time them "
            "with `ctx.clock()`: a replay answers its readings from the recording")
    assert got == want


def _without_tool_durations(shaped: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**data, "display": {**data["display"], "duration_ms": None}} if isinstance(data.get("display"), dict)
            else data for data in shaped]


def assert_invariants(played: Played, provider_name: str) -> None:
    """What every run must show, whatever happened in it: `run_started` first, from `provider_name`; `seq`
    gap-free; one `done`, last; the log equal to the stream; every `tool_use` closed once, after it opened."""
    events = played.events
    assert isinstance(events[0], RunStarted), "run_started must come first"
    assert events[0].provider == provider_name
    assert [e.seq for e in events] == list(range(len(events))), "seq must be gap-free from 0"
    assert sum(isinstance(e, Done) for e in events) == 1 and isinstance(events[-1], Done)
    assert list(read_events(played.log_path)) == events, "the run log must hold exactly the events"
    uses = [e for e in events if isinstance(e, ToolUse)]
    results = [e for e in events if isinstance(e, ToolResult)]
    use_ids = [u.tool_id for u in uses]
    assert len(use_ids) == len(set(use_ids)), f"a tool_use was emitted twice: {use_ids}"
    result_ids = [r.tool_id for r in results]
    assert sorted(result_ids) == sorted(use_ids), (
        f"every tool_use needs exactly one tool_result: uses {use_ids}, results {result_ids}")
    use_seq = {u.tool_id: u.seq for u in uses}
    late = [r.tool_id for r in results if r.seq < use_seq[r.tool_id]]
    assert not late, f"a tool_result came before its tool_use: {late}"
    usage = played.result.usage
    assert min(usage.input_tokens, usage.output_tokens, usage.cached_input_tokens, usage.reasoning_tokens) >= 0


class LateEmits(logging.Handler):
    """Collects the runner's refusals of events emitted after a provider's `run` returned (`RunContext.emit`
    logs each one at error level on `harness.run`). `with LateEmits() as late:`; `late.refused` after."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.refused: list[str] = []
        self._logger = logging.getLogger("harness.run")

    def emit(self, record: logging.LogRecord) -> None:
        fields = fields_of(record)
        if fields.get("refused") == "emitted_after_return":
            self.refused.append(f"{fields.get('provider', '?')}: {fields.get('type', '?')}")

    def __enter__(self) -> LateEmits:
        self._logger.addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self._logger.removeHandler(self)


ChildProcess.track_started_marks()  # the leak checks below count only this process's runs


def descendants(pid: int | None = None) -> set[int]:
    """Live processes that belong to runs started here: descendants of `pid` (default: this process) and any
    process carrying the mark of a child this process started (children that escaped the tree are reparented,
    but keep the mark). Processes of other Harness runs on the machine (another test session, `tox -p`, a
    user's own runs) are not counted."""
    root = os.getpid() if pid is None else pid
    own = proctree.marked_with(ChildProcess.started_marks())
    return {entry[0] for entry in proctree.descendants(root)} | own


def processes_left(before: set[int], within: float = 5.0) -> set[int]:
    """The processes started since `before` that are still alive after waiting up to `within` seconds."""
    deadline = time.monotonic() + within
    left = descendants() - before
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = descendants() - before
    return left


def find_real_cli(cli: str) -> str | None:
    """Where the real CLI named `cli` is when it is not on PATH: `$HARNESS_<CLI>_BIN`, else
    `$HARNESS_TOOLS_DIR/bin/<cli>` (where `scripts/install-clis.sh` and the tox envs put the pinned CLIs)."""
    explicit = os.environ.get(f"HARNESS_{cli.upper().replace('-', '_')}_BIN")
    if explicit:
        return explicit
    tools = os.environ.get("HARNESS_TOOLS_DIR")
    candidate = Path(tools) / "bin" / cli if tools else None
    return str(candidate) if candidate is not None and os.access(candidate, os.X_OK) else None
