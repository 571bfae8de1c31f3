"""The MCP server `harness` through its stdio bridge and over loopback HTTP, driven by the official `mcp` client:
results, tool errors, deadlines, interrupts, approvals, the secret (the bridge itself: test_bridge.py)."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import date
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from harness_core import ApprovalDecision, ApprovalRequested, tool
from harness_core.files.scratch import sweep_scratch
from harness_core.tools.server import ToolServer

started = anyio.Event()


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def divide(a: float, b: float) -> float:
    return a / b


@tool(timeout=0.3)
async def too_slow() -> str:
    await anyio.sleep(30)
    return "never"


@tool(timeout=30)
async def waits() -> str:
    started.set()
    await anyio.sleep(30)
    return "never"


@tool(requires_approval=True)
def delete_everything(path: str) -> str:
    return f"deleted {path}"


class Host:
    """The run a call serves (as `RunContext` is): it answers approvals with `decision` and records them."""

    def __init__(self, decision: ApprovalDecision = ApprovalDecision.APPROVE) -> None:
        self.interrupt_requested = anyio.Event()
        self.decision = decision
        self.asked: list[ApprovalRequested] = []

    async def request_tool_approval(self, request: ApprovalRequested) -> ApprovalDecision:
        self.asked.append(request)
        return self.decision


@asynccontextmanager
async def bridged(server: ToolServer, module: str | None = None) -> AsyncIterator[ClientSession]:
    command, args, env = server.bridge_command()
    if module is not None:  # an MCP config written with another `-m` name
        args = ["-m", module]
    params = StdioServerParameters(command=command, args=args, env={**os.environ, **env})
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        with anyio.fail_after(20):
            await session.initialize()
        yield session


def text(result: object) -> str:
    return "".join(getattr(block, "text", "") for block in getattr(result, "content", []))


@pytest.mark.anyio
async def test_the_agent_lists_the_tools_and_gets_results_and_tool_errors() -> None:
    server = ToolServer([add, divide, too_slow])
    async with server.serving(), bridged(server) as session:
        with anyio.fail_after(30):
            listed = await session.list_tools()
            assert [(t.name, t.description) for t in listed.tools] == [
                ("add", "Add two integers."), ("divide", None), ("too_slow", None)]
            assert listed.tools[0].input_schema["required"] == ["a", "b"]
            result = await session.call_tool("add", {"a": 2, "b": 3})
            assert (text(result), result.is_error) == ("5", False)
            failed = await session.call_tool("divide", {"a": 1, "b": 0})
            assert (text(failed), failed.is_error) == ("divide raised ZeroDivisionError: float division by zero",
                                                       True)
            late = await session.call_tool("too_slow", {})
            assert late.is_error
            assert text(late) == "too_slow did not finish within its timeout of 0.3 s and was cancelled"
            wrong = await session.call_tool("add", {"a": 1})
            assert wrong.is_error and text(wrong) == "invalid arguments for add: b: Field required"
            unknown = await session.call_tool("nope", {})
            assert unknown.is_error and "no tool named 'nope'; the tools are: add, divide, too_slow" in text(unknown)
            assert text(await session.call_tool("add", {"a": 4, "b": 4})) == "8"  # the server is still serving


@pytest.mark.anyio
async def test_an_interrupt_cancels_a_running_call() -> None:
    global started
    started = anyio.Event()
    server = ToolServer([waits])
    server.host = host = Host()
    async with server.serving(), bridged(server) as session:
        outcome: list[object] = []

        async def call() -> None:
            outcome.append(await session.call_tool("waits", {}))

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await started.wait()
                host.interrupt_requested.set()
        assert outcome[0].is_error and text(outcome[0]) == "waits was cancelled: the run was interrupted"  # type: ignore[attr-defined]


@pytest.mark.anyio
@pytest.mark.parametrize("decision", [ApprovalDecision.APPROVE, ApprovalDecision.DENY])
async def test_a_tool_that_requires_approval_asks_the_run(decision: ApprovalDecision) -> None:
    server = ToolServer([delete_everything, add])
    server.host = host = Host(decision)
    async with server.serving(), bridged(server) as session:
        with anyio.fail_after(20):
            result = await session.call_tool("delete_everything", {"path": "/tmp/x"})
            await session.call_tool("add", {"a": 1, "b": 1})  # asks nobody
    assert len(host.asked) == 1
    asked = host.asked[0]
    assert (asked.display.kind.value, asked.display.title) == ("mcp", "delete_everything")
    assert asked.display.raw == {"server": "harness", "tool": "delete_everything", "arguments": {"path": "/tmp/x"}}
    assert asked.display.command == "delete_everything(path='/tmp/x')"  # the question shows the call, as tool lines do
    if decision is ApprovalDecision.APPROVE:
        assert (text(result), result.is_error) == ("deleted /tmp/x", False)
    else:
        assert result.is_error and text(result) == ("the call to delete_everything was not approved (deny); do not "
                                                    "retry it unchanged")


received: list[dict[str, object]] = []


@tool(requires_approval=True)
def scale(n: int, factor: int = 2, on: date | None = None) -> str:
    received.append({"n": n, "factor": factor, "on": on})
    return str(n * factor)


@pytest.mark.anyio
async def test_a_call_needing_approval_is_checked_first_and_shows_what_the_function_gets() -> None:
    """Converted and defaults filled before anyone is asked: the approval shows exactly what runs; a bad call is a
    tool error with no prompt."""
    received.clear()
    server = ToolServer([scale])
    server.host = host = Host()
    async with server.serving(), bridged(server) as session:
        with anyio.fail_after(20):
            wrong = await session.call_tool("scale", {"n": "five"})
            assert [wrong.is_error, len(host.asked)] == [True, 0]  # nobody asked to approve a call that cannot run
            assert text(wrong).startswith("invalid arguments for scale: n: Input should be a valid integer")
            result = await session.call_tool("scale", {"n": "5", "on": "2024-05-01"})
    assert (text(result), result.is_error) == ("10", False)
    assert [a.display.raw for a in host.asked] == [
        {"server": "harness", "tool": "scale", "arguments": {"n": 5, "factor": 2, "on": "2024-05-01"}}]
    assert [a.display.command for a in host.asked] == ["scale(n=5, factor=2, on='2024-05-01')"]
    assert received == [{"n": 5, "factor": 2, "on": date(2024, 5, 1)}]


class Undecided(Host):
    """A run whose approvals never answer (a human away from the terminal): it records when its wait is cancelled."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting = anyio.Event()
        self.withdrawn = anyio.Event()

    async def request_tool_approval(self, request: ApprovalRequested) -> ApprovalDecision:
        self.asked.append(request)
        self.waiting.set()
        try:
            await anyio.sleep_forever()
        finally:
            self.withdrawn.set()
        raise AssertionError("unreachable")


