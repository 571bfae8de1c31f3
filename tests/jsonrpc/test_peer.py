"""JsonRpcPeer over an in-memory line channel, under asyncio and trio."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from harness_core.errors import HarnessError, MessageTooLargeError, ProcessExitedError, ProtocolError
from harness_core.jsonrpc import JsonRpcError, JsonRpcPeer

pytestmark = pytest.mark.anyio

Item = bytes | MessageTooLargeError


class Wire:
    """The other side of the connection, plus what the peer's callbacks saw."""

    def __init__(self) -> None:
        self.inbound_send, self.inbound = anyio.create_memory_object_stream[Item](1000)
        self.outbound, self.outbound_recv = anyio.create_memory_object_stream[bytes](1000)
        self.notes_send, self.notes = anyio.create_memory_object_stream[tuple[str, Any, dict[str, Any]]](1000)
        self.errors_send, self.errors = anyio.create_memory_object_stream[HarnessError](1000)

    # LineChannel, as seen by the peer
    async def send_line(self, data: bytes) -> None:
        await self.outbound.send(data)

    def lines(self) -> AsyncIterator[Item]:
        return self.inbound

    # the test's side
    async def feed(self, msg: Any) -> None:
        await self.inbound_send.send(
            msg if isinstance(msg, (bytes, MessageTooLargeError)) else json.dumps(msg).encode()
        )

    async def sent(self) -> dict[str, Any]:
        return json.loads(await self.outbound_recv.receive())  # type: ignore[no-any-return]

    async def eof(self) -> None:
        await self.inbound_send.aclose()


@asynccontextmanager
async def connected(**kw: Any) -> AsyncIterator[tuple[JsonRpcPeer, Wire]]:
    wire = Wire()

    async def on_notification(method: str, params: Any, msg: dict[str, Any]) -> None:
        await wire.notes_send.send((method, params, msg))

    async def on_error(err: HarnessError) -> None:
        await wire.errors_send.send(err)

    kw.setdefault("on_notification", on_notification)
    peer = JsonRpcPeer(wire, on_error=on_error, **kw)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer.run)
            yield peer, wire
            await wire.eof()


