"""The event loop a command runs on: asyncio, or trio when `$HARNESS_ASYNC_BACKEND` says so.

Layer: CLI, loaded when a command runs (anyio); knows nothing of runs or providers.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import anyio

__all__ = ["ENV_BACKEND", "run_async"]


def run_async(func: Callable[..., Any], *args: Any) -> Any:
    """Run `func(*args)` on the event loop named by `$HARNESS_ASYNC_BACKEND` (asyncio by default)."""
    return anyio.run(func, *args, backend=os.environ.get(ENV_BACKEND, "asyncio"))


ENV_BACKEND = "HARNESS_ASYNC_BACKEND"
"""`asyncio` (the default) or `trio`: the event loop a command runs on."""
