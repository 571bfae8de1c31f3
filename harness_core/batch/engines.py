"""The executors a batch can play on, by name (`--engine`): those the plugins registered, `local` among them.

Layer: batch. Knows the plugin host and the executor contract; of an engine, only how to install the optional ones
Harness ships (`OPTIONAL_ENGINES`), for the error when one is missing.
"""

from __future__ import annotations

from typing import Any

from harness_core.errors import InvalidSpecError
from harness_core.executor import Executor
from harness_core.plugins import PluginHost, get_host

__all__ = ["executor_named", "executor_names"]

OPTIONAL_ENGINES: dict[str, str] = {
    "ray": "`pip install -e 'executors/ray[ray]'` (in Harness's repository) adds `ray`, with Ray itself",
}
"""The executors Harness ships as distributions of their own: name → how to install it (said when it is missing)."""


def executor_names(host: PluginHost | None = None) -> list[str]:
    """Every executor `--engine` takes: `local` first, then those other plugins registered."""
    return sorted((host or get_host()).executors, key=lambda name: (name != "local", name))


def executor_named(name: str, options: dict[str, Any] | None = None, *,
                   host: PluginHost | None = None) -> Executor:
    """An executor by name with its options validated (not started).

    Raises:
        InvalidSpecError: no such executor (the message lists those installed, and says why a plugin that should
            have registered it did not, or how to install it when it is one of `OPTIONAL_ENGINES`), or its options
            do not validate.
    """
    host = host or get_host()
    found = host.executors.get(name)
    if found is None:
        broken = next((b for b in host.broken if b.plugin == name), None)
        install = OPTIONAL_ENGINES.get(name)
        hint = (f" (plugin {name!r} is installed but failed to load: {broken.error})" if broken else
                f"; {install}" if install else "")
        raise InvalidSpecError(f"no executor named {name!r}{hint}; installed: {', '.join(executor_names(host))}")
    cls: type[Executor] = found.cls
    return cls(cls.parse_options(options or {}))