async def test_request_roundtrip_and_wire_format() -> None:
    async with connected() as (peer, wire), anyio.create_task_group() as tg:
        results: list[Any] = []

        async def call() -> None:
            results.append(await peer.request("initialize", {"clientInfo": {"name": "t"}}))
            results.append(await peer.request("ping"))

        tg.start_soon(call)
        assert await wire.sent() == {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"clientInfo": {"name": "t"}},
        }
        await wire.feed({"id": 1, "result": {"userAgent": "x"}})  # no "jsonrpc" key, as some agents send
        assert await wire.sent() == {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        await wire.feed({"jsonrpc": "2.0", "id": 2, "result": None})
    assert results == [{"userAgent": "x"}, None]


async def test_request_fields_go_at_the_top_level() -> None:
    """`fields`: a protocol's own members beside `params` (a trace-context carrier, say); never the envelope's."""
    async with connected() as (peer, wire), anyio.create_task_group() as tg:
        results: list[Any] = []
        carrier = {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}

        async def call() -> None:
            results.append(await peer.request("turn", {"x": 1}, fields={"trace": carrier}))

        tg.start_soon(call)
        assert await wire.sent() == {"jsonrpc": "2.0", "id": 1, "method": "turn", "params": {"x": 1},
                                     "trace": carrier}
        await wire.feed({"id": 1, "result": "ok"})
        with pytest.raises(ValueError, match="may not set"):
            await peer.request("turn", fields={"id": 7})
        for member in ("result", "error"):  # a response's members: a request carrying one is ambiguous on the wire
            with pytest.raises(ValueError, match=f"may not set \\['{member}'\\]"):
                await peer.request("turn", fields={"trace": carrier, member: None})
    assert results == ["ok"]


async def test_out_of_order_responses_and_error_response() -> None:
    async with connected() as (peer, wire), anyio.create_task_group() as tg:
        got: dict[str, Any] = {}

        async def call(method: str) -> None:
            try:
                got[method] = await peer.request(method)
            except JsonRpcError as exc:
                got[method] = exc

        tg.start_soon(call, "a")
        first = await wire.sent()
        tg.start_soon(call, "b")
        second = await wire.sent()
        await wire.feed({"id": second["id"], "result": "B"})
        await wire.feed(
            {"id": first["id"], "error": {"code": -32600, "message": "thread not found", "data": [1]}}
        )
    assert got["b"] == "B"
    err = got["a"]
    assert isinstance(err, JsonRpcError)
    assert (err.code, err.message, err.data) == (-32600, "thread not found", [1])


async def test_ids_match_exactly_string_is_not_int() -> None:
    async with connected() as (peer, wire), anyio.create_task_group() as tg:
        got: list[Any] = []

        async def call() -> None:
            got.append(await peer.request("x"))

        tg.start_soon(call)
        await wire.sent()
        await wire.feed({"id": "1", "result": "wrong"})
        err = await wire.errors.receive()
        assert isinstance(err, ProtocolError) and "unknown id" in str(err)
        await wire.feed({"id": 1, "result": "right"})
    assert got == ["right"]


async def test_server_requests_echo_id_zero_and_string_ids() -> None:
    async def on_request(method: str, params: Any, msg: dict[str, Any]) -> Any:
        return {"decision": "accept", "echo": params}

    async with connected(on_request=on_request) as (_peer, wire):
        await wire.feed({"id": 0, "method": "item/commandExecution/requestApproval", "params": {"n": 0}})
        assert await wire.sent() == {
            "jsonrpc": "2.0",
            "id": 0,
            "result": {"decision": "accept", "echo": {"n": 0}},
        }
        await wire.feed({"jsonrpc": "2.0", "id": "abc", "method": "x"})
        assert await wire.sent() == {
            "jsonrpc": "2.0",
            "id": "abc",
            "result": {"decision": "accept", "echo": None},
        }


async def test_unknown_server_request_gets_error_reply() -> None:
    async with connected() as (_peer, wire):
        await wire.feed({"id": 5, "method": "mystery/method"})
        reply = await wire.sent()
    assert (
        reply["id"] == 5
        and reply["error"]["code"] == -32601
        and "mystery/method" in reply["error"]["message"]
    )


async def test_request_handler_errors_become_replies() -> None:
    async def on_request(method: str, params: Any, msg: dict[str, Any]) -> Any:
        if method == "unknown":
            raise JsonRpcError(-32601, "no such method", {"method": method})
        raise RuntimeError("handler bug")

    async with connected(on_request=on_request) as (_peer, wire):
        await wire.feed({"id": 1, "method": "unknown"})
        assert (await wire.sent())["error"] == {
            "code": -32601,
            "message": "no such method",
            "data": {"method": "unknown"},
        }
        await wire.feed({"id": 2, "method": "crash"})
        reply = await wire.sent()
        assert (
            reply["id"] == 2
            and reply["error"]["code"] == -32603
            and "handler bug" in reply["error"]["message"]
        )
        err = await wire.errors.receive()
        assert isinstance(err, ProtocolError) and "RuntimeError: handler bug" in str(err)


async def test_slow_request_handler_does_not_block_notifications() -> None:
    release = anyio.Event()

    async def on_request(method: str, params: Any, msg: dict[str, Any]) -> Any:
        await release.wait()  # e.g. an approval waiting on a human
        return "approved"

    async with connected(on_request=on_request) as (_peer, wire):
        await wire.feed({"id": 0, "method": "approve"})
        for i in range(3):
            await wire.feed({"method": "delta", "params": {"i": i}})
        assert [(await wire.notes.receive())[1]["i"] for _ in range(3)] == [0, 1, 2]
        release.set()
        assert await wire.sent() == {"jsonrpc": "2.0", "id": 0, "result": "approved"}


async def test_notification_handler_crash_does_not_kill_loop() -> None:
    async def on_notification(method: str, params: Any, msg: dict[str, Any]) -> None:
        if method == "bad":
            raise KeyError("missing")
        await wire.notes_send.send((method, params, msg))

    async with connected(on_notification=on_notification) as (_peer, wire):
        await wire.feed({"method": "bad", "params": {}})
        await wire.feed({"method": "good", "params": [1], "emittedAtMs": 5})
        err = await wire.errors.receive()
        assert isinstance(err, ProtocolError) and "notification 'bad'" in str(err) and '"bad"' in str(err)
        assert await wire.notes.receive() == (
            "good",
            [1],
            {"method": "good", "params": [1], "emittedAtMs": 5},
        )


async def test_malformed_and_oversized_lines_are_reported_and_skipped() -> None:
    too_large = MessageTooLargeError("skipped a line of 99 bytes", size=99)
    async with connected() as (_peer, wire):
        await wire.feed(b"{not json " + b"x" * 1000)
        await wire.feed(b"[1, 2]")
        await wire.feed(too_large)
        await wire.feed({"method": "still/alive"})
        malformed = await wire.errors.receive()
        assert isinstance(malformed, ProtocolError) and malformed.code == "protocol_error"
        assert "{not json xxx" in str(malformed) and "more characters" in str(malformed)
        assert "not an object" in str(await wire.errors.receive())
        assert await wire.errors.receive() is too_large
        assert (await wire.notes.receive())[0] == "still/alive"


async def test_eof_fails_every_pending_request_at_once() -> None:
    def closed() -> HarnessError:
        return ProcessExitedError("the agent exited", exit_code=1, stderr_tail="boom")

    outcomes: list[BaseException] = []
    wire = Wire()

    async def ignore(method: str, params: Any, msg: dict[str, Any]) -> None:
        pass

    peer = JsonRpcPeer(wire, on_notification=ignore, closed_error=closed)
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer.run)

            async def call(i: int) -> None:
                try:
                    await peer.request(f"m{i}", timeout=None)
                except HarnessError as exc:
                    outcomes.append(exc)

            for i in range(3):
                tg.start_soon(call, i)
            for _ in range(3):
                await wire.sent()
            await wire.eof()
    assert len(outcomes) == 3 and all(
        isinstance(e, ProcessExitedError) and e.exit_code == 1 for e in outcomes
    )
    assert peer.closed
    with pytest.raises(ProcessExitedError):
        await peer.request("after")
    with pytest.raises(ProcessExitedError):
        await peer.notify("after")


