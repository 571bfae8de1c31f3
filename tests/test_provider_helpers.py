"""The shared helpers the provider façade (`harness_core.provider`) exports, tested directly: the JSON-lines pump
and decoder, HTTP status classification, argv redaction, `Usage` arithmetic, `RunContext.spawn` (wire log,
environment) and `ChildProcess.remember_descendants`. Generic: no agent is named.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import sys
from collections.abc import AsyncIterator, Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest

import harness_core.provider as facade
from harness_core import (
    AgentRunSpec,
    AuthFailedError,
    ErrorEvent,
    HarnessEvent,
    HarnessResult,
    MessageTooLargeError,
    ModelError,
    ProviderInfo,
    ProviderRaw,
    RateLimitedError,
    RunStatus,
    Usage,
    hookimpl,
    open_run,
)
from harness_core.errors import SCRIPTED_REFUSAL
from harness_core.plugins import PluginHost
from harness_core.provider import (
    NON_JSON_METHOD,
    REDACTED,
    ChildProcess,
    MessageBatches,
    NoOptions,
    Provider,
    RunContext,
    error_for_status,
    json_batches,
    json_messages,
    loads_line,
    redact_argv,
)

DEADLINE = 20.0
HAS_PROC = Path("/proc/self/stat").exists()


# -- json_messages -------------------------------------------------------------------------------------------


async def _pump(lines: Iterable[bytes | MessageTooLargeError]) -> list[tuple[str, Any]]:
    """Run `json_messages` over `lines`; what it yielded and emitted, interleaved in the order it happened."""
    seen: list[tuple[str, Any]] = []

    async def source() -> AsyncIterator[bytes | MessageTooLargeError]:
        for line in lines:
            yield line

    async def emit(event: HarnessEvent) -> None:
        seen.append(("event", event))

    with anyio.fail_after(DEADLINE):
        async for msg in json_messages(source(), emit):
            seen.append(("msg", msg))
    return seen


@pytest.mark.anyio
async def test_json_messages_yields_objects_in_order_and_reports_every_bad_line() -> None:
    long_text = "y" * 5000
    seen = await _pump([
        b'{"n": 1}', b"", b"   ", b"[1]", b'{"n": 2}', b'"x"', b"not json", b"\xff\xfe{",
        MessageTooLargeError("a line over the framing cap", limit=10), long_text.encode(),
        b'{"n": 3, "nested": {"a": [1, null]}}',
    ])
    raw, err = "ProviderRaw", "ErrorEvent"
    kinds = [value if kind == "msg" else type(value).__name__ for kind, value in seen]
    assert kinds == [{"n": 1}, raw, {"n": 2}, raw, raw, raw, err, raw, {"n": 3, "nested": {"a": [1, None]}}]
    raws = [value for _, value in seen if isinstance(value, ProviderRaw)]
    assert {raw.method for raw in raws} == {NON_JSON_METHOD} == {"non_json_stdout"}
    assert [raw.payload for raw in raws] == ["[1]", '"x"', "not json", "\ufffd\ufffd{", long_text[:2000]]
    (error,) = [value for _, value in seen if isinstance(value, ErrorEvent)]
    assert error.error.code == "message_too_large"
    assert error.error.message == "a line over the framing cap"
    assert error.error.details == {"limit": 10}


@pytest.mark.anyio
async def test_json_messages_of_only_blank_lines_is_empty() -> None:
    assert await _pump([b"", b" ", b"\t"]) == []


# -- json_batches / MessageBatches ---------------------------------------------------------------------------


class _Chunks:
    """A `LineReader` as the batched reader sees it: `__anext__` gives a chunk's first line, `take_ready` the rest."""

    def __init__(self, *chunks: list[bytes | MessageTooLargeError]) -> None:
        self.chunks = list(chunks)
        self.rest: list[bytes | MessageTooLargeError] = []

    def __aiter__(self) -> _Chunks:
        return self

    async def __anext__(self) -> bytes | MessageTooLargeError:
        if not self.chunks:
            raise StopAsyncIteration
        first, *self.rest = self.chunks.pop(0)
        return first

    def take_ready(self) -> list[bytes | MessageTooLargeError]:
        rest, self.rest = self.rest, []
        return rest