@pytest.mark.anyio
@pytest.mark.parametrize("ended_by", ["interrupt", "turn end"])
async def test_a_call_waiting_for_approval_is_cancelled_by_the_interrupt_or_the_turns_end(ended_by: str) -> None:
    server = ToolServer([delete_everything])
    server.host = host = Undecided()
    async with server.serving(), bridged(server) as session:
        outcome: list[object] = []

        async def call() -> None:
            outcome.append(await session.call_tool("delete_everything", {"path": "/"}))

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await host.waiting.wait()
                if ended_by == "interrupt":
                    host.interrupt_requested.set()
                else:  # what the runner does when the provider returns
                    server.host = None
                    await server.stop_calls("the agent's turn ended before it finished")
                    assert host.withdrawn.is_set()  # settled before stop_calls returns (so before the run's `done`)
    assert host.withdrawn.is_set()
    why = "the run was interrupted" if ended_by == "interrupt" else "the agent's turn ended before it finished"
    assert outcome[0].is_error and text(outcome[0]) == f"delete_everything was cancelled: {why}"  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_between_runs_a_tool_needing_approval_is_refused() -> None:
    server = ToolServer([delete_everything])
    async with server.serving(), bridged(server) as session:
        with anyio.fail_after(20):
            result = await session.call_tool("delete_everything", {"path": "x"})
    assert result.is_error and "no run is being played to ask" in text(result)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # uvicorn serves on asyncio only
