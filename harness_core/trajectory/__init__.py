"""Trajectories: recorded runs as Harbor's ATIF (`atif_trajectory`, `export_atif`) or as the chat-messages list
fine-tuning tools read (`openai_messages`, `export_messages`); `write_trajectory` for a batch's runs.

Layer: trajectory, on the floor of `offline` (docs/architecture.md): reads the run store, never a batch. The
mapping modules (`atif`, `messages`) are pure; `export` finds, reads, scrubs and writes. docs/trajectories.md.
"""

from __future__ import annotations

from harness_core.trajectory.atif import ATIF_VERSION, atif_trajectory
from harness_core.trajectory.export import (
    FORMATS,
    Format,
    export,
    export_atif,
    export_messages,
    read_runs,
    resolve_logs,
    trajectory_text,
    write_trajectory,
)
from harness_core.trajectory.messages import messages_from_trajectory, openai_messages

__all__ = [
    "ATIF_VERSION",
    "FORMATS",
    "Format",
    "atif_trajectory",
    "export",
    "export_atif",
    "export_messages",
    "messages_from_trajectory",
    "openai_messages",
    "read_runs",
    "resolve_logs",
    "trajectory_text",
    "write_trajectory",
]
