"""How each named ACP agent is kept from loading a project's own configuration when the project is not trusted.

Layer: provider configuration (harness-acp), used by the profiles. Knows each agent's own trust switch and what it
loads from a project; knows no ACP message. Observed with the pinned agents (`tests/test_acp_project_trust_real.py`):
providers/acp/README.md, "A project's own agent configuration".
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

__all__ = ["gemini_untrusted_env", "project_config_found", "qwen_untrusted_env", "untrusted_state_dir"]

QWEN_SYSTEM_SETTINGS = Path("/etc/qwen-code/settings.json")
"""Where Qwen Code 0.24.4 reads system settings on Linux unless `QWEN_CODE_SYSTEM_SETTINGS_PATH` says otherwise; its
system defaults are `system-defaults.json` beside them unless `QWEN_CODE_SYSTEM_DEFAULTS_PATH` says otherwise."""


def gemini_untrusted_env(env: Mapping[str, str]) -> dict[str, str]:
    """Gemini CLI treats the folder as untrusted (its own switch; wins over settings and trusted folders)."""
    return {"GEMINI_CLI_TRUST_WORKSPACE": "false"}


def project_config_found(cwd: Path, names: tuple[str, ...]) -> list[str]:
    """Which of `names` (paths relative to a project, as `AgentProfile.project_config`) exist in `cwd`; each
    `.env` of them (`.env`, `.gemini/.env`, ...) also in the folders above it up to the home directory (Gemini CLI
    and Qwen Code look for one upward)."""
    found = [name for name in names if (cwd / name).exists()]
    upward = [name for name in names if PurePosixPath(name).name == ".env"]
    if upward:
        home = Path.home()
        for parent in cwd.parents:
            if parent == home or parent == parent.parent:
                break
            found += [str(parent / name) for name in upward if (parent / name).exists()]
    return found


def qwen_untrusted_env(env: Mapping[str, str]) -> dict[str, str]:
    """Qwen Code with folder trust on and no folder trusted: system settings that are the machine's own (read from
    where Qwen Code would read them) with `security.folderTrust.enabled` true, and an empty trusted-folders file,
    both written under `untrusted_state_dir()`. The system defaults stay where they were. The settings' `env` is not
    copied (its values are often API keys, and the copy is a file Harness writes): each variable the process does not
    already have is returned with the rest, for the agent's environment."""
    system = Path(env.get("QWEN_CODE_SYSTEM_SETTINGS_PATH") or QWEN_SYSTEM_SETTINGS)
    defaults = env.get("QWEN_CODE_SYSTEM_DEFAULTS_PATH") or str(system.parent / "system-defaults.json")
    settings = _json_object(system)
    given = settings.pop("env", None)  # its values (API keys, often) go to the process, never into our copy
    carried = {str(k): str(v) for k, v in given.items() if str(k) not in env} if isinstance(given, dict) else {}
    security = settings.setdefault("security", {})
    if not isinstance(security, dict):
        security = settings["security"] = {}
    folder_trust = security.setdefault("folderTrust", {})
    if not isinstance(folder_trust, dict):
        folder_trust = security["folderTrust"] = {}
    folder_trust["enabled"] = True
    directory = untrusted_state_dir() / "qwen"
    return {
        **carried,
        "QWEN_CODE_SYSTEM_SETTINGS_PATH": str(_write(directory, "system-settings", settings)),
        "QWEN_CODE_SYSTEM_DEFAULTS_PATH": defaults,
        "QWEN_CODE_TRUSTED_FOLDERS_PATH": str(_write(directory, "trusted-folders", {})),
    }


def untrusted_state_dir() -> Path:
    """Where the files that keep an agent from trusting a project live: `$XDG_CACHE_HOME/harness/untrusted`
    (default `~/.cache/...`), the user's own (0700). Each file is named by its content, written once."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    directory = base / "harness" / "untrusted"
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    return directory


def _json_object(path: Path) -> dict[str, Any]:
    """The JSON object in `path` (missing, unreadable, not plain JSON — Qwen Code also takes comments — or not an
    object: an empty one, and the machine's system settings are not carried over)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(directory: Path, stem: str, data: dict[str, Any]) -> Path:
    """`data` as `directory/STEM-HASH.json` (atomically, 0600), unless that file is there already."""
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = directory / f"{stem}-{hashlib.sha256(text.encode()).hexdigest()[:16]}.json"
    if not path.exists():
        scratch = directory / f".{path.name}.{os.getpid()}.tmp"
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(scratch, path)
    return path
