"""Harness providers for agents that speak the Agent Client Protocol (ACP): Gemini CLI, Qwen Code, Zed's Codex and
Claude adapters by name, and any other ACP agent by its command (`--provider acp -o command="my-agent --acp"`).

Layer: provider entry point. Import-light: registering imports nothing heavy; the provider modules (and anyio, the
transport) load only when the host asks for the classes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness_core import hookimpl

from harness_acp._version import __version__

__all__ = ["__version__", "harness_register_providers"]


@hookimpl
def harness_register_providers(register: Callable[[Any], None]) -> None:
    from harness_acp.generic import GenericAcpProvider
    from harness_acp.profiles import PROFILES
    from harness_acp.provider import named_provider

    for profile in PROFILES.values():
        register(named_provider(profile))
    register(GenericAcpProvider)
