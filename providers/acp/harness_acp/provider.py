"""The ACP providers: one class per named agent (built from its profile), all playing turns the same way.

Layer: provider lifecycle. Spawns the agent through `ctx.spawn`, opens its ACP session (`connection`), plays
prompt turns (`turn`), keeps the process for a live session (`session`). Knows the named agents only through their
profiles; knows nothing of rendering, run logs or how approvals are decided.
"""

from __future__ import annotations

import importlib
import json
import os
import re
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import anyio
from harness_core import (
    AgentRunSpec,
    HarnessResult,
    InvalidSpecError,
    SessionSpec,
    SessionStarted,
    SpawnFailedError,
    UnsupportedFeatureError,
)
from harness_core.provider import (
    API_IMAGE_TYPES,
    CliInfo,
    OfflineSetup,
    Provider,
    ProviderInfo,
    ProviderSession,
    RunContext,
    Scratch,
    SessionContext,
    cli_version,
    locate_cli,
    redact_argv,
    require_min_version,
    traced_env,
)

from harness_acp._version import __version__
from harness_acp.connection import AcpConnection
from harness_acp.options import AcpOptions, options_for
from harness_acp.profiles import AgentProfile
from harness_acp.session import AcpSession
from harness_acp.trust import project_config_found
from harness_acp.turn import PromptTurn

if TYPE_CHECKING:
    from harness_core.scripted.scenarios import Scenario

__all__ = ["AcpProvider", "named_provider", "package_version"]

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH", re.IGNORECASE)

TMPDIR_PREFIX = "harness-agent-tmp-"
"""The agent's own temporary directory (`TMPDIR`), a 0700 scratch directory made before it starts and removed with
its contents when it is done: Gemini CLI 0.61.0 writes a report of each failed model request to Node's
`os.tmpdir()` (`gemini-client-error-*.json`, mode 0644, the whole conversation), which in /tmp anyone could read
and nothing would remove."""


def package_version(path: Path, package: str) -> str | None:
    """The version in the package.json of the npm package `path` was installed with (its platform package for a
    native binary: `<package>-linux-x64`), or None when it lies in no such package."""
    try:
        resolved = path.resolve(strict=True)
    except OSError:
        return None
    for parent in resolved.parents:
        manifest = parent / "package.json"
        if manifest.is_file():
            try:
                data = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None
            name = data.get("name") if isinstance(data, dict) else None
            if isinstance(name, str) and (name == package or name.startswith(package + "-")):
                version = data.get("version")
                return version if isinstance(version, str) else None
            return None
        if parent.name == "node_modules":
            return None
    return None


