"""The versions `probe_cli` has read, kept per binary: in this process, and (for the `harness` CLI) on disk.

Layer: core support (a helper of `agentcli.version`). Knows file paths, stat keys and a small JSON file; nothing of
providers or runs. The CLI turns the disk cache on before any command runs (`cache_switch`, which this module
reads). What the file holds and why a bad one is harmless: docs/providers.md (finding the agent's CLI).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from harness_core._logging import get_logger
from harness_core.agentcli.cache_switch import disk_cache_on, use_disk_cache
from harness_core.files.private import make_private_dirs

__all__ = ["cached_probe", "clear_probe_cache", "remember_probe", "use_disk_cache"]

_version_cache: dict[str, str] = {}
_probe_data: dict[str, dict[str, Any]] = {}
_CACHE_FILE = "cli-versions.json"
_CACHE_ENTRIES = 32  # the newest kept: a handful of CLIs, a few upgrades each
_CACHE_MAX_BYTES = 64 * 1024


def clear_probe_cache() -> None:
    """Forget every version `probe_cli` has read, in this process and on disk (tests, or after an upgrade that
    kept the binary's size and mtime)."""
    _version_cache.clear()
    _probe_data.clear()
    path = _cache_path()
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink()


def _cache_path() -> Path | None:
    """`$XDG_CACHE_HOME/harness/cli-versions.json` (default `~/.cache/harness/`); None when the disk cache is
    off or there is no home to put it in."""
    if not disk_cache_on():
        return None
    base = os.environ.get("XDG_CACHE_HOME", "")
    try:
        root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    except RuntimeError:  # no HOME and no passwd entry (some containers): no disk cache
        return None
    return root / "harness" / _CACHE_FILE


def _cache_key(path: Path, pattern: str) -> str | None:
    """What a version read stays valid for: the resolved file, its mtime, ctime, size and inode, and the pattern
    (None when the file cannot be stat'ed: no caching). ctime too: a file rewritten in place within one mtime
    tick keeps its mtime, not its ctime."""
    try:
        resolved = path.resolve(strict=True)
        st = resolved.stat()
    except OSError:
        return None
    return json.dumps([str(resolved), st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, pattern])


def _read_disk_cache() -> dict[str, dict[str, Any]]:
    """The versions earlier processes read; {} when the file is missing, unreadable, too big or not ours."""
    path = _cache_path()
    if path is None:
        return {}
    try:
        with path.open("rb") as fh:
            raw = fh.read(_CACHE_MAX_BYTES + 1)
        data = json.loads(raw) if len(raw) <= _CACHE_MAX_BYTES else None
    except (OSError, ValueError):
        return {}
    entries = data.get("entries") if isinstance(data, dict) and data.get("format") == 1 else None
    if not isinstance(entries, dict):
        return {}
    return {k: v for k, v in entries.items()
            if isinstance(k, str) and isinstance(v, dict) and isinstance(v.get("version"), str)
            and isinstance(v.get("at"), (int, float))}


def _cached_version(key: str) -> str | None:
    found = _version_cache.get(key)
    if found is None:
        entry = _read_disk_cache().get(key)
        if entry is not None:
            found = _version_cache[key] = entry["version"]
    return found


PROBE_TTL = 24 * 3600.0
"""Seconds a probe's answer is kept on disk: the binary's identity may not change when what it runs does (a
launcher such as `npx` fetching a newer package)."""


def _probe_key(path: Path, what: str) -> str | None:
    """The cache key of probe `what` on `path`: `what` (a command line, which may carry secrets) only as a hash."""
    return _cache_key(path, "probe:" + hashlib.sha256(what.encode()).hexdigest())


def cached_probe(path: Path, what: str) -> dict[str, Any] | None:
    """What a provider's probe learned about the binary at `path` (`what` says which probe, e.g. the command
    line it ran: kept only as a hash), while the binary is unchanged (same resolved file, mtime, ctime, size,
    inode) and for at most `PROBE_TTL` seconds; None if never or no longer."""
    key = _probe_key(path, what)
    if key is None:
        return None
    found = _probe_data.get(key)
    if found is None:
        entry = _read_disk_cache().get(key)
        data = entry.get("data") if entry is not None else None
        if isinstance(data, dict) and entry is not None and time.time() - float(entry["at"]) < PROBE_TTL:
            found = _probe_data[key] = data
    return found


def remember_probe(path: Path, what: str, data: dict[str, Any]) -> None:
    """Keep `data` (small, JSON, no secrets) as what the probe `what` learned about the binary at `path`: in this
    process, and on disk where the version cache is (the `harness` CLI), until the binary changes."""
    key = _probe_key(path, what)
    if key is not None:
        _probe_data[key] = data
        _write_entry(key, {"version": str(data.get("version") or ""), "data": data, "at": time.time()})


def _remember_version(key: str, version: str) -> None:
    """Keep `version` for `key`, in this process and (best effort, atomically) on disk for the next ones."""
    _version_cache[key] = version
    _write_entry(key, {"version": version, "at": time.time()})


def _write_entry(key: str, entry: dict[str, Any]) -> None:
    target = _cache_path()
    if target is None:
        return
    entries = _read_disk_cache()
    entries[key] = entry
    newest = dict(sorted(entries.items(), key=lambda kv: kv[1]["at"])[-_CACHE_ENTRIES:])
    tmp: str | None = None
    try:
        make_private_dirs(target.parent)
        fd, tmp = tempfile.mkstemp(prefix=".cli-versions.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"format": 1, "entries": newest}, fh, separators=(",", ":"))
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:  # a read-only home, a full disk: the next process probes again
        get_logger(__name__).debug("cli_version_cache_unwritable", path=str(target), error=str(exc))
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