@pytest.mark.anyio
async def test_json_batches_see_what_json_messages_sees_in_the_same_order() -> None:
    """The batched reader and the per-message pump agree line for line: objects, events and their order."""
    lines: list[bytes | MessageTooLargeError] = [
        b'{"n": 1}', b"", b"   ", b"[1]", b'{"n":2}', b'  {"n": 3}  ', b'{"n":4}\r', b'"x"', b"not json",
        b"\xff\xfe{", MessageTooLargeError("a line over the framing cap", limit=10), b'{"n":5}', b'{"n":6}',
    ]
    pumped = await _pump(lines)
    expected = [v if kind == "msg" else (type(v).__name__, getattr(v, "payload", None)) for kind, v in pumped]
    for chunks in ([lines], [lines[:5], lines[5:9], lines[9:]], [[line] for line in lines]):
        seen: list[Any] = []

        async def emit(event: HarnessEvent, seen: list[Any] = seen) -> None:
            seen.append((type(event).__name__, getattr(event, "payload", None)))

        with anyio.fail_after(DEADLINE):
            async for batch in json_batches(_Chunks(*chunks), emit):
                assert batch  # never an empty list
                seen.extend(batch)
        assert seen == expected


@pytest.mark.anyio
async def test_a_chunk_is_one_batch_and_an_odd_line_splits_it_in_place() -> None:
    odd: list[Any] = []

    async def other(line: bytes | MessageTooLargeError) -> None:
        odd.append(line)

    batches: list[list[dict[str, Any]]] = []
    reader = MessageBatches(_Chunks([b'{"a":1}', b'{"b":2}', b"oops", b' {"c":3}', b'{"d":4}'], [b'{"e":5}']), other)
    with anyio.fail_after(DEADLINE):
        async for batch in reader:
            batches.append(batch)
            assert [reader.line_of(msg) for msg in batch] == [_RAW[next(iter(msg))] for msg in batch]
            odd_so_far = list(odd)
            assert odd_so_far == ([] if "a" in batch[0] else [b"oops"])  # the odd line after its batch
    assert batches == [[{"a": 1}, {"b": 2}], [{"c": 3}, {"d": 4}], [{"e": 5}]]
    with pytest.raises(ValueError, match="latest list"):
        reader.line_of({"a": 1})


@pytest.mark.anyio
async def test_lines_orjson_refuses_are_read_as_the_standard_library_reads_them() -> None:
    """NaN is read by the fallback in place; a line nested past any reader's depth is an odd line, not a crash of
    the reader (the JSON-RPC peer's read loop)."""
    odd: list[Any] = []

    async def other(line: bytes | MessageTooLargeError) -> None:
        odd.append(line)

    deep = b"[" * 5000 + b"]" * 5000
    batches: list[list[dict[str, Any]]] = []
    with anyio.fail_after(DEADLINE):
        async for batch in MessageBatches(_Chunks([b'{"a":1}', b'{"n":NaN}', deep, b'{"b":2}']), other):
            batches.append(batch)
    assert repr(batches) == repr([[{"a": 1}, {"n": math.nan}], [{"b": 2}]]) and odd == [deep]


@pytest.mark.anyio
async def test_lines_without_take_ready_are_batches_of_one() -> None:
    """Any async iterable of lines will do (not only a `LineReader`): each line is then its own batch."""

    async def lines() -> AsyncIterator[bytes]:
        for line in (b'{"n":1}', b'{"n":2}'):
            yield line

    async def emit(event: HarnessEvent) -> None:
        raise AssertionError(f"no odd line here: {event}")

    with anyio.fail_after(DEADLINE):
        assert [batch async for batch in json_batches(lines(), emit)] == [[{"n": 1}], [{"n": 2}]]


