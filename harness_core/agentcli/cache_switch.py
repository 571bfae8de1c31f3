"""Whether `probe_cli` keeps the versions it reads on disk too (`cache`): off for a library caller, which writes
nothing under the user's home by itself; the `harness` CLI turns it on before any command runs.

Layer: core support (of `agentcli.cache`). Imports nothing: the CLI loads it at start-up (`harness --help`), where
`cache`'s own imports (hashlib, json, tempfile, the private-files helpers) are not needed.
"""

from __future__ import annotations

__all__ = ["disk_cache_on", "use_disk_cache"]

_disk_cache = [False]


def use_disk_cache(enabled: bool = True) -> None:
    """Keep the versions `probe_cli` reads in `$XDG_CACHE_HOME/harness/cli-versions.json` too, for the next
    processes (the `harness` CLI does; each of its commands is a short-lived process)."""
    _disk_cache[0] = enabled


def disk_cache_on() -> bool:
    """Whether `use_disk_cache` turned the disk cache on in this process."""
    return _disk_cache[0]