@pytest.mark.anyio
async def test_over_loopback_http_only_the_secret_gets_in() -> None:
    server = ToolServer([add])
    async with server.serving(http=True):
        assert server.url.startswith("http://127.0.0.1:")
        async with httpx2.AsyncClient() as anonymous:
            refused = await anonymous.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                           headers={"Authorization": "Bearer guessed"})
        assert refused.status_code == 401
        async with httpx2.AsyncClient(headers=server.headers) as client, \
                streamable_http_client(server.url, http_client=client) as (read, write, *_), \
                ClientSession(read, write) as session:
            with anyio.fail_after(20):
                await session.initialize()
                assert text(await session.call_tool("add", {"a": 2, "b": 3})) == "5"


@pytest.mark.parametrize("anyio_backend", ["trio"])
@pytest.mark.anyio
async def test_http_on_another_loop_says_the_bridge_is_the_way() -> None:
    with pytest.raises(RuntimeError, match="needs the asyncio backend"):
        async with ToolServer([add]).serving(http=True):
            pass


@pytest.mark.anyio
async def test_a_connection_without_the_secret_is_closed() -> None:
    server = ToolServer([add])
    async with server.serving():
        with anyio.fail_after(10):
            stream = await anyio.connect_unix(server.socket_path)
            async with stream:
                await stream.send(b"wrong\n")
                await stream.send(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}\n')
                with pytest.raises((anyio.EndOfStream, anyio.BrokenResourceError)):
                    await stream.receive()
    assert not server.socket_path.parent.exists()  # the private directory is gone with the server


_SERVE = """
import anyio
from harness_core import tool
from harness_core.tools.server import ToolServer

@tool
def add(a: int, b: int) -> int:
    return a + b

async def main() -> None:
    async with ToolServer([add]).serving() as server:
        print(server.socket_path, flush=True)
        await anyio.sleep_forever()

anyio.run(main)
"""


def test_the_socket_directory_of_a_killed_harness_is_swept_like_its_other_scratch() -> None:
    root = Path(tempfile.mkdtemp(prefix="ht-", dir="/tmp"))  # short: the socket path must stay under 108 bytes
    try:
        child = subprocess.Popen([sys.executable, "-c", _SERVE], env={**os.environ, "TMPDIR": str(root)},
                                 stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout is not None
            assert select.select([child.stdout], [], [], 60)[0], "the tool server never started"
            made = Path(child.stdout.readline().strip()).parent
        finally:
            child.kill()  # SIGKILL: no `finally` of its own runs
            child.wait(timeout=10)
        assert made.parent == root and made.is_dir()
        assert [leftover.path for leftover in sweep_scratch(root)] == [made]
        assert not made.exists()
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.anyio
async def test_a_config_naming_the_bridge_by_its_old_module_still_relays() -> None:
    """`python -m harness_core.toolbridge` (the bridge's name before it moved into `tools/`) still relays, with a
    deprecation warning on its stderr, for one release."""
    server = ToolServer([add])
    async with server.serving(), bridged(server, "harness_core.toolbridge") as session:
        with anyio.fail_after(30):
            result = await session.call_tool("add", {"a": 2, "b": 3})
    assert (text(result), result.is_error) == ("5", False)


@pytest.mark.anyio
async def test_a_tool_the_runs_filters_forbid_is_neither_listed_nor_callable() -> None:
    """`disallowed_tools mcp:harness.divide`: the server lists only what the filters leave, and a client that calls
    the forbidden tool anyway (a direct connection to the socket, say) gets a tool error, not a call."""
    server = ToolServer([add, divide], forbidden={"divide": "disallowed_tools 'mcp:harness.divide'"})
    async with server.serving(), bridged(server) as session:
        with anyio.fail_after(20):
            listed = await session.list_tools()
            refused = await session.call_tool("divide", {"a": 1, "b": 1})
            unknown = await session.call_tool("nope", {})
            kept = await session.call_tool("add", {"a": 1, "b": 2})
    assert [t.name for t in listed.tools] == ["add"]
    assert [t.name for t in server.served] == ["add"]
    assert refused.is_error and text(refused) == (
        "divide is forbidden by this run's tool filters (disallowed_tools 'mcp:harness.divide'); it was not called")
    assert unknown.is_error and text(unknown).endswith("the tools are: add")
    assert (text(kept), kept.is_error) == ("3", False)
