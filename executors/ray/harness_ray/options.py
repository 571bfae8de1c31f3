"""The `ray` executor's options (`harness batch --engine ray -E KEY=VALUE`, `--address`).

Layer: executor plugin (pure data: imports no Ray). Knows the executor options contract only.
"""

from __future__ import annotations

from harness_core.batch import ExecutorOptions
from pydantic import Field

__all__ = ["RayOptions"]


class RayOptions(ExecutorOptions):
    """Where and how attempts play on Ray."""

    address: str | None = Field(
        default=None, description="The cluster to join: `auto` (the one `ray start` made on this machine, or "
        "RAY_ADDRESS) or HOST:PORT of its head; None starts a local cluster on 127.0.0.1 for the batch.")
    num_cpus: float = Field(default=0.25, ge=0, description="CPUs each attempt takes (agent runs mostly wait).")
    resources: dict[str, float] = Field(
        default_factory=dict, description="Custom resources a node must offer to play an attempt, e.g. "
        "{\"harness-codex\": 1}: start nodes that have the agent CLI with `ray start --resources`.")
    local_cpus: int | None = Field(
        default=None, ge=1, description="A local cluster's CPUs (default: this machine's).")
    batch_bytes: int = Field(
        default=1 << 16, ge=1024, description="At most this many bytes of log lines in one streamed item.")
    backpressure: int = Field(
        default=16, ge=1, description="Streamed items a node may have ahead of the driver before it waits.")
    schedule_timeout: float = Field(
        default=600.0, gt=0, description="Seconds an attempt may wait for a node before it fails (retryable).")
    connect_timeout: float = Field(
        default=10.0, gt=0, description="Seconds to reach the head at `address` before giving up.")
