"""harness-mini-agent: a third-party Harness provider, found through the `harness` entry point.

Layer: plugin registration only. Must not import httpx or do I/O at import time: Harness imports every
installed plugin when it starts (`harness_core`'s façade is lazy, so importing `hookimpl` from it is cheap).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from harness_core import hookimpl

if TYPE_CHECKING:
    from harness_core.provider import Provider

__all__ = ["harness_register_providers"]
__version__ = "0.1.0"


@hookimpl
def harness_register_providers(register: Callable[[type[Provider[Any]]], None]) -> None:
    from harness_mini_agent.provider import MiniAgentProvider

    register(MiniAgentProvider)
