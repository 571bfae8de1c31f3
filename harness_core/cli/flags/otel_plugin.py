"""Whether a Harness plugin is installed, by its entry point: what `--otel` and config `otel = true` check.

Layer: CLI, loaded when that check runs (importlib.metadata is ~20-40 ms of CPU that `harness --help` and the
commands without `--otel` should not pay); knows the plugin host's entry-point group by name.
"""

from __future__ import annotations

from importlib import metadata

__all__ = ["installed"]

_GROUP = "harness"  # the plugin host's (harness_core.plugins), read by name here


def installed(name: str) -> bool:
    """Whether a distribution declares the plugin `name` (entry point group `harness`)."""
    return any(ep.name == name for ep in metadata.entry_points(group=_GROUP))