_RAW = {"a": b'{"a":1}', "b": b'{"b":2}', "c": b' {"c":3}', "d": b'{"d":4}', "e": b'{"e":5}'}


def test_scan_once_is_deprecated_on_the_facade_and_names_its_replacement() -> None:
    assert "scan_once" not in facade.__all__
    with pytest.warns(DeprecationWarning, match="json_batches"):
        scan = facade.scan_once
    assert scan('{"a":1}', 0) == ({"a": 1}, 7)


# -- loads_line ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"a":1,"b":"x"}', {"a": 1, "b": "x"}),
        (b'  { "a" : [1, 2] }  ', {"a": [1, 2]}),
        (b'{"a":1}\r', {"a": 1}),
        (b'{"a":{"b":[1,{"c":null,"d":true}],"e":"\\u00e9"}}', {"a": {"b": [1, {"c": None, "d": True}], "e": "é"}}),
        ('{"t":"ünïcode"}'.encode(), {"t": "ünïcode"}),
        (b"[1,2]", [1, 2]),
        (b"3", 3),
        (b'{"n":NaN,"i":-Infinity}', {"n": math.nan, "i": -math.inf}),
        # orjson reads an integer past 64 bits as a float: the number a JavaScript agent, which wrote it, holds
        (b'{"big":1180591620717411300000}', {"big": 1.1805916207174113e21}),
        (b'{"s":"\\ud800"}', {"s": "\ud800"}),
        (b'{"a":1,"a":2}', {"a": 2}),
    ],
    ids=["compact", "whitespace", "trailing-cr", "nested", "utf8", "array", "number", "nan-orjson-refuses",
         "integer-past-64-bits", "lone-surrogate-escape", "duplicate-key-last-wins"],
)
def test_loads_line_decodes(line: bytes, expected: Any) -> None:
    """As expected, and as `json.loads` reads it but for the one difference above (NaN compared as NaN)."""
    got = loads_line(line)
    assert repr(got) == repr(expected)
    if b"1180591620717411300000" not in line:
        assert repr(got) == repr(json.loads(line))


@pytest.mark.parametrize(
    "line", [b'{"a":1} trailing', b'{"a":1}{"b":2}', b"\xff\xfe", b'{"a":', b"", b"nope", b"[" * 5000 + b"]" * 5000],
    ids=["trailing-garbage", "two-objects", "non-utf8", "truncated", "empty", "word", "nested-too-deep"],
)
def test_loads_line_rejects_with_value_error(line: bytes) -> None:
    with pytest.raises(ValueError):
        loads_line(line)


# -- error_for_status ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403])
def test_error_for_status_auth(status: int) -> None:
    error = error_for_status(status, " bad key ", auth_hint="set MY_AGENT_KEY", retry_hint="R", failure_hint="F")
    assert isinstance(error, AuthFailedError)
    assert error.retryable is False
    assert error.message == f"the model API refused the credentials (HTTP {status}: bad key); set MY_AGENT_KEY"
    assert error.details == {"status": status}


def test_error_for_status_rate_limited() -> None:
    error = error_for_status(429, "slow down", auth_hint="A", retry_hint="wait 5s", failure_hint="F")
    assert isinstance(error, RateLimitedError)
    assert error.retryable is True and error.to_info().retryable is True
    assert "HTTP 429: slow down" in error.message and error.message.endswith("; wait 5s")
    assert error.details == {"status": 429}


@pytest.mark.parametrize(("status", "retryable"), [(500, True), (503, True), (400, False), (404, False), (None, False)])
def test_error_for_status_model_error(status: int | None, retryable: bool) -> None:
    error = error_for_status(status, "it broke", auth_hint="A", retry_hint="R", failure_hint="try later")
    assert type(error) is ModelError
    assert error.retryable is retryable and error.to_info().retryable is retryable
    where = "no HTTP status" if status is None else f"HTTP {status}"
    assert error.message == f"the model API failed ({where}: it broke); try later"
    assert error.details == ({} if status is None else {"status": status})


