"""`harness export` and the Python API around the mapping: runs found as `harness show` finds them (id, prefix,
`last`, a log's path, a session id or `--session`), ATIF on stdout or in a 0600 file, chat messages on one line,
secrets of the exporting environment hidden, `write_trajectory` for a batch's cells."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from harness_core import AgentRunSpec, export_atif, export_messages, run_sync
from harness_core.errors import InvalidSpecError
from harness_core.events import Done, HarnessResult, RunStarted, RunStatus, SessionTurn, TextDelta
from harness_core.plugins import PluginHost
from harness_core.store import LogWriter
from harness_core.trajectory import write_trajectory
from tests.cli.test_cli import invoke


def _scripted(host: PluginHost, runs_dir: Path, scenario: str = "say") -> str:
    result = run_sync(AgentRunSpec(prompt=f"play {scenario}", provider_options={"scenario": scenario}), "scripted",
                      host=host, runs_dir=runs_dir)
    return result.run_id


def _log(runs_dir: Path, run_id: str, text: str, turn: SessionTurn | None = None, ts: float = 1_800_000_000.0) -> Path:
    path = runs_dir / f"{run_id}.jsonl"
    writer = LogWriter(path)
    events = [RunStarted(provider="p", provider_version="1", spec={"prompt": f"prompt {run_id}"}, session_turn=turn),
              TextDelta(text=text), Done(result=HarnessResult(status=RunStatus.SUCCESS))]
    for seq, event in enumerate(events):
        writer.write_line(event.model_copy(update={"run_id": run_id, "seq": seq, "ts": ts + seq}).model_dump_json()
                          .encode())
    writer.close()
    return path


def test_export_prints_the_last_runs_atif_and_writes_a_private_file(host: PluginHost, runs_dir: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(runs_dir))
    monkeypatch.setenv("HARNESS_PROVIDER", "scripted")
    assert invoke("run", "think it over", "-o", "scenario=think").exit_code == 0
    shown = invoke("export")
    assert shown.exit_code == 0, shown.output
    trajectory = json.loads(shown.stdout)
    assert shown.stdout.startswith('{\n  "schema_version": "ATIF-v1.7"')
    assert trajectory["steps"][-1]["reasoning_content"] == "Let me consider the question."
    assert trajectory == export_atif("last", runs_dir=runs_dir)
    out = tmp_path / "out" / "t.json"
    written = invoke("export", trajectory["session_id"][:12], "-o", str(out))
    assert written.exit_code == 0 and "wrote" in written.stderr and written.stdout == ""
    assert json.loads(out.read_text()) == trajectory
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    line = invoke("export", "last", "--format", "openai-messages", "--reasoning").stdout
    assert line.count("\n") == 1 and json.loads(line)["messages"][-1] == {
        "role": "assistant", "content": "Thought it through.", "reasoning_content": "Let me consider the question."}
    assert invoke("export", "last", "-f", "openai-messages", "--reasoning", "--keep-reconstructed").stdout == line
    missing = invoke("export", "nope")
    assert missing.exit_code == 2 and "no run 'nope'" in missing.stderr


def test_a_session_exports_whole_by_its_id_or_with_session(runs_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(runs_dir))
    _log(runs_dir, "20261201T100000-aaaa0001", "one", SessionTurn(session="sess-abc", index=0, live=True))
    _log(runs_dir, "20261201T100100-aaaa0002", "two", SessionTurn(session="sess-abc", index=1, live=True), 1.9e9)
    _log(runs_dir, "20261201T100200-bbbb0003", "alone", ts=2e9)
    whole = export_atif("sess-a")
    assert whole["session_id"] == "sess-abc"
    assert [s["message"] for s in whole["steps"]] == ["prompt 20261201T100000-aaaa0001", "one",
                                                      "prompt 20261201T100100-aaaa0002", "two"]
    assert export_atif("20261201T100000", session=True) == whole
    assert len(export_atif("20261201T100000")["steps"]) == 2, "a turn alone without --session"
    assert json.loads(invoke("export", "20261201T1001", "--session").stdout) == whole
    assert export_messages("last")["messages"][-1] == {"role": "assistant", "content": "alone"}
    both = export_atif([runs_dir / "20261201T100200-bbbb0003.jsonl", "20261201T100000-aaaa0001"])
    assert [s["message"] for s in both["steps"]][::2] == ["prompt 20261201T100200-bbbb0003",
                                                          "prompt 20261201T100000-aaaa0001"]
    with pytest.raises(InvalidSpecError, match="no run log"):
        export_atif(runs_dir / "missing.jsonl")


def test_secrets_of_the_exporting_environment_are_hidden(runs_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _log(runs_dir, "20261201T100000-cccc0001", "the key is hunter2-very-secret and sk-abcdefghijklmnop")
    monkeypatch.setenv("SERVICE_API_TOKEN", "hunter2-very-secret")
    text = json.dumps(export_atif(path)) + json.dumps(export_messages(path))
    assert "hunter2-very-secret" not in text and "sk-abcdefghijklmnop" not in text
    assert text.count("***") == 4


def test_write_trajectory_writes_one_file_per_cell(host: PluginHost, runs_dir: Path, tmp_path: Path) -> None:
    run_id = _scripted(host, runs_dir)
    log = runs_dir / f"{run_id}.jsonl"
    atif = write_trajectory(log, tmp_path / "trajectories" / "cell-1.json")
    messages = write_trajectory(log, tmp_path / "trajectories" / "cell-1.messages.jsonl", "openai-messages")
    assert json.loads(atif.read_text())["session_id"] == run_id
    assert json.loads(messages.read_text())["messages"][0] == {"role": "user", "content": "play say"}
    assert stat.S_IMODE((tmp_path / "trajectories").stat().st_mode) == 0o700
    with pytest.raises(InvalidSpecError, match="unknown trajectory format"):
        write_trajectory(log, tmp_path / "x.json", "yaml")  # type: ignore[arg-type]
