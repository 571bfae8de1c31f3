"""Harness provider `codex-appserver`: OpenAI Codex driven through `codex app-server --listen stdio://`.

Layer: plugin entry point. Import-light on purpose: the provider module (and with it anyio and the transport)
is imported only when the host asks for the provider class, so `harness providers` stays fast.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from harness_core import hookimpl

from harness_codex_appserver._version import __version__

if TYPE_CHECKING:
    from harness_core.provider import Provider

__all__ = ["__version__", "harness_register_providers"]


@hookimpl
def harness_register_providers(register: Callable[[type[Provider[Any]]], None]) -> None:
    from harness_codex_appserver.provider import CodexAppServerProvider

    register(CodexAppServerProvider)