@pytest.mark.parametrize("status", [401, 429, 502, None])
def test_error_for_status_keeps_details(status: int | None) -> None:
    error = error_for_status(status, "x", request_id="req-1", model="m-1")
    assert error.details == {**({} if status is None else {"status": status}), "request_id": "req-1", "model": "m-1"}
    assert error.to_info().details == error.details


def test_error_for_status_truncates_the_detail() -> None:
    detail = "z" * 3000
    error = error_for_status(502, detail)
    assert "z" * 500 + "… [2500 more characters]" in error.message
    assert "z" * 501 not in error.message
    assert len(error.message) < 700
    assert error_for_status(500, "   ").message.startswith("the model API failed (HTTP 500: no message)")


# -- redact_argv ---------------------------------------------------------------------------------------------


def test_redact_argv() -> None:
    credential = "sk-" + "A1b2C3d4E5f6G7h8I9j0"
    argv = [
        "agent", "--api-key", "plainvalue", "--token=abc", "--model", "m-1", "--model=m-2", credential,
        "prefix:known-secret-value", "--verbose", "--api-key",
    ]
    out = redact_argv(argv, {"--api-key", "--token"}, known=("known-secret-value",))
    assert out == [
        "agent", "--api-key", REDACTED, f"--token={REDACTED}", "--model", "m-1", "--model=m-2", REDACTED,
        f"prefix:{REDACTED}", "--verbose", "--api-key",
    ]
    assert REDACTED == "***"
    assert argv[2] == "plainvalue"  # the input is not modified


def test_redact_argv_leaves_ordinary_args_alone() -> None:
    argv = ["agent", "run", "--cwd", "/tmp/x", "fix the test", "--api-key-file", "k.txt"]
    assert redact_argv(argv, {"--api-key"}) == argv


# -- Usage arithmetic ----------------------------------------------------------------------------------------

A = Usage(input_tokens=10, cached_input_tokens=4, output_tokens=5, reasoning_tokens=2, cost_usd=0.5)
B = Usage(input_tokens=3, cached_input_tokens=1, output_tokens=7, reasoning_tokens=0)


def test_usage_add_sums_every_figure() -> None:
    total = A + B
    figures = (total.input_tokens, total.cached_input_tokens, total.output_tokens, total.reasoning_tokens)
    assert figures == (13, 5, 12, 2)
    assert total.cost_usd == 0.5  # known when either cost is
    assert (B + A).cost_usd == 0.5
    assert (B + B).cost_usd is None
    assert (A + Usage(cost_usd=0.25)).cost_usd == pytest.approx(0.75)
    assert Usage() + Usage() == Usage()


def test_usage_sub_clamps_at_zero() -> None:
    diff = A - B
    assert (diff.input_tokens, diff.cached_input_tokens, diff.output_tokens, diff.reasoning_tokens) == (7, 3, 0, 2)
    assert diff.cost_usd is None  # known only when both costs are
    assert (B - A).cost_usd is None
    assert (A - Usage(cost_usd=0.2)).cost_usd == pytest.approx(0.3)
    assert (Usage(cost_usd=0.1) - Usage(cost_usd=0.5)).cost_usd == 0.0
    back = B - A
    assert back == Usage(input_tokens=0, cached_input_tokens=0, output_tokens=2, reasoning_tokens=0)


def test_usage_arithmetic_with_other_types_is_not_implemented() -> None:
    assert A.__add__(1) is NotImplemented  # type: ignore[operator]
    assert A.__sub__("x") is NotImplemented  # type: ignore[operator]
    with pytest.raises(TypeError):
        A + 1  # type: ignore[operator]
    with pytest.raises(TypeError):
        A - None  # type: ignore[operator]


