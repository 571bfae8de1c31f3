"""Harness provider for Claude Code (`claude -p` in bidirectional stream-json mode).

Layer: provider entry point. Import-light: registering the provider imports nothing heavy; the provider
module (and anyio, the transport) load only when the host asks for the class.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness_core import hookimpl

__all__ = ["harness_register_providers"]

__version__ = "0.1.0"


@hookimpl
def harness_register_providers(register: Callable[[Any], None]) -> None:
    from harness_claude.provider import ClaudeProvider

    register(ClaudeProvider)
