"""The one notice that a run does not trust its project with the agent's own configuration, naming the files of
`ProviderInfo.project_config` the project has (the provider keeps the agent from loading them).

Layer: CLI, loaded when a command runs; knows the user's `trusted_projects` (`Config.trusts`) and what each
provider declares; knows no concrete agent.
"""

from __future__ import annotations

from pathlib import Path

from harness_core.cli.output import say
from harness_core.cli.settings.loader import Config, user_config_path
from harness_core.plugins import PluginHost, get_host

__all__ = ["project_files", "say_untrusted", "untrusted_notice"]


def project_files(cwd: Path, patterns: tuple[str, ...]) -> list[Path]:
    """The paths of `patterns` (relative to a project directory) that exist in `cwd` or a directory above it, up
    to the project's root: the nearest directory holding `.git`, else `cwd` alone."""
    here = cwd.expanduser().resolve()
    root = next((d for d in (here, *here.parents) if (d / ".git").exists()), here)
    found: list[Path] = []
    for directory in (here, *here.parents):
        found += [directory / rel for rel in patterns if (directory / rel).exists()]
        if directory == root:
            break
    return found


def untrusted_notice(config: Config, host: PluginHost, provider: str | None, cwd: Path) -> tuple[str, ...] | None:
    """The notice `harness run` prints once (in parts a narrow terminal may break between) when `cwd` is not a
    trusted project and holds configuration of the provider's agent that can run programs (which the run does not
    load), or None."""
    if config.trusts(cwd):
        return None
    patterns = host.get(provider).cls.info.project_config
    found = project_files(cwd, patterns)
    if not found:
        return None
    here = cwd.expanduser().resolve()
    shown = ", ".join(str(p.relative_to(here)) if p.is_relative_to(here) else str(p) for p in found)
    return ("not loading the project's own agent configuration", f"({shown}):", f"{here} is not a trusted project;",
            "to load it, add it to trusted_projects", f"in {user_config_path()}")


def say_untrusted(config: Config, provider: str | None, cwd: Path, *, quiet: bool = False) -> None:
    """Print, once, that the project's own agent configuration is not loaded (when `cwd` is not a trusted project
    and has some for the provider's agent); nothing under `quiet`."""

    notice = None if quiet else untrusted_notice(config, get_host(), provider, cwd)
    if notice is not None:
        say(*notice)
