"""Test-only plugin: exposes the scripted provider's hook implementation under a real entry point."""

from harness_core.testing.scripted import harness_register_providers

__all__ = ["harness_register_providers"]
