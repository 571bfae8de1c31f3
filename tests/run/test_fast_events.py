"""The hot path's shortcuts make exactly what the slow path makes: `fast_text_delta` is a `TextDelta` equal to
the validated one in every way a consumer can see; the event channel hands over in order, with backpressure."""

from __future__ import annotations

import copy
import pickle
import random

import anyio
import pytest

from harness_core import ReasoningDelta, TextDelta
from harness_core._run.channel import Channel, ChannelClosed
from harness_core._run.pipe import stamp
from harness_core.events import event_json
from harness_core.provider import fast_text_delta


@pytest.mark.parametrize("text", ["a", "héllo \"quoted\"\n\ttab \\ back", "\u2028\x00\x7f", "🙂" * 40])
@pytest.mark.parametrize("item_id", [None, "msg_8"])
def test_fast_text_delta_equals_the_validated_event(text: str, item_id: str | None) -> None:
    fast, slow = fast_text_delta(text, item_id), TextDelta(text=text, item_id=item_id)
    assert fast == slow and repr(fast) == repr(slow) and hash(fast.text) == hash(slow.text)
    assert fast.model_dump() == slow.model_dump()
    assert fast.model_dump_json() == slow.model_dump_json()
    assert fast.__pydantic_serializer__.to_json(fast) == slow.__pydantic_serializer__.to_json(slow)
    assert fast.model_fields_set == slow.model_fields_set
    assert fast.model_dump(exclude_unset=True) == slow.model_dump(exclude_unset=True)
    assert fast.model_copy(update={"seq": 3}) == slow.model_copy(update={"seq": 3})
    assert copy.deepcopy(fast) == slow and pickle.loads(pickle.dumps(fast)) == slow
    with pytest.raises(ValueError):
        fast.text = "changed"  # frozen, like every event


def test_the_channel_hands_items_over_in_order_and_holds_the_producer_at_its_capacity() -> None:
    async def main() -> None:
        channel: Channel[int] = Channel(8)
        got: list[int] = []
        refused: list[int] = []

        async def produce() -> None:
            for i in range(100):
                if not channel.offer(i):
                    refused.append(i)
                    await channel.send(i)
            channel.end()

        async with anyio.create_task_group() as tg:
            tg.start_soon(produce)
            async for item in channel.items(lambda: None):
                got.append(item)
                assert len(channel._items) <= 8  # never more than its capacity waits
        assert got == list(range(100))
        assert refused, "a full channel makes the producer wait"

    anyio.run(main)


def test_several_producers_come_out_in_the_order_they_offered_even_when_one_waited() -> None:
    """The reader waits for room; meanwhile another task (an approval, a request handler) offers: it must come
    out after the waiting one, not overtake it (the stream stays in `seq` order)."""
    async def main() -> None:
        channel: Channel[int] = Channel(4)
        order: list[int] = []
        for i in range(4):
            assert channel.offer(i)
        async with anyio.create_task_group() as tg:
            tg.start_soon(channel.send, 4)  # full: it waits
            await anyio.wait_all_tasks_blocked()
            assert not channel.offer(5), "a producer is waiting: no one jumps the queue"
            tg.start_soon(channel.send, 5)
            await anyio.wait_all_tasks_blocked()
            while len(order) < 6:
                item = channel.take_nowait()
                if item is None:
                    await anyio.wait_all_tasks_blocked()
                    continue
                order.append(item)
        assert order == [0, 1, 2, 3, 4, 5]

    anyio.run(main)


def test_a_cancelled_send_hands_nothing_over_and_frees_its_place() -> None:
    async def main() -> None:
        channel: Channel[int] = Channel(1)
        assert channel.offer(1)
        with anyio.move_on_after(0.05):
            await channel.send(2)
        assert not channel._waiting
        assert channel.take_nowait() == 1 and channel.take_nowait() is None
        assert channel.offer(3) and channel.take_nowait() == 3

    anyio.run(main)


