"""Recorded runs exported as trajectories: a run (or a session's turns) found as `harness show` finds it, read,
mapped, scrubbed, returned or written (`export_atif`, `export_messages`, `write_trajectory`).

Layer: trajectory (reads the run store; writes only the file asked for, 0600). Knows nothing of batches or the CLI.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from harness_core.errors import InvalidSpecError
from harness_core.events import HarnessEvent
from harness_core.files.private import write_private
from harness_core.redaction import RunSecrets, environment_secrets
from harness_core.store import find_run, list_runs, log_path, read_events, resolve_runs_dir, summarize
from harness_core.trajectory.atif import atif_trajectory
from harness_core.trajectory.messages import messages_from_trajectory

__all__ = ["FORMATS", "Format", "export", "export_atif", "export_messages", "read_runs", "resolve_logs",
           "trajectory_text", "write_trajectory"]

Format = Literal["atif", "openai-messages"]
FORMATS: tuple[Format, ...] = ("atif", "openai-messages")

RunRef = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]
"""A run: its id, a unique prefix of one, `last`, or its log's path; a Harness session's id (or a prefix of it) for
all of its turns; or several of these, one trajectory of them all."""


def _is_path(ref: str | os.PathLike[str]) -> bool:
    return not isinstance(ref, str) or os.sep in ref or ref.endswith(".jsonl")


def _session_logs(runs_dir: Path, session: str) -> list[Path]:
    """The logs of the turns of the Harness session `session` (its id or a unique prefix), in turn order; [] when
    no session matches.

    Raises:
        InvalidSpecError: the prefix matches several sessions.
    """
    turns = [r for r in list_runs(runs_dir) if r.session is not None and r.session.startswith(session)]
    names = sorted({r.session for r in turns if r.session is not None})
    if len(names) > 1:
        raise InvalidSpecError(f"{session!r} matches {len(names)} sessions ({', '.join(names[:10])}); give more of "
                               "the session id")
    return [r.path for r in sorted(turns, key=lambda r: (r.turn or 0, r.run_id))]


def resolve_logs(run: RunRef, *, runs_dir: str | Path | None = None, session: bool = False) -> list[Path]:
    """The run logs `run` names (see `RunRef`), in order. With `session`, a run that is a session's turn stands for
    every turn of that session.

    Raises:
        InvalidSpecError: no such run, file or session, or an ambiguous prefix (the candidates are named).
        UnsafeRunsDirError: the runs directory belongs to another user, or others may write it.
    """
    if not isinstance(run, (str, os.PathLike)):
        return [path for ref in run for path in resolve_logs(ref, runs_dir=runs_dir, session=session)]
    directory = resolve_runs_dir(runs_dir)
    if _is_path(run):
        path = Path(run).expanduser()
        if not path.is_file():
            raise InvalidSpecError(f"no run log {str(path)!r}: give a run id, `last`, or the path of a <run id>.jsonl")
        logs = [path]
    else:
        ref = str(run)
        try:
            logs = [log_path(directory, find_run(directory, ref))]
        except InvalidSpecError:
            logs = _session_logs(directory, ref) if ref != "last" else []
            if not logs:
                raise
            return logs
    if session:
        owner = summarize(logs[0]).session
        if owner is not None:
            return _session_logs(logs[0].parent, owner) or logs
    return logs


def read_runs(logs: Sequence[Path]) -> list[HarnessEvent]:
    """The events of `logs`, one after the other; a bad line (corrupt, or from a newer Harness) is skipped, as
    `harness show` skips it.

    Raises:
        InvalidSpecError: a log with no readable event.
        OSError: a log cannot be read.
    """
    events: list[HarnessEvent] = []
    for path in logs:
        read = list(read_events(path, on_bad_line=lambda bad: None))
        if not read:
            raise InvalidSpecError(f"nothing in {path} is readable as a Harness run log")
        events.extend(read)
    return events


def _scrubbed(document: dict[str, Any]) -> dict[str, Any]:
    """`document` with every credential shape and every secret value of this process's environment hidden, as the
    run log hides them (the log already is; this keeps anything that slipped past it out too)."""
    secrets = RunSecrets(environment_secrets(os.environ))
    line = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()
    cleaned = secrets.json_line(line)
    return document if cleaned is line else dict(json.loads(cleaned))


def export(run: RunRef, format: Format = "atif", *, runs_dir: str | Path | None = None,
           session: bool = False, reasoning: bool = False, drop_reconstructed: bool = True) -> dict[str, Any]:
    """The trajectory of `run` in `format`: `atif` (Harbor's ATIF v1.7) or `openai-messages` (`{"messages":
    [...]}`, with `reasoning_content` when `reasoning`; `drop_reconstructed`: see `messages_from_trajectory`).
    With `session`, a session's turn stands for the whole session (a session id does anyway).

    Raises:
        InvalidSpecError: no such run, an unreadable log, or an unknown format.
        UnsafeRunsDirError: the runs directory belongs to another user, or others may write it.
        OSError: a log cannot be read.
    """
    if format not in FORMATS:
        raise InvalidSpecError(f"unknown trajectory format {format!r}: use {' or '.join(FORMATS)}")
    trajectory = atif_trajectory(read_runs(resolve_logs(run, runs_dir=runs_dir, session=session)))
    document = trajectory if format == "atif" else messages_from_trajectory(
        trajectory, reasoning=reasoning, drop_reconstructed=drop_reconstructed)
    return _scrubbed(document)


def export_atif(run: RunRef, *, runs_dir: str | Path | None = None,
                session: bool = False) -> dict[str, Any]:
    """The ATIF v1.7 trajectory of a run (its id, a unique prefix, `last`, or its log's path), of a session (its
    id), or of several runs as one; see `export`."""
    return export(run, "atif", runs_dir=runs_dir, session=session)


def export_messages(run: RunRef, *, runs_dir: str | Path | None = None, session: bool = False,
                    reasoning: bool = False, drop_reconstructed: bool = True) -> dict[str, Any]:
    """The `{"messages": [...]}` chat list of a run (as `export_atif` names it), as fine-tuning tools read it."""
    return export(run, "openai-messages", runs_dir=runs_dir, session=session, reasoning=reasoning,
                  drop_reconstructed=drop_reconstructed)


def trajectory_text(document: dict[str, Any], format: Format = "atif") -> str:
    """`document` as its file holds it: ATIF indented (as Harbor writes `trajectory.json`), the messages on one
    line (a line of a JSONL training set); with a final newline."""
    if format == "atif":
        return json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"


def write_trajectory(run_log_path: str | os.PathLike[str], out_path: str | os.PathLike[str],
                     format: Format = "atif") -> Path:
    """Write the trajectory of the run whose log is `run_log_path` to `out_path` (0600, replaced whole, its
    directory made 0700 if missing); returns `out_path`. For a batch: one file per cell.

    Raises:
        InvalidSpecError: an unreadable log or an unknown format.
        OSError: the log cannot be read or the file written.
    """
    out = Path(out_path)
    document = export(Path(run_log_path), format)
    write_private(out, trajectory_text(document, format).encode())
    return out
