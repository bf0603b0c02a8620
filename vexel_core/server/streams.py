"""The outputs of one HTTP request's engine requests, merged into one stream.

A completions request with several prompts becomes several engine requests; their outputs
arrive interleaved through one queue. While nothing arrives for ``idle_seconds`` the stream
yields `IDLE`, which the SSE layer turns into a keep-alive comment. Closing the stream
cancels whatever is still running, which aborts those engine requests and frees their blocks.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import AsyncIterator, Sequence

from vexel_core.engine import AsyncEngine, GenerationRequest, RequestOutput


class _Marker(enum.Enum):
    IDLE = "idle"
    DONE = "done"


IDLE = _Marker.IDLE
"""Yielded by `OutputStream.items` when nothing arrived for ``idle_seconds``."""


class OutputStream:
    def __init__(self, idle_seconds: float | None) -> None:
        self._idle = idle_seconds
        self._queue: asyncio.Queue[RequestOutput | _Marker | Exception] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        self._refused: Exception | None = None

    @classmethod
    async def open(cls, engine: AsyncEngine, requests: Sequence[GenerationRequest],
                   idle_seconds: float | None = None) -> OutputStream:
        """Submit *requests*; raise at once (e.g. `RequestError`) if the engine refuses one."""
        stream = cls(idle_seconds)
        stream._tasks = [asyncio.create_task(stream._pump(engine.generate(r)))
                         for r in requests]
        # Once the engine is ready (the routes check first), `AsyncEngine.generate` validates
        # and queues its request before its first real await, so after one turn of the event
        # loop every refused request has reported its error.
        await asyncio.sleep(0)
        if stream._refused is not None:
            stream.close()
            raise stream._refused
        return stream

    async def _pump(self, outputs: AsyncIterator[RequestOutput]) -> None:
        try:
            async for out in outputs:
                self._queue.put_nowait(out)
        except Exception as exc:  # refused, or the engine failed: the consumer raises it
            if self._refused is None:
                self._refused = exc
            self._queue.put_nowait(exc)
        else:
            self._queue.put_nowait(_Marker.DONE)

    async def items(self) -> AsyncIterator[RequestOutput | _Marker]:
        """Outputs as they come, `IDLE` after each quiet ``idle_seconds``, until all finish."""
        running = len(self._tasks)
        while running:
            try:
                item = await asyncio.wait_for(self._queue.get(), self._idle)
            except asyncio.TimeoutError:
                yield IDLE
                continue
            if item is _Marker.DONE:
                running -= 1
            elif isinstance(item, Exception):
                raise item
            else:
                yield item

    async def outputs(self) -> list[RequestOutput]:
        """Every output until all requests finish (for non-streamed responses)."""
        return [item async for item in self.items() if not isinstance(item, _Marker)]

    def close(self) -> None:
        """Cancel what is still running: the engine aborts those requests."""
        for task in self._tasks:
            task.cancel()
