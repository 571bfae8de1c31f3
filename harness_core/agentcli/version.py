"""An agent CLI's version: read it (`cli_version`), check it against a minimum, and `probe_cli` (find, read
cached, check); `cli_output` runs any short command of such a CLI the same way (a login check, say).
Layer: core, shared by every provider. Knows no specific CLI: names, install hints and option names come from the
caller. The version cache across processes: docs/providers.md (finding the agent's CLI).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio

from harness_core._provider_interface import CliInfo
from harness_core.agentcli.binary import locate_cli
from harness_core.agentcli.cache import _cache_key, _cached_version, _remember_version
from harness_core.errors import CliNotFoundError, CliVersionUnsupportedError, SpawnFailedError, truncate

__all__ = ["cli_output", "cli_version", "probe_cli", "require_min_version"]

_VERSION_OUTPUT_LIMIT = 64 * 1024
_DEFAULT_PATTERN = r"(\d+\.\d+\.\d+)"


async def cli_output(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = 15.0,  # noqa: ASYNC109 - the deadline is part of the documented API
) -> tuple[int, str]:
    """Run a short CLI command (`--version`, a login-status command) with stdin closed and
    return its exit status and output (stdout and stderr together, at most 64 KiB, decoded).

    The child runs in its own session under a deadline and is always reaped (its group is killed if it outlives
    the deadline).

    Raises:
        CliNotFoundError: the program does not exist.
        SpawnFailedError: it could not be started, or did not finish within `timeout`.
    """
    shown = " ".join(argv)
    try:
        proc = await anyio.open_process(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=dict(env) if env is not None else None,
        )
    except FileNotFoundError:
        raise CliNotFoundError(
            f"{argv[0]} does not exist; reinstall the CLI or point the provider's binary option at it",
            path=str(argv[0]),
        ) from None
    except OSError as exc:
        raise SpawnFailedError(
            f"could not run `{shown}`: {exc.strerror or exc}; check the file is an executable for this "
            "machine (chmod +x, right architecture)",
            path=str(argv[0]),
        ) from None

    output = bytearray()
    timed_out = False
    try:
        with anyio.move_on_after(timeout) as scope:
            assert proc.stdout is not None
            async for chunk in proc.stdout:
                if len(output) < _VERSION_OUTPUT_LIMIT:
                    output += chunk[: _VERSION_OUTPUT_LIMIT - len(output)]
            await proc.wait()
        timed_out = scope.cancelled_caught
    finally:
        with anyio.CancelScope(shield=True):
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
            await proc.aclose()

    text = output.decode("utf-8", "replace").strip()
    if timed_out:
        raise SpawnFailedError(
            f"`{shown}` did not finish within {timeout:g}s; check that the CLI runs at all from a terminal. "
            f"Output so far: {truncate(text) or '(none)'}",
            path=str(argv[0]),
        )
    assert proc.returncode is not None
    return proc.returncode, text


async def cli_version(
    path: Path,
    *,
    timeout: float = 15.0,  # noqa: ASYNC109 - the deadline is part of the documented API
    pattern: str = _DEFAULT_PATTERN,
) -> str:
    """Run `path --version` and return the first match of `pattern` (its first group if it has one).

    The child runs in its own session under a deadline and is always reaped (its group is killed if it
    outlives the deadline).

    Raises:
        CliNotFoundError: `path` does not exist.
        SpawnFailedError: it could not be started, timed out, failed, or printed no version.
    """
    shown = f"{path} --version"
    returncode, text = await cli_output([str(path), "--version"], timeout=timeout)
    if returncode != 0:
        raise SpawnFailedError(
            f"`{shown}` exited with status {returncode}; reinstall the CLI or check it runs from a "
            f"terminal. Output: {truncate(text) or '(none)'}",
            path=str(path),
            exit_code=returncode,
        )
    match = re.search(pattern, text)
    if match is None:
        raise SpawnFailedError(
            f"`{shown}` printed no version (expected something matching {pattern!r}); is {path} the right "
            f"binary? Output: {truncate(text) or '(none)'}",
            path=str(path),
        )
    return match.group(1) if match.groups() else match.group(0)


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version))


def require_min_version(cli: str, found: str, minimum: str, *, install_hint: str) -> None:
    """Check `found` >= `minimum`, comparing dotted numbers numerically (1.10.0 > 1.9.9).

    Raises:
        CliVersionUnsupportedError: `found` is older than `minimum`.
    """
    have, need = _version_tuple(found), _version_tuple(minimum)
    width = max(len(have), len(need))
    if have + (0,) * (width - len(have)) < need + (0,) * (width - len(need)):
        raise CliVersionUnsupportedError(
            f"{cli} {found} is too old; Harness needs {cli} >= {minimum}. Upgrade it with `{install_hint}`",
            cli=cli,
            found=found,
            minimum=minimum,
        )


async def probe_cli(
    name: str,
    explicit: str | None,
    *,
    install_hint: str,
    option_name: str,
    minimum: str,
    native_globs: Sequence[str] = (),
    timeout: float = 15.0,  # noqa: ASYNC109 - passed to cli_version
    pattern: str = _DEFAULT_PATTERN,
) -> CliInfo:
    """`locate_cli` + `cli_version` + `require_min_version`, with the version cached by resolved path, mtime,
    size, inode and pattern, in this process and (in the `harness` CLI: `use_disk_cache`) in
    `$XDG_CACHE_HOME/harness/cli-versions.json` (paths and versions only), so repeated runs, and later `harness`
    processes, do not re-spawn `--version`. A missing,
    corrupt or unwritable cache file only means probing again.

    Raises:
        CliNotFoundError, CliVersionUnsupportedError, SpawnFailedError: as the three functions do.
    """
    path = locate_cli(
        name, explicit, install_hint=install_hint, option_name=option_name, native_globs=native_globs
    )
    key = _cache_key(path, pattern)
    version = _cached_version(key) if key is not None else None
    if version is None:
        version = await cli_version(path, timeout=timeout, pattern=pattern)
        if key is not None:
            _remember_version(key, version)
    try:
        require_min_version(name, version, minimum, install_hint=install_hint)
    except CliVersionUnsupportedError as exc:
        exc.details["path"] = str(path)  # found, but too old: `harness doctor` shows where
        raise
    return CliInfo(path=str(path), version=version)