# -- RunContext.spawn ----------------------------------------------------------------------------------------

_PROBE_ENV = "HARNESS_TEST_PROBE_VALUE"
_CHILD = (
    "import os, sys\n"
    "got = sys.stdin.readline().strip()\n"
    "print('hi' if got == 'ping' else 'bad:' + got, flush=True)\n"
    f"print(os.environ.get({_PROBE_ENV!r}, '<unset>'), flush=True)\n"
)


class _Spawner(Provider[NoOptions]):
    """Spawns a tiny child through `ctx.spawn`, sends it `ping`, returns its stdout lines as the final text.
    With `pass_env`, it passes `{**os.environ, **spec.env}` explicitly."""

    info: ClassVar[ProviderInfo] = ProviderInfo(name="spawner", version="1")
    pass_env: ClassVar[bool] = False

    async def run(self, spec: AgentRunSpec, options: NoOptions, ctx: RunContext) -> HarnessResult:
        env: Mapping[str, str] | None = {**os.environ, **spec.env} if self.pass_env else None
        out: list[str] = []
        async with ctx.spawn([sys.executable, "-c", _CHILD], env=env) as child:
            await child.send_line("ping")
            async for line in child.lines():
                assert isinstance(line, bytes)
                out.append(line.decode())
        return HarnessResult(status=RunStatus.SUCCESS, final_text="\n".join(out))


def _host(provider: type[_Spawner]) -> PluginHost:
    class Plugin:
        @hookimpl
        def harness_register_providers(self, register: Any) -> None:
            register(provider)

    return PluginHost.create(entry_points=False, plugins=[("spawner", Plugin())])


async def _spawn_run(runs_dir: Path, *, record_wire: bool, env: dict[str, str] | None = None,
                     pass_env: bool = False) -> tuple[str, list[str]]:
    provider = type("Spawner", (_Spawner,), {"pass_env": pass_env})
    spec = AgentRunSpec(prompt="x", env=env or {})
    with anyio.fail_after(DEADLINE):
        async with open_run(spec, "spawner", host=_host(provider), runs_dir=runs_dir, record_wire=record_wire) as live:
            result = await live.wait()
    assert result.status is RunStatus.SUCCESS, result.error
    return live.run_id, result.final_text.splitlines()


def _run_files(runs_dir: Path) -> list[str]:
    return sorted(p.name for p in runs_dir.iterdir())


@pytest.mark.anyio
async def test_spawn_records_the_wire_when_asked(runs_dir: Path) -> None:
    run_id, out = await _spawn_run(runs_dir, record_wire=True)
    assert out[0] == "hi"
    assert _run_files(runs_dir) == [f"{run_id}.jsonl", f"{run_id}.wire.jsonl"]
    records = [json.loads(line) for line in (runs_dir / f"{run_id}.wire.jsonl").read_text().splitlines()]
    assert records[0]["dir"] == "header"
    lines = [r for r in records if r["dir"] in ("in", "out")]
    assert [(r["dir"], r["line"]) for r in lines] == [("out", "ping"), ("in", "hi"), ("in", out[1])]
    assert all(isinstance(r["t"], float) for r in lines)


@pytest.mark.anyio
async def test_spawn_writes_no_wire_log_unless_asked(runs_dir: Path) -> None:
    run_id, out = await _spawn_run(runs_dir, record_wire=False)
    assert out[0] == "hi"
    assert _run_files(runs_dir) == [f"{run_id}.jsonl"]  # the run log, and no wire log


@pytest.mark.anyio
async def test_spec_env_reaches_the_child_when_the_provider_passes_it(runs_dir: Path) -> None:
    _, out = await _spawn_run(runs_dir, record_wire=False, env={_PROBE_ENV: "from-spec"}, pass_env=True)
    assert out == ["hi", "from-spec"]


