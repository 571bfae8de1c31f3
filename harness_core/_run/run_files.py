"""The two files of one run: its event log (`<run_id>.jsonl`) and, on request, its wire log (`.wire.jsonl`).

Layer: core runtime (the runner's storage edge). Knows the run store's file layout and writer and the run's
secrets; knows nothing of events, providers or the stream. Both are opened before anything is spawned; a
failed write never raises here (docs/run-store.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from harness_core._run.wirelog import WireWriter
from harness_core.errors import InvalidSpecError
from harness_core.files.private import make_private_dirs
from harness_core.redaction import RunSecrets
from harness_core.store import LogWriter, check_runs_dir, log_path, resolve_runs_dir, wire_path

__all__ = ["RunLogs", "check_writable"]


class RunLogs:
    """The run's log writers (either may be absent). Whoever drives the run closes them after `done`."""

    def __init__(self, events: LogWriter | None = None, wire: LogWriter | None = None,
                 secrets: RunSecrets | None = None) -> None:
        self.events = events
        self.wire = wire
        self.secrets = secrets if secrets is not None else RunSecrets()
        self.recorder = None if wire is None else WireWriter(wire, self.secrets)
        """The wire log's writer (None without a wire log): the header, then the provider context's records."""
        self.failed: tuple[Path, OSError] | None = None
        """The file whose write failed first and the error (None while every write succeeded)."""
        self._on_failure: Callable[[Path, OSError], None] | None = None
        for writer in self._writers():
            writer.on_failure = self._failure

    def _writers(self) -> list[LogWriter]:
        return [writer for writer in (self.events, self.wire) if writer is not None]

    def _failure(self, writer: LogWriter, exc: OSError) -> None:
        if self.failed is None:
            self.failed = (writer.path, exc)
            if self._on_failure is not None:
                self._on_failure(writer.path, exc)

    def on_failure(self, callback: Callable[[Path, OSError], None]) -> None:
        """Call `callback(path, error)` once, when a write of either file first fails."""
        self._on_failure = callback

    @property
    def events_written(self) -> bool:
        """Whether every event line given since the last `resume` is in the log or its buffer (no failure)."""
        return self.events is None or self.events.written

    def resume(self) -> None:
        """After a failure: try to write the run's last lines (its error, its `done`) after what the files hold."""
        for writer in self._writers():
            writer.resume()

    @classmethod
    def open(cls, runs_dir: str | Path | None, run_id: str, *, run_log: bool = True,
             record_wire: bool = False, secrets: RunSecrets | None = None) -> RunLogs:
        """Create the run's files in `runs_dir` (resolved as the CLI does); none at all without `run_log`.
        `secrets` are scrubbed from every line written (default: credential shapes only).

        Raises:
            InvalidSpecError: a log for `run_id` exists already, or the directory is not writable.
        """
        if not run_log:
            return cls(secrets=secrets)
        directory = resolve_runs_dir(runs_dir)
        events = _open(log_path(directory, run_id))
        if not record_wire:
            return cls(events, secrets=secrets)
        try:
            return cls(events, _open(wire_path(directory, run_id)), secrets)
        except BaseException:
            events.close()
            raise

    @property
    def path(self) -> Path | None:
        """The event log's path (None without a run log)."""
        return self.events.path if self.events is not None else None

    def flush(self) -> None:
        """Write out buffered lines of both files (the runner calls it whenever the run is about to wait). Never
        raises: a failed write goes to `on_failure`."""
        for writer in self._writers():
            writer.flush()

    def close(self) -> None:
        """Flush and close both files, releasing the writer's lock (idempotent). An event log no line was given to
        (the run was stopped, Ctrl-C say, before its `run_started`) is removed with its wire log: an empty file
        would list as a lost run of no provider."""
        unstarted = self.events is not None and not self.events.used
        for writer in self._writers():
            if unstarted:
                writer.discard()
            else:
                writer.close()


def check_writable(runs_dir: str | Path | None) -> Path:
    """The runs directory (resolved as the CLI does), created if need be, after checking a run could write its logs
    there: for callers that must know before they create anything else (an offline workspace).

    Raises:
        InvalidSpecError: the directory cannot be created or written.
        UnsafeRunsDirError: it belongs to another user, or others may write it.
    """
    directory = resolve_runs_dir(runs_dir)
    try:
        make_private_dirs(directory)
        writable = os.access(directory, os.W_OK | os.X_OK)
    except OSError as exc:
        raise _unwritable(directory, exc.strerror or str(exc)) from None
    if not writable:
        raise _unwritable(directory, "a read-only file system" if _read_only(directory) else "permission denied")
    check_runs_dir(directory)
    return directory


def _read_only(directory: Path) -> bool:
    try:
        return bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _unwritable(directory: Path, why: str) -> InvalidSpecError:
    return InvalidSpecError(f"cannot write run logs in {directory}: {why}; pass runs_dir= (on the command "
                            "line --runs-dir DIR) or set HARNESS_RUNS_DIR to a writable directory")


def _open(path: Path) -> LogWriter:
    try:
        return LogWriter(path)
    except FileExistsError:
        raise InvalidSpecError(f"a run log for run id {path.stem!r} already exists in {path.parent}; "
                               "pass a new run id (or none)") from None
    except OSError as exc:
        raise _unwritable(path.parent, exc.strerror or str(exc)) from None
