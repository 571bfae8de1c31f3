"""Harness run logs made from the providers' recorded transcripts: each provider's tests keep, for transcripts
recorded from its real agent CLI, the events its mapping makes of them (`golden/**.json`, `*.events.json`); here
each recorded conversation becomes the run log Harness would have written (`run_started`, the events stamped,
`done` with the recorded result). The provider is named by the file's place, so no agent is named here."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness_core.events import (
    EVENT_ADAPTER,
    Done,
    ErrorEvent,
    HarnessEvent,
    HarnessResult,
    RunStarted,
    RunStatus,
    Usage,
)

ROOT = Path(__file__).resolve().parents[2]
_RESULT_FIELDS = ("status", "final_text", "session_id", "usage", "duration_ms", "error")


@dataclass(frozen=True)
class Recorded:
    provider: str
    name: str
    events: list[HarnessEvent]


def recorded_files() -> list[Path]:
    providers = ROOT / "providers"
    return sorted([*providers.glob("*/tests/golden/**/*.json"), *providers.glob("*/tests/transcripts/*.events.json")])


def _provider(path: Path) -> str:
    """The provider a recording is of: the folder under `golden/` when it names an agent of a family package (not
    `recorded`/`shared`), else the package's folder, as its provider is named (`a_b` → `a-b`)."""
    parts = path.relative_to(ROOT / "providers").parts
    package = parts[0].replace("_", "-")
    if parts[2] == "golden" and len(parts) > 4 and parts[3] not in ("recorded", "shared"):
        return parts[3]
    return package


def _conversations(data: Any) -> Iterator[tuple[list[dict[str, Any]], dict[str, Any] | None]]:
    """(events, the recorded result or None) of each conversation a file holds, whatever its provider's layout."""
    if isinstance(data, dict) and "events" in data:
        results = data.get("results") or data.get("outcomes") or []
        yield data["events"], (results[-1] if results else None)
    elif isinstance(data, list) and data and all(isinstance(d, dict) and "events" in d for d in data):
        for conversation in data:
            outcomes = conversation.get("outcomes") or conversation.get("results") or []
            result = outcomes[-1] if outcomes else {k: conversation[k] for k in ("final_text", "usage")
                                                   if k in conversation}
            yield conversation["events"], result
    elif isinstance(data, list) and all(isinstance(d, dict) and "type" in d for d in data):
        yield data, None


def _result(recorded: dict[str, Any] | None, events: list[HarnessEvent]) -> HarnessResult:
    fields = {k: v for k, v in (recorded or {}).items() if k in _RESULT_FIELDS and v is not None}
    if isinstance(fields.get("usage"), dict):
        fields["usage"] = Usage.model_validate(fields["usage"])
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    fields.setdefault("status", RunStatus.FAILED if errors else RunStatus.SUCCESS)
    if errors and "error" not in fields:
        fields["error"] = errors[-1].error
    return HarnessResult.model_validate(fields)


def recorded_runs() -> Iterator[Recorded]:
    for path in recorded_files():
        provider = _provider(path)
        for number, (raw, recorded) in enumerate(_conversations(json.loads(path.read_text()))):
            run_id = f"20260101T000000-{number:08x}"
            body = [EVENT_ADAPTER.validate_python(e) for e in raw if e.get("type") not in ("run_started", "done")]
            started = RunStarted(provider=provider, provider_version="recorded", cli_version="recorded",
                                 spec={"prompt": f"the prompt of {path.stem}", "model": None})
            done = Done(result=_result(recorded, body).model_copy(update={"run_id": run_id, "provider": provider}))
            events = [e.model_copy(update={"run_id": run_id, "seq": seq, "ts": 1_767_225_600.0 + seq / 10})
                      for seq, e in enumerate([started, *body, done])]
            yield Recorded(provider, f"{path.relative_to(ROOT)}#{number}", events)
