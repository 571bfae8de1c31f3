"""The plugin manager: loads the default plugins and `harness` entry points, applies allow/block lists, keeps the
provider and executor registries.
Layer: plugin host. Knows providers and executors only as classes registered through the hooks; imports no
provider, and loads its default plugins (the `local` executor) by name, as llm's DEFAULT_PLUGINS. A plugin that
fails to load is recorded as broken (`harness providers`, `harness doctor`); every other plugin keeps working.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, TypeVar

import pluggy

from harness_core import hookspecs
from harness_core._provider_interface import Provider
from harness_core.capabilities import Capability
from harness_core.errors import ProviderNotFoundError
from harness_core.executor import Executor
from harness_core.spec import AgentRunSpec, SessionSpec

__all__ = [
    "DEFAULT_PROVIDER",
    "ENTRY_POINT_GROUP",
    "BrokenPlugin",
    "PluginHost",
    "RegisteredExecutor",
    "RegisteredProvider",
    "get_host",
    "reset_host",
]

ENTRY_POINT_GROUP = "harness"
DEFAULT_PROVIDER = "codex-appserver"
ENV_PROVIDER = "HARNESS_PROVIDER"
ENV_LOAD = "HARNESS_LOAD_PLUGINS"
ENV_DISABLE = "HARNESS_DISABLE_PLUGINS"
_SpecT = TypeVar("_SpecT", AgentRunSpec, SessionSpec)
DEFAULT_PLUGINS = {"local": "harness_core.local_executor"}
"""Plugins every host loads (name → module), before the entry points: Harness's own, below this floor (the floors
test counts these as imports)."""


@dataclass(frozen=True)
class RegisteredProvider:
    name: str
    cls: type[Provider[Any]]
    plugin: str
    distribution: str | None
    distribution_version: str | None


@dataclass(frozen=True)
class RegisteredExecutor:
    name: str
    cls: type[Executor]
    plugin: str
    distribution: str | None
    distribution_version: str | None


@dataclass(frozen=True)
class BrokenPlugin:
    plugin: str
    distribution: str | None
    error: str


def _names(value: str | None) -> set[str] | None:
    if value is None:
        return None
    return {part.strip() for part in value.split(",") if part.strip()}


@dataclass
class PluginHost:
    """A pluggy manager plus the provider registry built from it."""

    pm: pluggy.PluginManager
    providers: dict[str, RegisteredProvider] = field(default_factory=dict)
    broken: list[BrokenPlugin] = field(default_factory=list)
    aliases: dict[str, str | None] = field(default_factory=dict)
    """Other names of registered providers (`ProviderInfo.aliases`) → the provider's name; None for an alias two
    providers claim (it names neither). A provider's own name always wins over another's alias."""
    _alias_claims: dict[str, set[str]] = field(default_factory=dict, repr=False)
    """Every provider that declared each alias (an ambiguous alias's error names them)."""
    executors: dict[str, RegisteredExecutor] = field(default_factory=dict)
    """Batch executors registered by plugins (`harness_register_executors`), `local` (a default plugin) among them."""

    @classmethod
    def create(
        cls,
        *,
        entry_points: bool = True,
        plugins: Iterable[tuple[str, Any]] = (),
        env: dict[str, str] | None = None,
    ) -> PluginHost:
        """Build a host. `plugins` are extra (name, module-or-object) pairs, e.g. in tests."""
        environ = os.environ if env is None else env
        pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        pm.add_hookspecs(hookspecs)
        host = cls(pm)
        allow = _names(environ.get(ENV_LOAD))
        block = _names(environ.get(ENV_DISABLE)) or set()
        for name in block:
            pm.set_blocked(name)
        for name, module in DEFAULT_PLUGINS.items():
            if name not in block:
                host._register_plugin(name, importlib.import_module(module), None, None)
        if entry_points:
            host._load_entry_points(allow, block)
        for name, plugin in plugins:
            host._register_plugin(name, plugin, None, None)
        return host

    def _load_entry_points(self, allow: set[str] | None, block: set[str]) -> None:
        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
            if ep.name in block or (allow is not None and ep.name not in allow):
                continue
            if self.pm.has_plugin(ep.name):
                continue
            dist = ep.dist.metadata["name"] if ep.dist is not None else None
            version = ep.dist.version if ep.dist is not None else None
            try:
                plugin = ep.load()
            except Exception as exc:  # noqa: BLE001 - any import failure is reported, never fatal
                self.broken.append(BrokenPlugin(ep.name, dist, f"{type(exc).__name__}: {exc}"))
                continue
            self._register_plugin(ep.name, plugin, dist, version)

    def _register_plugin(self, name: str, plugin: Any, dist: str | None, version: str | None) -> None:
        try:
            self.pm.register(plugin, name=name)
            self.pm.check_pending()
        except Exception as exc:  # noqa: BLE001 - a bad plugin is reported, the rest keep working
            if self.pm.is_registered(plugin):
                self.pm.unregister(plugin)
            self.broken.append(BrokenPlugin(name, dist, f"{type(exc).__name__}: {exc}"))
            return

        def register(provider_cls: type[Provider[Any]]) -> None:
            if not (isinstance(provider_cls, type) and issubclass(provider_cls, Provider)):
                raise TypeError(f"{provider_cls!r} is not a harness_core.provider.Provider subclass")
            info = getattr(provider_cls, "info", None)
            if info is None:
                raise TypeError(f"{provider_cls.__name__} has no `info` (a ProviderInfo)")
            existing = self.providers.get(info.name)
            if existing is not None and existing.cls is not provider_cls:
                raise ValueError(
                    f"provider name {info.name!r} is already registered by plugin {existing.plugin!r}"
                )
            self.providers[info.name] = RegisteredProvider(info.name, provider_cls, name, dist, version)
            for alias in sorted(_declared_aliases(info)):
                if alias != info.name:
                    claimants = self._alias_claims.setdefault(alias, set())
                    claimants.add(info.name)
                    self.aliases[alias] = info.name if claimants == {info.name} else None

        others = [p for p in self.pm.get_plugins() if p is not plugin]
        hook = self.pm.subset_hook_caller("harness_register_providers", remove_plugins=others)
        try:
            hook(register=register)
            self.pm.subset_hook_caller("harness_register_executors", remove_plugins=others)(
                register=lambda executor_cls: self._register_executor(executor_cls, name, dist, version))
        except Exception as exc:  # noqa: BLE001
            self.broken.append(BrokenPlugin(name, dist, f"{type(exc).__name__}: {exc}"))

    def _register_executor(self, executor_cls: type[Any], plugin: str, dist: str | None, version: str | None) -> None:
        if not (isinstance(executor_cls, type) and issubclass(executor_cls, Executor)):
            raise TypeError(f"{executor_cls!r} is not a harness_core.batch.Executor subclass")
        name = executor_cls.name
        existing = self.executors.get(name)
        if existing is not None and existing.cls is not executor_cls:
            raise ValueError(f"executor name {name!r} is already taken by plugin {existing.plugin!r}")
        self.executors[name] = RegisteredExecutor(name, executor_cls, plugin, dist, version)

    # --- lookups ---------------------------------------------------------------------------------------

    def names(self) -> list[str]:
        return sorted(self.providers)

    def resolve(self, name: str) -> str:
        """The provider name `name` stands for: itself when a provider has that name, else the provider it is
        an alias of, else `name` unchanged."""
        if name in self.providers:
            return name
        return self.aliases.get(name) or name

    def aliases_of(self, name: str) -> list[str]:
        """The aliases that name provider `name` (sorted; a registered name is never an alias)."""
        return sorted(a for a, target in self.aliases.items() if target == name and a not in self.providers)

    def default_name(self, env: dict[str, str] | None = None) -> str:
        environ = os.environ if env is None else env
        return environ.get(ENV_PROVIDER) or DEFAULT_PROVIDER

    def get(self, name: str | None = None) -> RegisteredProvider:
        """The registered provider `name`, or the one it is an alias of (default: `HARNESS_PROVIDER` or
        `DEFAULT_PROVIDER`).

        Raises:
            ProviderNotFoundError: nothing registered under that name; the message lists what is.
        """
        wanted = name or self.default_name()
        found = self.providers.get(self.resolve(wanted))
        if found is None:
            broken = next((b for b in self.broken if b.plugin == wanted), None)
            if broken is not None:
                raise ProviderNotFoundError(wanted, self.names(), broken=broken.error)
            live = {a: target for a, target in self.aliases.items() if target is not None}
            raise ProviderNotFoundError(wanted, self.names(), aliases=live,
                                        claimed_by=sorted(self._alias_claims.get(wanted, ()))
                                        if self.aliases.get(wanted, "") is None else ())
        return found

    def providers_with(self, capability: Capability) -> list[str]:
        return sorted(n for n, p in self.providers.items() if capability in p.cls.info.capabilities)

    @property
    def observes_events(self) -> bool:
        """Whether any plugin implements `harness_on_event` (lets the runner skip the call per event)."""
        return bool(self.pm.hook.harness_on_event.get_hookimpls())

    @property
    def observes_runs(self) -> bool:
        """Whether any plugin implements `harness_run_starting` or the session hooks (lets the runner skip them)."""
        hook = self.pm.hook
        return bool(hook.harness_run_starting.get_hookimpls() or hook.harness_session_opened.get_hookimpls()
                    or hook.harness_session_closed.get_hookimpls())

    @property
    def observes_batches(self) -> bool:
        """Whether any plugin implements `harness_batch_started` or `harness_batch_ended` (lets the batch driver
        skip them, and the trace context of its cells)."""
        hook = self.pm.hook
        return bool(hook.harness_batch_started.get_hookimpls() or hook.harness_batch_ended.get_hookimpls())

    def trace_context(self, run_id: str | None = None) -> dict[str, str]:
        """The W3C trace-context carrier the observers give for `run_id` (a run's or a session's id), or for the
        caller's current context (None): `{"traceparent": ..., "tracestate": ...}`, or `{}` when no plugin has one
        (at once, without a hook call, when none implements `harness_trace_context`). Never raises: a plugin that
        fails gives `{}`."""
        hook = self.pm.hook.harness_trace_context
        if not hook.get_hookimpls():
            return {}
        try:
            found = hook(run_id=run_id)
        except Exception:  # noqa: BLE001 - an observer must not break a run
            return {}
        if not isinstance(found, dict):
            return {}
        return {str(k): str(v) for k, v in found.items() if isinstance(v, str) and v}

    def with_trace_context(self, spec: _SpecT, of: str | None = None) -> _SpecT:
        """`spec` carrying the caller's current trace context (`AgentRunSpec.trace_context`), for a run that plays
        elsewhere (a background worker, a batch task, a Ray worker), or that of `of` (a batch's id: its cells' runs
        are children of the batch's span): unchanged when it already carries one or no observer gives one."""
        if spec.trace_context:
            return spec
        carrier = self.trace_context(of)
        return spec.model_copy(update={"trace_context": carrier}) if carrier else spec


def _declared_aliases(info: Any) -> frozenset[str]:
    """A provider's `ProviderInfo.aliases`: the other names `--provider` accepts for it (none when its info
    declares none)."""
    found: frozenset[Any] = frozenset(info.aliases)
    return frozenset(a for a in found if isinstance(a, str) and a.strip() == a and a)


_HOST: PluginHost | None = None


def get_host() -> PluginHost:
    """The process-wide host, built on first use from the installed entry points."""
    global _HOST
    if _HOST is None:
        _HOST = PluginHost.create()
    return _HOST


def reset_host(host: PluginHost | None = None) -> None:
    """Replace (or drop) the process-wide host; for tests and embedding applications."""
    global _HOST
    _HOST = host
