"""This distribution's version, the one place it is written (the package's `__init__` and inner modules import it
from here, so no inner module imports the package that registers it)."""

from __future__ import annotations

__version__ = "0.1.0"
