"""A timer task's sleep that a request can cut short (new deadlines, released records).

The share coordinator sleeps until the next member's session deadline, the
share-partition leader until the next acquisition lock expires; a request that sets an
earlier deadline rings the alarm so the sleeper recomputes when to wake. Fetches that
found nothing to acquire wait on ``Waiters`` until records become available again.
"""

from __future__ import annotations

import asyncio


class Alarm:
    def __init__(self) -> None:
        self._future: asyncio.Future | None = None

    async def sleep(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        self._future = loop.create_future()
        timer = loop.call_later(max(0.0, seconds), self.ring)
        try:
            await self._future
        finally:
            timer.cancel()

    def ring(self) -> None:
        if self._future is not None and not self._future.done():
            self._future.set_result(None)


class Waiters:
    """Futures of requests waiting for something to change; ``notify`` wakes them all."""

    def __init__(self) -> None:
        self._futures: list[asyncio.Future] = []

    def waiter(self) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        self._futures = [f for f in self._futures if not f.done()]  # requests that timed out meanwhile
        self._futures.append(future)
        return future

    def notify(self) -> None:
        futures, self._futures = self._futures, []
        for future in futures:
            if not future.done():
                future.set_result(None)
