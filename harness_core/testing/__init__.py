"""Testing support shipped with Harness: the provider contract suite, its pytest plugin, the scripted provider.

Layer: testing. Only tests (ours, a provider's, a user's) import this package; nothing that runs outside tests
does. Scenarios and scripted backends live in `harness_core.offline`/`scripted`; each fake agent CLI in the
distribution of the CLI it imitates. Importing this package starts nothing; submodules are imported on demand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness_core._facade import missing_name

if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any name

    def __getattr__(name: str) -> Any:
        """A name this façade does not export: an ImportError saying where it is (`harness_core._facade`)."""
        raise missing_name(__name__, name)
