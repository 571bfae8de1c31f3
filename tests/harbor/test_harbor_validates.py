"""Harness's ATIF validates against Harbor's own trajectory models (`harbor` from PyPI, the `harbor` tox env; a
validator nobody here wrote): for the scripted provider's offline runs of every scenario, and for the runs of
every provider recorded from its real agent CLI (tests/harbor/recorded.py). Skipped where Harbor is not installed."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import anyio
import pytest

from harness_core import AgentRunSpec, SessionSpec, open_session, run_sync
from harness_core.plugins import PluginHost
from harness_core.trajectory import atif_trajectory, export_atif, trajectory_text, write_trajectory
from tests.harbor.recorded import Recorded, recorded_runs

trajectories = pytest.importorskip("harbor.models.trajectories", reason="Harbor is not installed (tox -e harbor)")
validator = pytest.importorskip("harbor.utils.trajectory_validator")

RECORDED = list(recorded_runs())
SCENARIOS = ("say", "think", "tools", "fail_500", "fail_401", "fail_429", "json", "print_secrets")


def _valid(document: dict[str, object], where: Path | None = None) -> None:
    """Harbor's pydantic model, and its validator (which also checks a file as Harbor reads it)."""
    trajectories.Trajectory.model_validate(document)
    check = validator.TrajectoryValidator()
    assert check.validate(where if where is not None else document), check.errors


def test_every_provider_has_recorded_runs_of_text_reasoning_tools_errors_and_usage() -> None:
    kinds: dict[str, set[str]] = {}
    for run in RECORDED:
        kinds.setdefault(run.provider, set()).update(str(e.type) for e in run.events)
    assert len(kinds) >= 7, sorted(kinds)
    for provider, seen in kinds.items():
        assert {"text_delta", "reasoning_delta", "tool_use"} <= seen, (provider, seen)
    assert sum("error" in {e.type for e in r.events} or "context_usage" in {e.type for e in r.events}
               for r in RECORDED) > 50


@pytest.mark.parametrize("run", RECORDED, ids=lambda r: r.name)
def test_a_recorded_run_of_every_provider_validates(run: Recorded) -> None:
    trajectory = atif_trajectory(run.events)
    _valid(trajectory)
    assert trajectory["agent"]["name"] == run.provider
    assert sum(s["source"] == "user" for s in trajectory["steps"]) == 1


def test_the_recorded_runs_cover_what_atif_has_a_field_for() -> None:
    fields: Counter[str] = Counter()
    for run in RECORDED:
        for step in atif_trajectory(run.events)["steps"]:
            fields.update(k for k in ("reasoning_content", "tool_calls", "observation", "metrics") if k in step)
            fields.update(["error"] if "error" in (step.get("extra") or {}) else [])
    assert all(fields[k] > 5 for k in ("reasoning_content", "tool_calls", "observation", "metrics", "error")), fields


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_scripted_offline_run_validates(scenario: str, host: PluginHost, runs_dir: Path, tmp_path: Path) -> None:
    Path("notes.txt").write_text("alpha\n")
    result = run_sync(AgentRunSpec(prompt=f"play {scenario}", system_prompt="Be brief.", model="m", effort="high",
                                   provider_options={"scenario": scenario}), "scripted", host=host, runs_dir=runs_dir)
    log = runs_dir / f"{result.run_id}.jsonl"
    _valid(export_atif(log))
    written = write_trajectory(log, tmp_path / "trajectory.json")
    _valid(json.loads(written.read_text()), written)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.anyio
async def test_a_sessions_turns_validate_as_one_trajectory(host: PluginHost, runs_dir: Path) -> None:
    logs: list[Path] = []
    async with open_session(SessionSpec(provider_options={"scenario": "tools"}), "scripted", host=host,
                            runs_dir=runs_dir) as session:
        for prompt in ("first", "second"):
            await anyio.Path("notes.txt").write_text("alpha\n")
            async with session.turn(prompt) as live:
                _ = [event async for event in live]
            assert live.log_path is not None
            logs.append(live.log_path)
    document = json.loads(trajectory_text(export_atif(logs)))
    _valid(document)
    parsed = trajectories.Trajectory.model_validate(document)
    assert [s.source for s in parsed.steps] == ["user", "agent", "agent", "user", "agent", "agent"]
    assert parsed.final_metrics is not None and parsed.final_metrics.total_completion_tokens == 40
