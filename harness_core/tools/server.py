"""`ToolServer`: the MCP server `harness` (the official `mcp` SDK's low-level `Server`) serving a run's Python tools
from the Harness process: on a private unix socket for the stdio bridge, or on loopback HTTP; each connection proves
the per-run secret. A call runs here: arguments checked, then approval asked (showing them) if the tool requires
it, under its deadline, cancelled by the run's interrupt; what it raises is a tool error. Knows `Tool` and approval
events, not providers.
"""

from __future__ import annotations

import hmac
import itertools
import secrets
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

import anyio
import mcp_types as types
from anyio.abc import ByteStream, SocketListener, TaskGroup
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp.server.lowlevel import Server
from mcp.shared.message import SessionMessage

from harness_core._logging import get_logger
from harness_core.events import ApprovalDecision, ApprovalRequested, HarnessToolDetails, ToolKind
from harness_core.files.scratch import Scratch
from harness_core.mcp import TOOL_BRIDGE_ARGS
from harness_core.tooldisplay import mcp_call_text
from harness_core.tools.compat import with_object_result
from harness_core.tools.http import require_asyncio, serve_loopback
from harness_core.tools.tool import Tool, ToolArgumentsError

__all__ = ["SECRET_ENV", "SERVER_NAME", "SOCKET_ENV", "ToolHost", "ToolServer"]

SERVER_NAME = "harness"
"""The MCP server name the tools are served under (reserved: no `--mcp-server` may take it)."""
SOCKET_ENV = "HARNESS_TOOLS_SOCKET"
SECRET_ENV = "HARNESS_TOOLS_SECRET"
_HELLO_DEADLINE = 10.0
"""Seconds a connection gets to prove the secret before it is closed."""
_MAX_LINE = 64 * 1024 * 1024
_STOP_DEADLINE = 5.0
"""Seconds the end of a turn waits for its cancelled calls to answer (an approval to be settled)."""
_log = get_logger("harness.tools")


class ToolHost(Protocol):
    """What a call needs of the run it serves (a `RunContext` is one): approvals and the interrupt."""

    @property
    def interrupt_requested(self) -> anyio.Event: ...

    async def request_tool_approval(self, request: ApprovalRequested) -> ApprovalDecision:
        """Ask the run's approvals to decide a call (the operation's approver, never an automatic approval)."""
        ...


