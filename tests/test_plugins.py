"""Plugin discovery through real installed entry points, allow/block lists, broken plugins, clashes."""

from __future__ import annotations

from importlib import metadata
from typing import Any

import pytest

import harness_core.testing.scripted as scripted
from harness_core.capabilities import Capability
from harness_core.errors import ProviderNotFoundError
from harness_core.hookspecs import hookimpl
from harness_core.plugins import DEFAULT_PROVIDER, PluginHost

INSTALLED = {ep.name for ep in metadata.entry_points(group="harness")}
needs_test_plugins = pytest.mark.skipif(
    not {"scripted", "broken"} <= INSTALLED,
    reason="install tests/plugins/scripted and tests/plugins/broken (tox does)",
)


@needs_test_plugins
def test_entry_point_discovery_records_the_distribution() -> None:
    host = PluginHost.create(env={})
    found = host.get("scripted")
    assert found.distribution == "harness-test-scripted"
    assert found.distribution_version == "0.0.1"
    assert found.cls is scripted.ScriptedProvider


@needs_test_plugins
def test_a_broken_plugin_is_reported_and_the_others_still_work() -> None:
    host = PluginHost.create(env={})
    broken = {b.plugin: b for b in host.broken}
    assert "broken" in broken
    assert broken["broken"].distribution == "harness-test-broken"
    assert "ImportError" in broken["broken"].error and "not installed" in broken["broken"].error
    assert "scripted" in host.names()


@needs_test_plugins
def test_allow_list_and_block_list() -> None:
    only = PluginHost.create(env={"HARNESS_LOAD_PLUGINS": "scripted"})
    assert only.names() == ["scripted"] and only.broken == []
    blocked = PluginHost.create(env={"HARNESS_DISABLE_PLUGINS": "scripted, broken"})
    assert "scripted" not in blocked.names() and all(b.plugin != "broken" for b in blocked.broken)
    none = PluginHost.create(env={"HARNESS_LOAD_PLUGINS": ""})
    assert none.names() == []


def test_misspelt_hook_is_rejected_loudly() -> None:
    class Typo:
        @hookimpl
        def harness_register_provider(self, register: Any) -> None:  # missing "s"
            raise AssertionError("never called")

    host = PluginHost.create(entry_points=False, plugins=[("typo", Typo()), ("scripted", scripted)])
    assert [b.plugin for b in host.broken] == ["typo"]
    assert "harness_register_provider" in host.broken[0].error
    assert host.names() == ["scripted"]


def test_name_clash_is_refused() -> None:
    class Clash(scripted.ScriptedProvider):
        pass

    class Plugin:
        @hookimpl
        def harness_register_providers(self, register: Any) -> None:
            register(Clash)

    host = PluginHost.create(entry_points=False, plugins=[("scripted", scripted), ("clash", Plugin())])
    assert host.get("scripted").cls is scripted.ScriptedProvider
    assert "already registered" in host.broken[0].error


def test_registering_something_that_is_not_a_provider() -> None:
    class Plugin:
        @hookimpl
        def harness_register_providers(self, register: Any) -> None:
            register(dict)

    host = PluginHost.create(entry_points=False, plugins=[("bad", Plugin())])
    assert "not a harness_core.provider.Provider subclass" in host.broken[0].error


def test_default_provider_and_override() -> None:
    host = PluginHost.create(entry_points=False, plugins=[("scripted", scripted)])
    assert host.default_name({}) == DEFAULT_PROVIDER == "codex-appserver"
    assert host.default_name({"HARNESS_PROVIDER": "scripted"}) == "scripted"
    with pytest.raises(ProviderNotFoundError) as caught:
        host.get("nope")
    assert "installed providers: scripted" in str(caught.value)
    assert host.providers_with(Capability.INTERRUPT) == ["scripted"]


@needs_test_plugins
def test_asking_for_a_broken_provider_says_why() -> None:
    host = PluginHost.create(env={})
    with pytest.raises(ProviderNotFoundError) as caught:
        host.get("broken")
    assert "failed to load" in str(caught.value) and "not installed (simulated)" in str(caught.value)
