"""`harness run --json` output (`cli.foreground.live.JsonLines`): the run-log line of every event, byte for byte,
written in chunks for throughput, yet every event shown as soon as the reader has caught up with the run."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest

import harness_core.cli.foreground.live as live_mod
from harness_core._run.pipe import stamp
from harness_core.cli.foreground.live import JsonLines
from harness_core.events import HarnessEvent, Notice, TextDelta, event_json


def _events(n: int, text: str = "a forty character delta of text, é ü ✓ ..") -> list[HarnessEvent]:
    out: list[HarnessEvent] = []
    for seq in range(n):
        event: HarnessEvent = TextDelta(text=text, item_id="msg_1") if seq % 3 else Notice(level="info", code="c",
                                                                                             message=f"n{seq}")
        stamp(event, "20260101T000000-deadbeef", seq, 1.5 + seq)
        out.append(event)
    return out


def _expected(events: list[HarnessEvent]) -> bytes:
    return b"".join(e.model_dump_json().encode() + b"\n" for e in events)


class Sink(io.TextIOWrapper):
    """A stdout-like text stream over bytes; records what each write to the binary layer carried."""

    def __init__(self, encoding: str = "utf-8") -> None:
        self.raw_writes: list[bytes] = []
        sink = self

        class Raw(io.BytesIO):
            def write(self, data: Any) -> int:
                sink.raw_writes.append(bytes(data))
                return super().write(data)

        self.bytes = Raw()
        super().__init__(self.bytes, encoding=encoding, newline="\n", write_through=True)

    def value(self) -> bytes:
        self.flush()
        return self.bytes.getvalue()


class FakeLive:
    """Stands in for `LiveRun` in `follow`: yields `events`, calling the caught-up callback where the real
    iteration would wait (before each event listed in `pauses`), and checks what was visible then."""

    def __init__(self, events: list[HarnessEvent], pauses: set[int], *, lines: bool = False) -> None:
        self.events, self.pauses = events, pauses
        self.callback: Callable[[], None] | None = None
        self.callbacks: list[Callable[[], None] | None] = []
        self._lines = lines

    def share_log_lines(self) -> Callable[[HarnessEvent], bytes | None]:
        if not self._lines:
            return lambda event: None
        return self._share()

    def log_line(self, event: HarnessEvent) -> bytes:
        return event_json(event)

    def when_caught_up(self, callback: Callable[[], None] | None) -> None:
        self.callback = callback
        self.callbacks.append(callback)

    def _share(self) -> Callable[[HarnessEvent], bytes | None]:
        self.shared: dict[int, bytes] = {e.seq: event_json(e) for e in self.events if e.seq % 2}
        return lambda event: self.shared.pop(event.seq, None)

    def __aiter__(self) -> AsyncIterator[HarnessEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[HarnessEvent]:
        for event in self.events:
            if event.seq in self.pauses and self.callback is not None:
                self.callback()
                await anyio.lowlevel.checkpoint()
            yield event


def _follow(out: JsonLines, live: Any) -> None:
    anyio.run(out.follow, live)


@pytest.mark.parametrize("encoding", ["utf-8", "latin-1"])
def test_print_writes_the_event_as_model_dump_json_at_once(encoding: str) -> None:
    events = _events(4, text="plain ascii text only here, forty chars")
    sink = Sink(encoding)
    out = JsonLines(sink)
    for i, event in enumerate(events):
        out.print(event)
        assert sink.value() == _expected(events[: i + 1])  # flushed: the reader sees it now
    assert out.last_seq == 3


def test_print_to_a_plain_text_stream() -> None:
    events = _events(5)
    sink = io.StringIO()
    out = JsonLines(sink)
    for event in events:
        out.print(event)
    assert sink.getvalue().encode() == _expected(events)


def test_follow_writes_what_arrived_together_in_one_write_when_caught_up() -> None:
    events = _events(10)
    sink = Sink()
    out = JsonLines(sink)
    seen_at_pause: dict[int, bytes] = {}
    live = FakeLive(events, pauses={0, 4, 7})
    original = live._iterate

    async def watching() -> AsyncIterator[HarnessEvent]:
        async for event in original():
            if event.seq in live.pauses:
                seen_at_pause[event.seq] = sink.value()
            yield event

    live._iterate = watching  # type: ignore[method-assign]
    _follow(out, live)
    assert sink.value() == _expected(events)
    assert seen_at_pause == {0: b"", 4: _expected(events[:4]), 7: _expected(events[:7])}
    assert sink.raw_writes == [_expected(events[:4]), _expected(events[4:7]), _expected(events[7:])]
    assert live.callbacks[0] is not None and live.callbacks[-1] is None  # the hook is removed afterwards
    assert out.last_seq == 9


def test_follow_reuses_the_log_lines_it_is_given() -> None:
    events = _events(9)
    sink = Sink()
    live = FakeLive(events, pauses={5}, lines=True)
    _follow(JsonLines(sink), live)
    assert sink.value() == _expected(events)
    assert live.shared == {}  # every line it offered was taken


def test_a_long_burst_is_written_in_bounded_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live_mod, "_CHUNK", 1000)
    events = _events(100)
    sink = Sink()
    _follow(JsonLines(sink), FakeLive(events, pauses=set()))
    assert sink.value() == _expected(events)
    assert len(sink.raw_writes) > 5
    assert all(len(w) < 1000 + 400 for w in sink.raw_writes)


def test_what_is_held_is_written_when_the_stream_fails() -> None:
    events = _events(5)
    sink = Sink()

    class Failing(FakeLive):
        async def _iterate(self) -> AsyncIterator[HarnessEvent]:
            for event in self.events:
                yield event
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        _follow(JsonLines(sink), Failing(events, pauses=set()))
    assert sink.value() == _expected(events)


def test_text_already_written_to_the_stream_stays_first() -> None:
    sink = Sink()
    sink.write("before\n")  # buffered in the text layer (write_through covers only what reaches it)
    out = JsonLines(sink)
    events = _events(2)
    for event in events:
        out.print(event)
    assert sink.value() == b"before\n" + _expected(events)


def test_follow_on_a_real_run_prints_its_log(tmp_path: Any) -> None:
    import harness_core.testing.scripted as scripted
    from harness_core import AgentRunSpec, open_run
    from harness_core.plugins import PluginHost

    host = PluginHost.create(entry_points=False, plugins=[("scripted", scripted)])
    sink = Sink()
    out = JsonLines(sink)

    async def main() -> Any:
        spec = AgentRunSpec(prompt="x", provider_options={"scenario": "tools"})
        async with open_run(spec, "scripted", host=host, runs_dir=tmp_path / "runs") as live:
            await out.follow(live)
        return live

    live = anyio.run(main)
    assert live.log_path is not None
    assert sink.value() == live.log_path.read_bytes()
    assert live.result is not None and out.last_seq == sink.value().count(b"\n") - 1 >= 3
