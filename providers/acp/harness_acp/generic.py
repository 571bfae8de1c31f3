"""The generic `acp` provider: any agent that speaks ACP on stdio, by its command (`-o command="my-agent --acp"`).

Layer: provider lifecycle. Knows how to learn what an unknown agent can do: a probe sends `initialize` and reads
`agentCapabilities`, cached by the command line and the executable's identity, so the runner refuses an unsupported
spec before spawn. Everything else is `provider.AcpProvider`'s. The probe and its cache: providers/acp/README.md.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, ClassVar

import anyio
from harness_core import (
    AgentRunSpec,
    CliNotFoundError,
    HarnessError,
    InvalidSpecError,
    ProtocolError,
    SessionSpec,
    SpawnFailedError,
)
from harness_core.provider import (
    API_IMAGE_TYPES,
    Capability,
    ChildProcess,
    CliInfo,
    Provider,
    ProviderInfo,
    cached_probe,
    get_logger,
    remember_probe,
)

from harness_acp._version import __version__
from harness_acp.connection import AcpConnection
from harness_acp.mcp_servers import learned_input_capabilities
from harness_acp.options import AcpOptions, GenericAcpOptions
from harness_acp.profiles import BASE_CAPABILITIES, AgentProfile
from harness_acp.provider import AcpProvider

__all__ = ["GenericAcpProvider", "learned_capabilities"]

log = get_logger(__name__)
_INSTALL = 'install the agent, then pass its ACP command: -o command="my-agent --acp"'


def learned_capabilities(agent_capabilities: Any) -> frozenset[Capability]:
    """What an agent can do through Harness, from its `initialize` answer's `agentCapabilities` (sessions; MCP
    transports and images: `mcp_servers.learned_input_capabilities`)."""
    caps = set(BASE_CAPABILITIES)
    if isinstance(agent_capabilities, dict):
        caps |= learned_input_capabilities(agent_capabilities)
        sessions = agent_capabilities.get("sessionCapabilities")
        if agent_capabilities.get("loadSession") is True or (
                isinstance(sessions, dict) and isinstance(sessions.get("resume"), dict)):
            caps.add(Capability.SESSION)
    return frozenset(caps)


LAUNCHERS = frozenset({"npx", "bunx", "pnpx", "uvx", "pipx", "node", "bun", "deno", "python", "python3", "uv", "npm",
                       "pnpm", "yarn", "sh", "bash", "env", "java"})
"""Commands that run another program (the ACP registry launches most agents with `npx -y @pkg/agent`): what the
agent is, and whether it changed, is that program, not the launcher."""


def _identity(found: Path, argv: list[str]) -> Path | None:
    """The file whose identity says whether the agent changed: the executable, or for a launcher the first argument
    that is a file (`node ./agent.js`); None when there is none (`npx -y pkg`: no cache, probed every time)."""
    if found.name not in LAUNCHERS and not found.name.startswith("python3."):
        return found
    for arg in argv[1:]:
        if not arg.startswith("-") and os.path.isfile(arg):
            return Path(os.path.abspath(arg))
    return None


def _executable(name: str) -> Path | None:
    """`name` on PATH, or as a path to an executable file; absolute."""
    found = shutil.which(name) if os.sep not in name else (name if os.access(name, os.X_OK) else None)
    return Path(os.path.abspath(found)) if found is not None else None


class GenericAcpProvider(AcpProvider):
    """Any ACP agent, launched by `-o command=...`; its capabilities are learned from its `initialize`."""

    Options: ClassVar[type[AcpOptions]] = GenericAcpOptions
    profile: ClassVar[AgentProfile] = AgentProfile(
        name="acp", title="ACP agent", cli="", args=(), package="", tested_version="", min_version="",
        capabilities=BASE_CAPABILITIES | {Capability.SESSION}, description="")
    info: ClassVar[ProviderInfo] = ProviderInfo(
        name="acp",
        version=__version__,
        # what an agent may offer; the probe learns what this one does (its `initialize` answer)
        capabilities=BASE_CAPABILITIES | {Capability.SESSION, Capability.MCP_HTTP, Capability.MCP_SSE,
                                          Capability.IMAGE_INPUT},
        description="Any agent that speaks the Agent Client Protocol on stdio: -o command=\"my-agent --acp\"; "
        "what it can do is learned from its initialize answer.",
        session_overrides=frozenset({"approval", "sandbox", "model", "effort"}),
        attachment_types=API_IMAGE_TYPES,
    )

    offline_setup = Provider.offline_setup  # none: an unknown agent's model API is unknown

    @staticmethod
    def _argv(options: AcpOptions) -> list[str]:
        assert isinstance(options, GenericAcpOptions)
        if not options.argv:
            raise InvalidSpecError('the acp provider runs the ACP agent you name: pass its command, e.g. -o '
                                   'command="my-agent --acp" (or use a named one: harness providers)', provider="acp")
        return [*options.argv, *options.args]

    def argv(self, options: AcpOptions, cli: CliInfo, spec: AgentRunSpec | SessionSpec | None = None) -> list[str]:
        argv = self._argv(options)
        return [cli.path or argv[0], *argv[1:]]

    async def probe(self, options: AcpOptions) -> CliInfo:
        """Find the command's executable and learn the agent's capabilities (cached; see the module docstring).

        Raises:
            CliNotFoundError: the command's executable does not exist.
            SpawnFailedError / ProtocolError: the agent did not start, or did not answer `initialize` in time.
        """
        argv = self._argv(options)
        found = _executable(argv[0])
        if found is None:
            raise CliNotFoundError(f"the ACP agent command {argv[0]!r} was not found (on PATH, or as a path to an "
                                   f"executable); {_INSTALL}", cli=argv[0])
        path = found
        what = "acp-initialize/2:" + "\0".join(argv[1:])  # /2: learns MCP transports and images too
        identity = _identity(found, argv)
        known = cached_probe(identity, what) if identity is not None else None
        if known is None:
            known = await self._initialize(argv, path, options)
            if identity is not None:
                remember_probe(identity, what, known)
        caps = frozenset(Capability(c) for c in known.get("capabilities") or () if c in Capability._value2member_map_)
        version = known.get("version")
        return CliInfo(path=str(path), version=version if isinstance(version, str) and version else None,
                       capabilities=caps)

    async def _initialize(self, argv: list[str], path: Path, options: AcpOptions) -> dict[str, Any]:
        child = ChildProcess([str(path), *argv[1:]], env=dict(os.environ))
        label = Path(argv[0]).name
        try:
            async with child:
                conn = AcpConnection(child, options, log, agent=label)
                failed: HarnessError | None = None
                async with anyio.create_task_group() as tg:
                    tg.start_soon(conn.read)
                    try:
                        answer = await conn.initialize()
                    except HarnessError as exc:  # raised outside the task group: not wrapped in a group
                        failed = exc
                    finally:
                        tg.cancel_scope.cancel()
                if failed is not None:
                    raise failed
        except ProtocolError as exc:
            raise ProtocolError(f"{exc.message} (probing the ACP agent {' '.join(argv)!r})", **exc.details) from None
        except HarnessError:
            raise
        except OSError as exc:
            raise SpawnFailedError(f"could not start the ACP agent {' '.join(argv)!r}: {exc}") from None
        raw_info = answer.get("agentInfo")
        info: dict[str, Any] = raw_info if isinstance(raw_info, dict) else {}
        return {"capabilities": sorted(c.value for c in learned_capabilities(answer.get("agentCapabilities"))),
                "version": str(info.get("version") or ""), "name": str(info.get("name") or "")}