@pytest.mark.anyio
async def test_spec_env_reaches_the_child_by_default(runs_dir: Path) -> None:
    _, out = await _spawn_run(runs_dir, record_wire=False, env={_PROBE_ENV: "from-spec"})
    assert out == ["hi", "from-spec"]


# -- ChildProcess.remember_descendants -----------------------------------------------------------------------


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, start time) of `pid`, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(") ", 1)[1].split()
    except OSError:
        return None
    return fields[0], int(fields[19])


def _alive(pid: int) -> bool:
    """True if `pid` is a live process (a zombie waiting for someone else to reap it counts as dead)."""
    info = _stat(pid)
    return info is not None and info[0] not in "ZX"


def _kill(entry: tuple[int, int]) -> None:
    """SIGKILL `entry` (pid, start time) if that very process still runs (never a reused pid)."""
    pid, started = entry
    info = _stat(pid)
    if info is not None and info[1] == started:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


async def _escaping_grandchild(remember: bool, started: list[tuple[int, int]]) -> int:
    """Start a child that starts `sleep` in a session of its own with an empty environment (so neither the
    process group nor the run mark finds it), prints its pid and exits on its own once told to; return the
    grandchild's pid after `aclose()` (also appended to `started` as soon as it is known, for the cleanup).
    Unsupervised: the supervisor would kill the grandchild itself when the child exits, hiding what
    `remember_descendants` does."""
    sleep = shutil.which("sleep")
    assert sleep is not None
    script = (
        "import subprocess, sys\n"
        f"g = subprocess.Popen([{sleep!r}, '30'], start_new_session=True, env={{}}, stdin=subprocess.DEVNULL,\n"
        "                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(g.pid, flush=True)\n"
        "sys.stdin.readline()\n"
    )
    with anyio.fail_after(DEADLINE):
        async with ChildProcess([sys.executable, "-c", script], supervise=False) as child:
            first = await child.lines().__anext__()
            assert isinstance(first, bytes)
            grandchild = int(first)
            info = _stat(grandchild)
            assert info is not None
            started.append((grandchild, info[1]))
            if remember:
                await child.remember_descendants()
            await child.send_line("exit")
            assert await child.wait() == 0
            assert _alive(grandchild)
    return grandchild


@pytest.mark.skipif(not HAS_PROC, reason="process trees are read from /proc (Linux only)")
@pytest.mark.anyio
async def test_remembered_descendants_are_killed_at_close() -> None:
    started: list[tuple[int, int]] = []
    try:
        grandchild = await _escaping_grandchild(remember=True, started=started)
        with anyio.fail_after(5):
            while _alive(grandchild):  # noqa: ASYNC110 - no event exists for "another process died"
                await anyio.sleep(0.01)
    finally:
        for entry in started:
            _kill(entry)


@pytest.mark.skipif(not HAS_PROC, reason="process trees are read from /proc (Linux only)")
@pytest.mark.anyio
async def test_unremembered_escaped_descendants_survive_close() -> None:
    started: list[tuple[int, int]] = []
    try:
        grandchild = await _escaping_grandchild(remember=False, started=started)
        assert _alive(grandchild)
    finally:
        for entry in started:
            _kill(entry)


def test_error_for_status_gives_the_scripted_models_refusal_whole_without_retry_advice() -> None:
    """Offline, a tool the request does not offer fails every run the same way: the scripted model's own advice
    whole, not "retry later" after 500 characters (trial 27, problem 8). Here quoted as a JSON body."""
    advice = "no tool 'echo'; give the agent the tool with `--mcp-server everything=COMMAND`; tools: " + "t, " * 300
    detail = json.dumps({"error": {"message": SCRIPTED_REFUSAL + advice.rstrip(", ")}})
    error = error_for_status(None, detail, failure_hint="retry later, or check the provider status")
    assert type(error) is ModelError and error.retryable is False
    assert error.message == f"the scripted model refused the request (no HTTP status): {advice.rstrip(', ')}"
