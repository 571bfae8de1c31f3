"""Test-only plugin that fails on import, like a provider whose dependency is missing."""

raise ImportError("harness_test_broken needs a module that is not installed (simulated)")
