"""A test-only provider ported to today's façades halfway (issue 26): it still imports two names from internal
modules, which import today and break it when they move. `tests/planted_providers.py` registers it.

Layer: tests. Its only job is to be read by the contract's import-rule check (`planted-half-ported`).
"""

from __future__ import annotations

from typing import ClassVar

from harness_core.capabilities import ProviderInfo  # the planted bug: `harness_core` exports it
from harness_core.events import TextDelta  # the planted bug: `harness_core` exports it
from harness_core.testing.scripted import ScriptedProvider

__all__ = ["HalfPorted"]


class HalfPorted(ScriptedProvider):
    """The scripted provider, imported halfway through a port."""

    info: ClassVar[ProviderInfo] = ProviderInfo(
        name="planted-half-ported", version="1.0", capabilities=ScriptedProvider.info.capabilities,
        description=f"the scripted provider with a planted bug: internal imports ({TextDelta.__name__})")