async def test_timeout_names_method_and_late_response_is_ignored() -> None:
    async with connected() as (peer, wire):
        with pytest.raises(TimeoutError, match=r"'thread/start' \(id 1\) within 0.05s"):
            await peer.request("thread/start", timeout=0.05)
        await wire.sent()
        await wire.feed({"id": 1, "result": "late"})
        async with anyio.create_task_group() as tg:
            got: list[Any] = []

            async def call() -> None:
                got.append(await peer.request("next"))

            tg.start_soon(call)
            assert (await wire.sent())["id"] == 2
            await wire.feed({"id": 2, "result": "ok"})
        assert got == ["ok"]
        assert wire.errors.statistics().current_buffer_used == 0  # the late response was not an error


async def test_eof_cancels_inflight_server_requests() -> None:
    started = anyio.Event()

    async def on_request(method: str, params: Any, msg: dict[str, Any]) -> Any:
        started.set()
        await anyio.sleep_forever()

    async with connected(on_request=on_request) as (_peer, wire):
        await wire.feed({"id": 0, "method": "approve"})
        await started.wait()
    # run() returned at EOF (the context exited within its deadline) without replying
    assert wire.outbound_recv.statistics().current_buffer_used == 0


async def test_notifications_delivered_in_order() -> None:
    async with connected() as (peer, wire):
        for i in range(200):
            await wire.feed({"method": "n", "params": i})
        assert [(await wire.notes.receive())[1] for _ in range(200)] == list(range(200))
        await peer.notify("initialized")
        assert await wire.sent() == {"jsonrpc": "2.0", "method": "initialized"}


async def test_cancelled_request_late_response_is_not_an_error() -> None:
    async with connected() as (peer, wire):
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(peer.request, "turn/start")
                await wire.sent()
                scope.cancel()
        await wire.feed({"id": 1, "result": "late"})
        await wire.feed({"method": "marker"})
        assert (await wire.notes.receive())[0] == "marker"
        assert wire.errors.statistics().current_buffer_used == 0


@pytest.mark.parametrize(
    "line",
    [b' {"method":"n","params":1} ', b'{"method":"n","params":1}\r', b'{"method": "n", "params": 1}'],
)
async def test_json_with_surrounding_whitespace_is_accepted(line: bytes) -> None:
    async with connected() as (_peer, wire):
        await wire.feed(line)
        assert (await wire.notes.receive())[:2] == ("n", 1)


@pytest.mark.parametrize("line", [b'{"method":"n"} trailing', b"\xff\xfe", b"", b'{"method":'])
async def test_invalid_lines_are_protocol_errors(line: bytes) -> None:
    async with connected() as (_peer, wire):
        await wire.feed(line)
        err = await wire.errors.receive()
        assert isinstance(err, ProtocolError) and "not JSON" in str(err)
