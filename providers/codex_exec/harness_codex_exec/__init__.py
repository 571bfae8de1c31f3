"""Harness provider `codex-exec`: the legacy one-shot `codex exec --json` path.

Layer: plugin entry point. Import-light on purpose: the plugin host imports this module for every `harness`
command, so the provider class (and anyio, the transport, ...) is imported only when registration runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from harness_codex_exec._version import __version__
from harness_core import hookimpl

if TYPE_CHECKING:
    from harness_core.provider import Provider

__all__ = ["__version__", "harness_register_providers"]


@hookimpl
def harness_register_providers(register: Callable[[type[Provider[Any]]], None]) -> None:
    from harness_codex_exec.provider import CodexExecProvider

    register(CodexExecProvider)