class ToolServer:
    """The tools of one run (or session), served as the MCP server `harness` while `serving()` is entered.

    `host` is the run being played (set by the runner for each run or turn): its approvals decide the calls of
    tools with `requires_approval`, its interrupt cancels running calls. Between turns (no host) such a call is
    refused and other calls run as usual.

    `forbidden` names the tools the run's filters forbid (`mcp:harness`, `mcp:harness.TOOL`), each with why: they
    are neither listed nor called, whatever connects.
    """

    def __init__(self, tools: Sequence[Tool], *, secret: str | None = None, object_results: bool = False,
                 forbidden: Mapping[str, str] | None = None) -> None:
        self._tools = {t.name: t for t in tools}
        self._forbidden = dict(forbidden or {})
        self._object_results = object_results
        """The agent's MCP client needs a JSON result that is not an object as structured content too
        (`ProviderInfo.mcp_object_results`)."""
        self.secret = secret or secrets.token_urlsafe(32)
        self.host: ToolHost | None = None
        self._dir: Path | None = None
        self._port: int | None = None
        self._calls = itertools.count(1)
        self._running: dict[anyio.CancelScope, str] = {}
        """Each call in progress (its approval, then its function), and why it would be cancelled now."""
        self._drained: anyio.Event | None = None
        self._server: Server[Any] = Server(SERVER_NAME, version="1", on_list_tools=self._list,
                                           on_call_tool=self._call)

    @property
    def tools(self) -> tuple[Tool, ...]:
        """Every tool given, served or not."""
        return tuple(self._tools.values())

    @property
    def served(self) -> tuple[Tool, ...]:
        """The tools the agent may list and call: those the run's filters do not forbid."""
        return tuple(t for t in self._tools.values() if t.name not in self._forbidden)

    @property
    def socket_path(self) -> Path:
        """The unix socket the bridge connects to (known once `serving()` is entered)."""
        if self._dir is None:
            raise RuntimeError("the tool server is not serving; enter serving() first")
        return self._dir / "tools.sock"

    def bridge_command(self) -> tuple[str, list[str], dict[str, str]]:
        """How an agent starts the stdio bridge to this server: command, arguments, environment."""
        return sys.executable, list(TOOL_BRIDGE_ARGS), {SOCKET_ENV: str(self.socket_path),
                                                                 SECRET_ENV: self.secret}

    @property
    def url(self) -> str:
        """The loopback streamable-HTTP endpoint (known once `serving(http=True)` is entered)."""
        if self._port is None:
            raise RuntimeError("the tool server is not serving HTTP; enter serving(http=True) first")
        return f"http://127.0.0.1:{self._port}/mcp"

    @property
    def headers(self) -> dict[str, str]:
        """The headers an HTTP client sends: the per-run bearer secret."""
        return {"Authorization": f"Bearer {self.secret}"}

    @asynccontextmanager
    async def serving(self, *, http: bool = False) -> AsyncIterator[ToolServer]:
        """Serve until the block ends (on the unix socket; with `http`, also on loopback streamable HTTP, asyncio
        only); then every connection is closed and running calls cancelled (bounded).

        Raises:
            RuntimeError: `http` asked on a loop other than asyncio.
        """
        if http:
            require_asyncio()
        scratch = _private_dir()
        self._dir = scratch.path
        thrown: BaseException | None = None
        try:
            listener = await anyio.create_unix_listener(self.socket_path)
            async with listener, anyio.create_task_group() as tg:
                tg.start_soon(self._accept, listener, tg)
                try:
                    if http:
                        app = self._server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
                        async with serve_loopback(app, self.secret) as self._port:
                            yield self
                    else:
                        yield self
                except BaseException as exc:
                    thrown = exc
                    raise
                finally:
                    self._port = None
                    self.cancel_calls()
                    tg.cancel_scope.cancel()
        except BaseException as group:  # what the caller's block raised comes out as itself, not in a group
            inner = getattr(group, "exceptions", None)
            if thrown is not None and group is not thrown and inner is not None and list(inner) == [thrown]:
                raise thrown from None
            raise
        finally:
            scratch.release()

    def cancel_calls(self, reason: str = "the tool server is shutting down") -> None:
        """Cancel every call in progress, waiting for its approval or running (each answers the agent with a tool
        error saying it was cancelled and `reason`; a pending approval is settled `abort`)."""
        for scope in list(self._running):
            self._running[scope] = reason
            scope.cancel()

    async def stop_calls(self, reason: str) -> None:
        """`cancel_calls(reason)`, then wait until each call has answered (its approval settled; at most
        `_STOP_DEADLINE` s): the runner's end of a turn, so no approval is settled after its `done`."""
        self.cancel_calls(reason)
        if self._running:
            self._drained = anyio.Event()
            with anyio.move_on_after(_STOP_DEADLINE):
                await self._drained.wait()

    # --- connections --------------------------------------------------------------------------------------
    async def _accept(self, listener: SocketListener, tg: TaskGroup) -> None:
        async def handle(stream: ByteStream) -> None:
            async with stream:
                await self._connection(stream)
        await listener.serve(handle, task_group=tg)

    async def _connection(self, stream: ByteStream) -> None:
        reader = BufferedByteReceiveStream(stream)
        try:
            with anyio.fail_after(_HELLO_DEADLINE):
                hello = await reader.receive_until(b"\n", 1024)
        except (TimeoutError, anyio.EndOfStream, anyio.IncompleteRead, anyio.DelimiterNotFound,
                anyio.BrokenResourceError):
            return
        if not hmac.compare_digest(hello.strip(), self.secret.encode()):
            _log.warning("a connection to the tool server gave a wrong secret; closed")
            return
        to_server, from_wire = anyio.create_memory_object_stream[SessionMessage | Exception](16)
        to_wire, from_server = anyio.create_memory_object_stream[SessionMessage](16)

        async def read() -> None:
            async with to_server:
                while True:
                    try:
                        line = await reader.receive_until(b"\n", _MAX_LINE)
                    except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError,
                            anyio.DelimiterNotFound):
                        return
                    if not line.strip():
                        continue
                    try:
                        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                    except Exception as exc:  # noqa: BLE001 - the SDK answers a malformed message itself
                        await to_server.send(exc)
                        continue
                    await to_server.send(SessionMessage(message))

        async def write() -> None:
            async with from_server:
                async for item in from_server:
                    data = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                    try:
                        await stream.send(data.encode() + b"\n")
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                        return

        async with anyio.create_task_group() as tg:
            tg.start_soon(write)
            tg.start_soon(read)
            await self._server.run(from_wire, to_wire, self._server.create_initialization_options())
            tg.cancel_scope.cancel()

    # --- the MCP handlers ---------------------------------------------------------------------------------
    async def _list(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=t.name, description=t.description or None, input_schema=t.input_schema)
            for t in self.served])

    async def _call(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        why = self._forbidden.get(params.name)
        if why is not None:
            return _error(f"{params.name} is forbidden by this run's tool filters ({why}); it was not called")
        tool = self._tools.get(params.name)
        if tool is None:
            named = ", ".join(t.name for t in self.served) or "none"
            return _error(f"no tool named {params.name!r}; the tools are: {named}")
        try:
            arguments = tool.arguments(dict(params.arguments or {}))  # before any approval: what is shown is what runs
        except ToolArgumentsError as exc:
            return _error(str(exc))
        result = await self._cancellable(tool, arguments, self.host)
        return with_object_result(result) if self._object_results else result

    async def _cancellable(self, tool: Tool, arguments: dict[str, Any], host: ToolHost | None) -> types.CallToolResult:
        """The call with its checked `arguments`, approval and function alike under one cancel scope: the run's
        interrupt, the end of its turn or the server stopping cancels it in either phase, and the agent reads
        why."""
        interrupted = False
        ran = False
        outcome: types.CallToolResult | None = None

        async def on_interrupt(event: anyio.Event, scope: anyio.CancelScope) -> None:
            nonlocal interrupted
            await event.wait()
            interrupted = True
            scope.cancel()

        with anyio.CancelScope() as scope:
            self._running[scope] = "the tool server is shutting down"
            try:
                async with anyio.create_task_group() as tg:
                    if host is not None:
                        tg.start_soon(on_interrupt, host.interrupt_requested, scope)
                    refused = await self._approve(tool, arguments, host) if tool.requires_approval else None
                    if refused is not None:
                        outcome = _error(refused)
                    else:
                        ran = True
                        outcome = await _attempt(tool, arguments)
                    tg.cancel_scope.cancel()
            finally:
                reason = self._running.pop(scope)
                if not self._running and self._drained is not None:
                    self._drained.set()
        if outcome is not None:
            return outcome
        why = "the run was interrupted" if interrupted else reason
        left = "" if not ran or tool.is_async else " (it still runs in the background; its result will be dropped)"
        return _error(f"{tool.name} was cancelled: {why}{left}")

    async def _approve(self, tool: Tool, arguments: dict[str, Any], host: ToolHost | None) -> str | None:
        """None when the call may go ahead, else why not (the agent reads it). The request shows the checked
        `arguments` (converted, defaults filled): exactly what the function gets if approved."""
        if host is None:
            return f"{tool.name} needs approval and no run is being played to ask; call it during a turn"
        shown = Tool.as_json(arguments)
        request = ApprovalRequested(
            request_id=f"harness-tool-{next(self._calls)}",
            display=HarnessToolDetails(kind=ToolKind.MCP, title=tool.name,
                                       command=mcp_call_text(tool.name, shown, argument_chars=None),  # all of them
                                       raw={"server": SERVER_NAME, "tool": tool.name, "arguments": shown}),
            reason="the tool asks for approval before each call")
        decision = await host.request_tool_approval(request)
        if decision is ApprovalDecision.APPROVE:
            return None
        return f"the call to {tool.name} was not approved ({decision.value}); do not retry it unchanged"


async def _attempt(tool: Tool, arguments: dict[str, Any]) -> types.CallToolResult:
    """One call with its checked arguments, under its deadline: its result, or a tool error (raised, too slow)."""
    with anyio.move_on_after(tool.timeout):
        try:
            return _text(Tool.result_text(await tool.invoke(arguments)))
        except Exception as exc:  # noqa: BLE001 - a tool's failure is the agent's to read, not a crashed run
            _log.info("tool raised", tool=tool.name, error=f"{type(exc).__name__}: {exc}")
            return _error(f"{tool.name} raised {type(exc).__name__}: {exc}")
        except SystemExit as exc:  # a tool ends its call, never the Harness process serving it
            _log.info("tool called sys.exit", tool=tool.name, code=exc.code)
            return _error(f"{tool.name} called sys.exit({exc.code!r}): a tool cannot end the process that serves "
                          "it; it failed")
    return _error(f"{tool.name} did not finish within its timeout of {tool.timeout:g} s{_fate(tool)}")


def _fate(tool: Tool) -> str:
    """What became of a call cut short, as the agent reads it: an async function is cancelled; a sync one cannot
    be, and runs on in its thread."""
    if tool.is_async:
        return " and was cancelled"
    return "; it is still running in the background (a sync function cannot be stopped) and its result will be dropped"


def _private_dir() -> Scratch:
    """A new 0700 scratch directory for the socket, short enough for a unix socket path (at most 107 bytes); held
    while this process lives, so a killed Harness's is swept like its other scratch directories (`harness clean`,
    a batch's start)."""
    made = Scratch("harness-tools-")
    if len(str(made.path)) > 80:  # a long $TMPDIR
        made.release()
        made = Scratch("harness-tools-", "/tmp")
    return made


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)])


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)
