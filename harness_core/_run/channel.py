"""The bounded hand-over of one run's events from the runner to its consumer (a deque, no anyio stream).

Layer: core runtime (the runner's hot path). Knows nothing of events or runs: items, a capacity, and the two
ends' close. One consumer task, any number of producer tasks; the backpressure and order rules are in
`Channel`'s docstring and docs/runs.md (backpressure).
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Generic, TypeVar

import anyio

__all__ = ["Channel", "ChannelClosed"]

T = TypeVar("T")


class ChannelClosed(Exception):
    """The other end is closed: the consumer left (for the producer), or the stream ended (for the consumer)."""


class Channel(Generic[T]):
    """A bounded FIFO between any number of producer tasks and one consumer task. The usual hand-over is a
    `deque.append` on one side and a `popleft` on the other, with no exception and no anyio call; an `anyio.Event`
    is made only when one side must wait. `offer` refuses when `capacity` items wait or a producer already waits;
    a refused producer awaits `send`, queued behind the others, so items come out in the order offered (a run's
    events in `seq` order). Waiting producers are let in once the consumer has taken a quarter of a full stream,
    so a full stream is not a task switch per item."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self._items: deque[T] = deque()
        self._waiting: deque[tuple[T, anyio.Event]] = deque()  # refused producers, in order
        self._capacity = capacity
        self._resume_at = max(0, capacity - max(1, capacity // 4))
        self._ended = False  # the producer closed: the consumer gets the rest, then the end
        self._left = False  # the consumer closed: nobody takes items any more
        self._readable: anyio.Event | None = None  # the consumer waits for an item

    @property
    def consumer_left(self) -> bool:
        return self._left

    def offer(self, item: T) -> bool:
        """Hand `item` over without waiting. False: the stream is full or producers wait (await `send`).
        Raises ChannelClosed when the consumer has left (or the producer closed this end)."""
        if self._left or self._ended:
            raise ChannelClosed
        items = self._items
        if len(items) >= self._capacity or self._waiting:
            return False
        items.append(item)
        readable = self._readable
        if readable is not None:
            self._readable = None
            readable.set()
        return True

    async def send(self, item: T) -> None:
        """Hand `item` over after the producers already waiting, once there is room. Raises ChannelClosed when
        the consumer leaves meanwhile; cancelled, the item is not handed over."""
        if self._left or self._ended:
            raise ChannelClosed
        if self.offer(item):
            return
        entry = (item, anyio.Event())
        self._waiting.append(entry)
        try:
            await entry[1].wait()
        except BaseException:
            if entry in self._waiting:  # not let in yet: it never will be
                self._waiting.remove(entry)
            raise
        if self._left:
            raise ChannelClosed

    def end(self) -> None:
        """The producer's close: no more items; the consumer gets those waiting, then the end."""
        self._ended = True
        self._wake_consumer()

    def take_nowait(self) -> T | None:
        """The next item, or None when none is waiting (check `ended` then). Raises ChannelClosed after the
        consumer's own `leave`."""
        items = self._items
        if not items and self._waiting:
            self._let_in()
        if items:
            item = items.popleft()
            if self._waiting and len(items) <= self._resume_at:
                self._let_in()
            return item
        if self._left:
            raise ChannelClosed
        return None

    def _let_in(self) -> None:
        """Move waiting producers' items into the stream, in order, while there is room."""
        items, waiting = self._items, self._waiting
        while waiting and len(items) < self._capacity:
            item, admitted = waiting.popleft()
            items.append(item)
            admitted.set()

    @property
    def ended(self) -> bool:
        """The producer closed and every item was taken."""
        return self._ended and not self._items

    async def wait_readable(self) -> None:
        """Wait until an item is waiting, the stream ended, or the consumer left."""
        while not self._items and not self._ended and not self._left:
            if self._readable is None:
                self._readable = anyio.Event()
            await self._readable.wait()

    async def items(self, caught_up: Callable[[], None]) -> AsyncIterator[T]:
        """The consumer's iteration: every item until the stream ended (or the consumer left); `caught_up()`
        is called each time it has taken every item so far and is about to wait for the next."""
        take = self.take_nowait
        while True:
            try:
                item = take()
            except ChannelClosed:  # the consumer's own `leave`: the iteration ends
                return
            if item is None:
                if self.ended:
                    return
                caught_up()
                await self.wait_readable()
                continue
            yield item

    def leave(self) -> None:
        """The consumer's close: nobody takes items any more; waiting producers are woken (their `send` raises,
        and so does `offer` from now on). Items still waiting are dropped."""
        self._left = True
        self._items.clear()
        while self._waiting:
            self._waiting.popleft()[1].set()
        self._wake_consumer()

    def _wake_consumer(self) -> None:
        readable = self._readable
        if readable is not None:
            self._readable = None
            readable.set()