def test_a_consumer_that_leaves_frees_a_waiting_producer_and_later_offers_raise() -> None:
    async def main() -> None:
        channel: Channel[int] = Channel(1)
        assert channel.offer(1) and not channel.offer(2)
        failed: list[BaseException] = []

        async def send() -> None:
            try:
                await channel.send(2)
            except ChannelClosed as exc:
                failed.append(exc)

        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(send)
                await anyio.wait_all_tasks_blocked()
                channel.leave()
        assert failed, "the waiting producer learns the consumer left"
        with pytest.raises(ChannelClosed):
            channel.offer(3)
        with pytest.raises(ChannelClosed):
            channel.take_nowait()

    anyio.run(main)


_TEXTS = ["", "a", "héllo \"quoted\"\n\ttab \\ back /", "\u2028\u2029\x00\x1f\x7f\b\f\r", "🙂" * 40, "\ufeff"]


@pytest.mark.parametrize("cls", [TextDelta, ReasoningDelta])
@pytest.mark.parametrize("text", _TEXTS)
@pytest.mark.parametrize("ts", [0.0, 1796685856.9742315, 1796685856.0, 1.5e-7, 123456789012345.67, 9.87e15])
def test_a_deltas_log_line_is_pydantics_byte_for_byte(cls: type[TextDelta | ReasoningDelta], text: str,
                                                       ts: float) -> None:
    """`event_json` writes a delta with orjson: the same bytes pydantic's serializer writes, every field."""
    for item_id in (None, "msg_é"):
        event = cls(text=text, item_id=item_id)
        stamp(event, "20261207T232117-e4d13638", 2**40, ts)
        assert event_json(event) == event.__pydantic_serializer__.to_json(event)


def test_many_random_deltas_log_as_pydantic_does() -> None:
    """Text from every plane, escapes and specials, any float: the two writers never differ."""
    rng = random.Random(31)
    specials = ['\x00', '\x1f', '\x7f', '"', '\\', '/', '\u2028', 'é', '😀', '\ufeff', '\n', '\t', 'a', ' ']
    for _ in range(3000):
        if rng.random() < 0.5:
            text = "".join(rng.choice(specials) for _ in range(rng.randint(0, 12)))
        else:
            text = "".join(chr(rng.choice([rng.randint(0x20, 0xD7FF), rng.randint(0xE000, 0x10FFFF)]))
                           for _ in range(rng.randint(0, 8)))
        event = rng.choice([TextDelta, ReasoningDelta])(text=text)
        stamp(event, "r", rng.randint(0, 10**12), rng.choice([rng.uniform(0, 2e9), rng.random(), rng.uniform(0, 1e17)]))
        assert event_json(event) == event.__pydantic_serializer__.to_json(event), text


def test_a_delta_orjson_refuses_is_written_by_pydantic() -> None:
    """A lone surrogate (pydantic's validation lets it through): whatever pydantic does with it, event_json does."""
    event = TextDelta(text="\ud800")
    try:
        expected: bytes | type[Exception] = event.__pydantic_serializer__.to_json(event)
    except Exception as exc:  # noqa: BLE001 - the same failure is what is asserted
        expected = type(exc)
    if isinstance(expected, bytes):
        assert event_json(event) == expected
    else:
        with pytest.raises(expected):
            event_json(event)


def test_a_delta_made_any_way_logs_as_pydantic_does() -> None:
    """Validated from JSON in another key order, copied, deep-copied, pickled, changed with `model_copy`: the same
    bytes from both writers; a `ts` that is not a float (the runner's is always `time.time()`) and a field pydantic
    does not know (`model_copy` takes any) are pydantic's to write."""
    base = TextDelta(text="héllo", item_id="msg_1")
    stamp(base, "r1", 7, 1796685856.25)
    made = [
        base,
        TextDelta.model_validate_json(b'{"item_id":"msg_1","text":"h\\u00e9llo","ts":1796685856.25,"seq":7,'
                                      b'"run_id":"r1","type":"text_delta"}'),
        copy.copy(base), copy.deepcopy(base), pickle.loads(pickle.dumps(base)),
        base.model_copy(update={"text": "other"}), base.model_copy(update={"ts": 5}),
        base.model_copy(update={"unknown": 1}),
    ]
    for event in made:
        assert event_json(event) == event.__pydantic_serializer__.to_json(event), event.__dict__
