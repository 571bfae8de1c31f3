"""The pure mapping on recorded real transcripts: each prompt turn's `session/update`s through `AcpMapper`, the
events and the result compared with the goldens in `golden/<agent>/<name>.json`, and what must hold whatever the
goldens say (every tool announced once and finished once, the deltas rebuild the final text, the scenario's tools
show the Harness kinds). `HARNESS_UPDATE_GOLDENS=1` rewrites the goldens (review the diff)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from harness_core import TextDelta, ToolResult, ToolUse

from harness_acp.mapping import AcpMapper
from harness_acp.policy import refused_by

HERE = Path(__file__).parent
TRANSCRIPTS = sorted((HERE / "transcripts").glob("*/*.jsonl"))
WORKSPACES = ("/tmp/e2e/ws",)


def _cwd(records: list[dict[str, Any]]) -> str | None:
    for record in records:
        msg = record["msg"]
        if msg.get("method") in ("session/new", "session/load"):
            return str(msg["params"]["cwd"])
    return None


def turns(path: Path) -> list[tuple[AcpMapper, list[Any], Any]]:
    """(mapper, events, prompt answer) per prompt turn of a transcript."""
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    cwd = _cwd(records)
    played: list[tuple[AcpMapper, list[Any], Any]] = []
    prompt_ids: set[Any] = set()
    asked: dict[Any, tuple[str, list[dict[str, Any]]]] = {}
    current: tuple[AcpMapper, list[Any]] | None = None
    for record in records:
        msg = record["msg"]
        if record["dir"] == "out" and msg.get("method") == "session/prompt":
            prompt_ids.add(msg["id"])
            current = (AcpMapper(cwd), [])
        elif record["dir"] == "in" and msg.get("method") == "session/update" and current is not None:
            current[1].extend(current[0].feed(msg["params"]["update"]))
        elif record["dir"] == "in" and msg.get("method") == "session/request_permission" and current is not None:
            call = msg["params"]["toolCall"]  # as `PromptTurn.on_permission` does: announced if not yet
            asked[msg["id"]] = (str(call.get("toolCallId")), msg["params"]["options"])
            current[1].extend(current[0].asked(call))
        elif record["dir"] == "out" and msg.get("id") in asked and "result" in msg and current is not None:
            call_id, options = asked.pop(msg["id"])
            if refused_by(msg["result"]["outcome"], options):
                current[0].decline(call_id)
        elif record["dir"] == "in" and "method" not in msg and msg.get("id") in prompt_ids and current is not None:
            mapper, events = current
            events.extend(mapper.close_open("the turn ended before the tool reported a result"))
            played.append((mapper, events, msg.get("result")))
            current = None
    return played


def _plain(event: Any) -> dict[str, Any]:
    return event.model_dump(mode="json", exclude={"run_id", "seq", "ts"})


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_mapping_matches_the_golden(path: Path) -> None:
    got = [{"events": [_plain(e) for e in events], "final_text": mapper.final_text,
            "usage": mapper.result_usage(answer).model_dump(mode="json"),
            "stop_reason": (answer or {}).get("stopReason") if isinstance(answer, dict) else None}
           for mapper, events, answer in turns(path)]
    golden = HERE / "golden" / path.parent.name / f"{path.stem}.json"
    if os.environ.get("HARNESS_UPDATE_GOLDENS"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
    assert golden.exists(), f"no golden for {path.name}: run with HARNESS_UPDATE_GOLDENS=1 and review it"
    assert got == json.loads(golden.read_text())


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_tool_is_announced_once_and_finished_once(path: Path) -> None:
    for _mapper, events, _answer in turns(path):
        uses = [e.tool_id for e in events if isinstance(e, ToolUse)]
        results = [e.tool_id for e in events if isinstance(e, ToolResult)]
        assert len(uses) == len(set(uses)), uses
        assert sorted(uses) == sorted(results), (uses, results)
        for event in events:
            if isinstance(event, ToolResult):
                assert uses.index(event.tool_id) <= [e.tool_id for e in events if isinstance(e, ToolResult)].index(
                    event.tool_id)


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_tool_use_names_what_its_result_names(path: Path) -> None:
    """claude-agent-acp and Qwen Code announce a call before its input (an empty `rawInput`): the `tool_use` (the
    start line) still names the command or the file its result names, and a write is a write from its start."""
    for _mapper, events, _answer in turns(path):
        uses = {e.tool_id: e.display for e in events if isinstance(e, ToolUse)}
        for result in (e for e in events if isinstance(e, ToolResult)):
            use = uses[result.tool_id]
            assert (use.kind, use.title) == (result.display.kind, result.display.title), (use, result.display)
            if result.display.path or result.display.command:
                assert use.path or use.command, f"{result.tool_id}: the start names nothing ({use})"


def test_claudes_system_reminders_stay_out_of_a_summary() -> None:
    """claude-agent-acp's Read results end with Claude Code's `<system-reminder>` for the model: the summary a person
    sees (`-v`) leaves it out; the output, what the model saw, keeps it."""
    (_mapper, events, _answer), *_ = turns(HERE / "transcripts" / "claude-acp" / "tools.jsonl")
    read = next(e for e in events if isinstance(e, ToolResult) and e.display.kind.value == "read")
    assert read.display.summary == "     1→alpha\n     2→"
    assert "<system-reminder>" in (read.output or "")


@pytest.mark.parametrize("agent", sorted({p.parent.name for p in TRANSCRIPTS}))
def test_the_tools_scenario_shows_harness_kinds(agent: str) -> None:
    path = HERE / "transcripts" / agent / "tools.jsonl"
    if not path.exists():
        pytest.skip(f"no tools transcript for {agent}")
    (mapper, events, _answer), *_ = turns(path)
    results = [e for e in events if isinstance(e, ToolResult)]
    kinds = [r.display.kind.value for r in results]
    assert kinds[-2:] == ["edit", "write"] or kinds[-2:] == ["edit", "edit"], kinds
    assert any(r.display.path and r.display.path.endswith("notes.txt") for r in results)
    assert mapper.final_text.strip() == "All four tools ran."


@pytest.mark.parametrize("agent", sorted({p.parent.name for p in TRANSCRIPTS}))
def test_text_deltas_rebuild_the_final_text(agent: str) -> None:
    path = HERE / "transcripts" / agent / "say.jsonl"
    (mapper, events, _answer), *_ = turns(path)
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == mapper.final_text != ""


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_recorded_agents_speak_the_schema(path: Path) -> None:
    """Every message of the real recordings, both ways, validates against the ACP v1 schema: what the fake agent is
    held to is what the real agents do."""
    from harness_acp.testing.schema import WireChecker

    checker = WireChecker()
    for line in path.read_text().splitlines():
        record = json.loads(line)
        checker.check(record["msg"], sender="agent" if record["dir"] == "in" else "client")


def test_an_agents_warning_sent_as_message_text_is_a_notice() -> None:
    """codex-acp 0.16.0 sends Codex's own warnings as `agent_message_chunk` text (seen with a model outside its
    catalogue); with the profile's `warning_chunks` they become a `cli_warning` notice, not part of the answer."""
    from harness_core import Notice

    from harness_acp.profiles import PROFILES

    mapper = AcpMapper("/ws", warnings=PROFILES["codex-acp"].warning_chunks)
    warning = ("Model metadata for `harness-contract-model` not found. Defaulting to fallback metadata; this can "
               "degrade performance and cause issues.")
    events = [e for text in (warning, "Hello", " there.") for e in mapper.feed(
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})]
    assert isinstance(events[0], Notice) and events[0].code == "cli_warning" and events[0].message == warning
    assert [e.text for e in events[1:] if isinstance(e, TextDelta)] == ["Hello", " there."]
    assert mapper.final_text == "Hello there."
