"""Harness's version, the one place it is written (the façade and every inner module import it from here)."""

from __future__ import annotations

__version__ = "0.1.0"
