"""The hot path's shortcuts make exactly what the slow path makes: `fast_text_delta` is a `TextDelta` equal to
the validated one in every way a consumer can see; the event channel hands over in order, with backpressure."""

from __future__ import annotations

import copy
import pickle

import anyio
import pytest

from harness_core import TextDelta
from harness_core._run.channel import Channel, ChannelClosed
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
