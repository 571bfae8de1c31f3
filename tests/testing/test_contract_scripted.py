"""The shipped contract suite, run against the scripted provider found through its test entry point."""

from __future__ import annotations

from harness_core.testing.contract import ProviderContract
from tests.test_plugins import needs_test_plugins

pytestmark = needs_test_plugins


class TestScriptedContract(ProviderContract):
    provider_name = "scripted"
