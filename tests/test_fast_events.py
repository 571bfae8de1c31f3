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
        waits: list[int] = []

        async def produce() -> None:
            for i in range(100):
                while not channel.offer(i):
                    waits.append(i)
                    await channel.wait_for_room()
            channel.end()

        async with anyio.create_task_group() as tg:
            tg.start_soon(produce)
            async for item in channel.items(lambda: None):
                got.append(item)
                assert len(channel._items) <= 8  # never more than its capacity waits
        assert got == list(range(100))
        assert waits, "a full channel makes the producer wait"

    anyio.run(main)


def test_a_consumer_that_leaves_frees_a_waiting_producer_and_later_offers_raise() -> None:
    async def main() -> None:
        channel: Channel[int] = Channel(1)
        assert channel.offer(1) and not channel.offer(2)
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(channel.wait_for_room)
                await anyio.sleep(0.01)
                channel.leave()
        with pytest.raises(ChannelClosed):
            channel.offer(3)
        with pytest.raises(ChannelClosed):
            channel.take_nowait()

    anyio.run(main)