class AcpProvider(Provider[AcpOptions]):
    """An agent that speaks ACP on stdio. Subclasses set `profile` (see `named_provider`)."""

    profile: ClassVar[AgentProfile]

    async def probe(self, options: AcpOptions) -> CliInfo:
        """The agent's executable (`-o bin`, else PATH; the native binary beside an npm wrapper) and its version:
        from its npm package.json when it has one, else `--version`.

        Raises:
            CliNotFoundError: not installed (the message says how to install the pinned version).
            CliVersionUnsupportedError: older than the profile's minimum.
        """
        profile = self.profile
        path = locate_cli(profile.cli, options.bin, install_hint=profile.install, option_name=f"{profile.cli}_bin",
                          native_globs=profile.native_globs)
        version = package_version(path, profile.package)
        if version is None:
            try:
                version = await cli_version(path)
            except SpawnFailedError:  # no --version (codex-acp has none): initialize's agentInfo says it later
                version = None
        if version is not None:
            require_min_version(profile.cli, version, profile.min_version, install_hint=profile.install)
        return CliInfo(path=str(path), version=version)

    def offline_setup(self, scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup | None:
        """The real agent against a scripted model backend on 127.0.0.1 (see the profile's `offline` module)."""
        if self.profile.offline is None:
            return None
        module, _, func = self.profile.offline.partition(":")
        make: Callable[[Scenario, Path, Path], OfflineSetup] = getattr(importlib.import_module(module), func)
        setup = make(scenario, workspace, state_dir)
        pinned_env = dict(setup.pinned_env) if setup.pinned_env is not None else dict.fromkeys(
            setup.env, "is set by the offline setup")
        # Only the keys stay secret (the spec's env, masked in every file Harness writes); the paths and switches
        # go to `-o public_env`, so that the agent's home showing up in its messages is not masked as if it were a key.
        public = {k: v for k, v in setup.env.items() if not _SECRET_NAME.search(k)}
        setup.env = {k: v for k, v in setup.env.items() if k not in public}
        setup.provider_options["public_env"] = {**setup.provider_options.get("public_env", {}), **public}
        # A pinned variable is pinned wherever it is given: in the spec's env or in `-o public_env`.
        setup.pinned_env = pinned_env
        setup.pinned_options = {**(setup.pinned_options or {}),
                                **{f"public_env.{name}": why for name, why in pinned_env.items()}}
        if setup.check_options is None:
            setup.check_options = _no_args_offline(self.profile.cli)
        return setup

    # -- spawning --------------------------------------------------------------------------------------------

    def argv(self, options: AcpOptions, cli: CliInfo, spec: AgentRunSpec | SessionSpec | None = None) -> list[str]:
        profile = self.profile
        launch = profile.launch(spec) if profile.launch is not None and spec is not None else []
        found = cli.path or options.bin or profile.cli
        entry = profile.entry(Path(found)) if profile.entry is not None else None
        return [*(entry or [found]), *profile.args, *options.args, *launch]

    def child_env(self, options: AcpOptions, spec: AgentRunSpec | SessionSpec,
                  tmpdir: Path | None = None) -> dict[str, str]:
        """The agent's environment: ours, `TMPDIR` naming `tmpdir` (its private one: `TMPDIR_PREFIX`), `-o
        public_env`, the spec's, what the profile sets for spec fields, what keeps it from loading an untrusted
        project's own configuration (then its fix for a known quirk). A `TMPDIR` given in the spec or `-o
        public_env` wins."""
        launch = self.profile.launch_env(spec) if self.profile.launch_env is not None else {}
        private = {"TMPDIR": str(tmpdir)} if tmpdir is not None else {}
        env = {**os.environ, **private, **options.public_env, **spec.env, **launch}
        if not spec.trust_project and self.profile.untrusted_env is not None and not self._trusted_for_mcp(spec):
            env.update(self.profile.untrusted_env(env))
        return self.profile.fix_env(env) if self.profile.fix_env is not None else env

    def _trusted_for_mcp(self, spec: AgentRunSpec | SessionSpec) -> bool:
        """Whether an untrusted project's folder is trusted all the same, for an agent that connects MCP servers
        only in a trusted folder (`AgentProfile.mcp_needs_trust`): when the spec has servers and the project has
        none of the configuration the agent would then load.

        Raises:
            InvalidSpecError: the spec has servers and the project has such configuration (before spawn).
        """
        profile = self.profile
        if not (spec.mcp_servers and profile.mcp_needs_trust):
            return False
        found = project_config_found(Path(spec.cwd), profile.project_config)
        if found:
            raise InvalidSpecError(
                f"{profile.title} connects MCP servers only in a trusted folder, and this project is not trusted "
                f"while it has its own {profile.cli} configuration ({', '.join(found)}), which a trusted folder "
                "would load (it can run programs): trust the project (add it to trusted_projects in your Harness "
                "config, or trust_project=True from Python), or run without MCP servers and Python tools. Nothing "
                "was started.", provider=profile.name)
        return True

    def spawn_options(self) -> dict[str, Any]:
        """`ChildProcess` options: an agent that ignores its stdin closing is sent SIGTERM without a wait."""
        return {} if self.profile.exits_on_eof else {"stdin_close_timeout": 0.2}

    def connection(self, child: Any, options: AcpOptions, log: Any) -> AcpConnection:
        profile = self.profile
        return AcpConnection(child, options, log, agent=profile.name, modes=dict(profile.modes),
                             untrusted_modes=dict(profile.untrusted_modes),
                             session_meta=profile.session_meta, handles=profile.handles,
                             warnings=profile.warning_chunks, set_model_first=profile.set_model_first)

    def check_filters(self, spec: AgentRunSpec | SessionSpec) -> None:
        """Refuse `allowed_tools` (the runner already does, before anything is made: `info.tool_allow_lists` is
        off): no ACP agent takes an allow-list through Harness, only the deny-list claude-acp filters natively.

        Raises:
            UnsupportedFeatureError: naming the filter and why.
        """
        if spec.allowed_tools is not None:
            raise UnsupportedFeatureError(self.profile.name, "allowed_tools", [], "an ACP agent takes no allow-list "
                                          "of tools through Harness; name what to forbid in disallowed_tools instead")

    async def run(self, spec: AgentRunSpec, options: AcpOptions, ctx: RunContext) -> HarnessResult:
        self.check_filters(spec)
        argv = self.argv(options, ctx.cli, spec)
        ctx.log.debug("acp_spawn", argv=redact_argv(argv, tuple(spec.env.values())))
        with Scratch(TMPDIR_PREFIX) as tmpdir:
            env = traced_env(self.child_env(options, spec, tmpdir), ctx.trace_context())
            return await self._run(argv, env, spec, options, ctx)

    async def _run(self, argv: list[str], env: dict[str, str], spec: AgentRunSpec, options: AcpOptions,
                   ctx: RunContext) -> HarnessResult:
        """One prompt turn on a new agent process and session."""
        async with ctx.spawn(argv, env=env, cwd=spec.cwd, **self.spawn_options()) as child:
            conn = self.connection(child, options, ctx.log)
            conn.path = env.get("PATH")
            async with anyio.create_task_group() as tg:
                tg.start_soon(conn.read)
                try:
                    turn = PromptTurn(conn, spec, ctx)
                    with anyio.CancelScope() as startup:
                        watcher = _InterruptDuringStartup(ctx, startup)
                        tg.start_soon(watcher.watch)
                        await conn.open(spec, ctx.trace_context())
                        watcher.done = True
                    if startup.cancelled_caught:
                        return HarnessResult(status="interrupted", session_id=conn.session_id)
                    await ctx.emit(SessionStarted(session_id=str(conn.session_id),
                                                  resumed=spec.resume_session is not None, model=conn.model))
                    return await conn.play(turn)
                finally:
                    tg.cancel_scope.cancel()
        raise AssertionError("unreachable")  # pragma: no cover

    @asynccontextmanager
    async def open_session(self, spec: SessionSpec, options: AcpOptions,
                           ctx: SessionContext) -> AsyncIterator[ProviderSession]:
        """One agent process and one ACP session for every turn; shut down (stdin closed, TERM, KILL: the
        transport's bounded steps) when the session closes."""
        self.check_filters(spec)
        argv = self.argv(options, ctx.cli, spec)
        with Scratch(TMPDIR_PREFIX) as tmpdir:
            # the session's trace context for the process and session/new|load; each session/prompt its turn's
            env = traced_env(self.child_env(options, spec, tmpdir), ctx.trace_context())
            async with ctx.spawn(argv, env=env, cwd=spec.cwd, **self.spawn_options()) as child:
                conn = self.connection(child, options, ctx.log)
                conn.path = env.get("PATH")
                async with anyio.create_task_group() as tg:
                    tg.start_soon(conn.read)
                    try:
                        await conn.open(spec, ctx.trace_context())
                        yield AcpSession(conn, resumed=spec.resume_session is not None)
                    finally:
                        tg.cancel_scope.cancel()


def _no_args_offline(agent: str) -> Callable[[Mapping[str, Any]], str | None]:
    """An `OfflineSetup.check_options` that refuses any `-o args`: the agent's own flags can point it at another
    model API (a base URL, an auth type, a proxy), and an offline run does not judge them one by one."""
    def check(options: Mapping[str, Any]) -> str | None:
        if options.get("args"):
            return (f"option args is not taken: {agent}'s own flags can point it at another model API (a base URL, "
                    "an auth type, a proxy)")
        return None
    return check


class _InterruptDuringStartup:
    """Cancels the handshake when the operation interrupts before the prompt is sent."""

    def __init__(self, ctx: RunContext, scope: anyio.CancelScope) -> None:
        self.ctx, self.scope, self.done = ctx, scope, False

    async def watch(self) -> None:
        await self.ctx.interrupt_requested.wait()
        if not self.done:
            self.scope.cancel()


def named_provider(profile: AgentProfile) -> type[AcpProvider]:
    """The provider class of a named agent: its `info` from the profile, its options with `<cli>_bin`."""
    info = ProviderInfo(
        name=profile.name,
        aliases=profile.aliases,
        version=__version__,
        capabilities=profile.capabilities,
        description=profile.description,
        genai_provider=profile.genai_provider,
        cli_name=profile.cli,
        min_cli_version=profile.min_version,
        tested_cli_version=profile.tested_version,
        session_overrides=profile.session_overrides,
        project_config=profile.project_config,
        tool_filters=profile.tool_filters,
        tool_allow_lists=False,  # `session_meta` passes a deny-list only (`check_filters`)
        attachment_types=API_IMAGE_TYPES,  # images per `promptCapabilities` (files go by path: no `file_input`)
        approval_kinds=profile.approval_kinds,
        mcp_object_results=profile.mcp_object_results,
    )
    name = "".join(part.title() for part in profile.name.replace("_", "-").split("-")) + "Provider"
    namespace: dict[str, Any] = {"info": info, "profile": profile, "Options": options_for(profile.cli),
                                 "__doc__": f"{profile.title} over ACP (`{profile.cli} {' '.join(profile.args)}`).",
                                 "__module__": __name__}
    return type(name, (AcpProvider,), namespace)
