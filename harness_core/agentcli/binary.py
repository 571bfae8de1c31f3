"""Finding an agent CLI's binary: the path a provider option names, else PATH; the native binary, not its node
wrapper, when the caller says where it lies.
Layer: core, shared by every provider. Knows no specific CLI: names, install hints, option names and the globs
that lead from a node wrapper to its native binary come from the caller (why: docs/providers.md).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from harness_core._logging import get_logger
from harness_core.errors import CliNotFoundError

__all__ = ["locate_cli"]

log = get_logger(__name__)


def _is_executable_file(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _native_binary(found: Path, native_globs: Sequence[str]) -> Path | None:
    """The first executable match of `native_globs` next to the node_modules tree `found` resolves into.

    Globs are relative to a directory that contains a `node_modules` directory on the resolved path; the
    innermost such directory is tried first (nested installs), then outwards up to the npm prefix.
    """
    if not native_globs:
        return None
    try:
        resolved = found.resolve(strict=True)
    except OSError:
        return None
    parts = resolved.parts
    prefixes = [Path(*parts[:i]) for i, part in enumerate(parts) if part == "node_modules" and i > 0]
    for prefix in reversed(prefixes):
        for pattern in native_globs:
            for match in sorted(prefix.glob(pattern)):
                if _is_executable_file(match):
                    return match
    return None


def locate_cli(
    name: str,
    explicit: str | None,
    *,
    install_hint: str,
    option_name: str,
    native_globs: Sequence[str] = (),
) -> Path:
    """Find the CLI `name`: `explicit` (a provider option) if given, else `shutil.which(name)`.

    If the path found resolves (through symlinks) into a `node_modules` tree and one of `native_globs`
    matches an executable relative to the directory holding that `node_modules`, that native binary is
    returned instead of the node wrapper.

    Raises:
        CliNotFoundError: `explicit` does not exist or is not executable, or `name` is not on PATH.
    """
    if explicit is not None:
        found = Path(explicit).expanduser()
        if not _is_executable_file(found):
            raise CliNotFoundError(
                f"{option_name}={explicit} does not exist or is not executable; point the {option_name} option "
                f"at the {name} binary (on the command line -o {option_name}=PATH), or drop it to use {name} from "
                f"PATH (install it with `{install_hint}`)",
                cli=name,
                path=explicit,
            )
    else:
        which = shutil.which(name)
        if which is None:
            raise CliNotFoundError(
                f"{name} not found on PATH; install it with `{install_hint}` or set the {option_name} option to "
                f"its path (on the command line -o {option_name}=PATH)",
                cli=name,
            )
        found = Path(which)
    native = _native_binary(found, native_globs)
    if native is not None:
        log.debug("cli_native_binary", cli=name, wrapper=str(found), native=str(native))
        return native
    return found
