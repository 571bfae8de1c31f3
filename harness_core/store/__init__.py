"""The run store: where run logs live, how they are written, read, listed, followed and pruned.

Layer: core storage (a documented module). Knows events and the file layout `<runs-dir>/<run_id>.jsonl`; knows
nothing of providers, runs or rendering. This package's modules are internal; import from `harness_core.store`.
"""

from __future__ import annotations

from harness_core.store.locks import locked, writer_pid
from harness_core.store.owner import UnsafeRunsDirError, check_runs_dir, open_run_file
from harness_core.store.prune import PrunedRun, PruneReport, SkippedLog, prune_runs
from harness_core.store.read import (
    BAD_LINE_HEAD,
    BadLine,
    LogFollower,
    follow_events,
    follow_events_async,
    open_approvals,
    pending_approvals,
    read_events,
)
from harness_core.store.runs import (
    ANSWERS_SUFFIX,
    ENV_RUNS_DIR,
    LAST,
    RUN_FILE_SUFFIXES,
    TRUNCATED,
    VERIFY_LOG_SUFFIX,
    WAITING_FOR_APPROVAL,
    WORKER_LOG_SUFFIX,
    RunSummary,
    find_run,
    list_runs,
    log_path,
    new_run_id,
    resolve_runs_dir,
    summarize,
    validate_run_id,
    wire_path,
)
from harness_core.store.writer import CUT_SHORT_MODE, LogWriter

__all__ = [
    "ANSWERS_SUFFIX",
    "BAD_LINE_HEAD",
    "CUT_SHORT_MODE",
    "ENV_RUNS_DIR",
    "LAST",
    "RUN_FILE_SUFFIXES",
    "TRUNCATED",
    "VERIFY_LOG_SUFFIX",
    "WAITING_FOR_APPROVAL",
    "WORKER_LOG_SUFFIX",
    "BadLine",
    "LogFollower",
    "LogWriter",
    "PruneReport",
    "PrunedRun",
    "RunSummary",
    "SkippedLog",
    "UnsafeRunsDirError",
    "check_runs_dir",
    "find_run",
    "follow_events",
    "follow_events_async",
    "list_runs",
    "locked",
    "log_path",
    "new_run_id",
    "open_approvals",
    "open_run_file",
    "pending_approvals",
    "prune_runs",
    "read_events",
    "resolve_runs_dir",
    "summarize",
    "validate_run_id",
    "wire_path",
    "writer_pid",
]
