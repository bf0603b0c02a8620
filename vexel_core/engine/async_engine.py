"""`AsyncEngine`: the asyncio face of the engine that the server, the CLI and bench share.

One worker thread owns MLX: it builds the engine (loads the model), then runs
`LLMEngine.step` while there is work, sleeping on a condition otherwise; a new request, a
cancellation or shutdown wakes it. Each request's outputs travel to the event loop through
an `asyncio.Queue`; a consumer that stops iterating (client gone, task cancelled) aborts its
request, freeing its blocks at the next step.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from vexel_core.attention.backends import bucket_representatives
from vexel_core.engine.core import LLMEngine
from vexel_core.engine.request import GenerationRequest, RequestOutput
from vexel_core.gpu import on_cuda
from vexel_core.logs import get_logger
from vexel_core.sampling.params import SamplingParams

log = get_logger(__name__)
_ids = itertools.count()
# `AsyncEngine.warm_up`'s rounds of concurrent requests (each at most max_batch_size)
WARM_UP_BATCHES = (1, 2, 4, 8, 16)


class AsyncEngine:
    """Give it a function that builds an `LLMEngine`; the worker thread calls it.

    MLX arrays belong to the thread whose stream made them (on CUDA another thread cannot
    evaluate them: "There is no Stream(gpu, 0) in current thread"), so the engine is built
    by the thread that runs it.
    """

    def __init__(self, factory: Callable[[], LLMEngine]) -> None:
        self._factory = factory
        self.engine: LLMEngine = None  # type: ignore[assignment]  # set by the worker
        self._ready = threading.Event()
        self._load_error: BaseException | None = None
        self._wake = threading.Condition()
        self._queues: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Queue[Any]]] = {}
        self._stopping = False
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="vexel-engine", daemon=True)
        self._thread.start()

    @property
    def is_ready(self) -> bool:
        return self._ready.is_set() and self._load_error is None

    def wait_ready(self, timeout: float | None = None) -> None:
        """Block until the model is loaded; re-raise the error if loading failed."""
        if not self._ready.wait(timeout):
            raise TimeoutError("the engine is still loading")
        if self._load_error is not None:
            raise self._load_error

    async def ready(self) -> None:
        if not self._ready.is_set():
            await asyncio.to_thread(self._ready.wait)
        self.wait_ready(0)

    @property
    def tokenizer(self):  # type: ignore[no-untyped-def]
        return self.engine.tokenizer

    @property
    def stats(self):  # type: ignore[no-untyped-def]
        return self.engine.stats

    async def generate(self, request: GenerationRequest) -> AsyncIterator[RequestOutput]:
        """Queue *request* and yield its outputs until every sequence has finished.

        Raises `RequestError` at once for an invalid request. Leaving the loop early aborts
        the request.
        """
        await self.ready()
        if not request.request_id:
            request.request_id = f"req-{next(_ids)}"
        rid = request.request_id
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self._queues[rid] = (asyncio.get_running_loop(), queue)
        try:
            self.engine.add_request(request)
        except BaseException:
            self._queues.pop(rid, None)
            raise
        self._notify()
        remaining = request.n
        try:
            while remaining:
                item = await queue.get()
                if isinstance(item, BaseException):
                    raise item
                if item.finished:
                    remaining -= 1
                yield item
        finally:
            self._queues.pop(rid, None)
            if remaining:
                self.engine.abort(rid)
                self._notify()

    async def warm_up(self, prompt_len: int = 32,
                      batches: tuple[int, ...] = WARM_UP_BATCHES) -> None:
        """Pay one-time costs before real requests do: GPU kernels compile on their first use
        (NVRTC on CUDA, about a second per kernel variant; the matrix-vector kernel has one per
        decode row count, the tensor-core product one up to 8 rows and one for 9-16), so rounds
        of 1, 2, 4, 8 and 16 concurrent short requests (at most max_batch_size) run a prefill
        and a decode step at each size. Fresh prompt chunks are
        padded to a few lengths (`bucket_length`), and on CUDA MLX's fused attention builds a
        plan for each new one (cuDNN, up to ~0.7 s on the H200): there a round sends one
        prompt of every padded length up to the chunk size. A last round sends a prompt of two
        chunks beside a short request: its second chunk attends to cached tokens (the path
        prefix-cache hits take too) in a step that also decodes. Counters are reset after
        (`LLMEngine.reset_counters`); a listener subscribed before would see the warm-up."""
        await self.ready()
        engine = self.engine
        vocab = engine.model.vocab_size
        # a prompt plus its two tokens must fit the context and, alone, the KV pool
        longest = min(engine.context_len, engine.num_blocks * engine.blocks.block_size) - 2
        prompt_len = max(1, min(prompt_len, longest))
        sizes = sorted({min(b, engine.settings.max_batch_size) for b in batches})

        async def one(name: str, length: int, seed: int) -> None:
            tokens = [(31 * seed + 7 * j) % vocab for j in range(length)]
            request = GenerationRequest(f"warm-up-{name}", tokens,
                                        SamplingParams(temperature=0.0), max_tokens=2,
                                        ignore_eos=True)
            async for _ in self.generate(request):
                pass

        async def round_of(label: str, *requests: Awaitable[None]) -> None:
            # each round's seconds: which shapes a slow start-up compiles for
            started = time.perf_counter()
            await asyncio.gather(*requests)
            log.debug("warm-up round", round=label,
                      seconds=round(time.perf_counter() - started, 2))

        for size in sizes:
            await round_of(f"batch {size}", *(one(f"{size}-{i}", prompt_len, size + i)
                                              for i in range(size)))
        if on_cuda():  # the only backend whose fused attention plans per length
            lengths = bucket_representatives(min(engine.settings.prefill_chunk, longest))
            await round_of("prompt lengths", *(one(f"length-{n}", n, 2000 + n) for n in lengths))
        two_chunks = engine.settings.prefill_chunk + 16
        if two_chunks <= longest and engine.settings.max_batch_size >= 2:
            await round_of("chunked", one("chunked", two_chunks, 1000),
                           one("beside", prompt_len, 1001))
        engine.reset_counters()

    def abort(self, request_id: str) -> None:
        if self.engine is not None:
            self.engine.abort(request_id)
            self._notify()

    def shutdown(self) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify()
        self._thread.join(timeout=30)

    def _notify(self) -> None:
        with self._wake:
            self._wake.notify()

    def _run(self) -> None:
        try:
            self.engine = self._factory()
        except BaseException as exc:  # reported to whoever waits for readiness
            self._load_error = exc
            return
        finally:
            self._ready.set()
        try:
            self._serve()
        finally:
            self.engine.close()

    def _serve(self) -> None:
        while True:
            with self._wake:
                while not self._stopping and not self.engine.has_work():
                    self._wake.wait()
                if self._stopping:
                    return
            try:
                outputs = self.engine.step()
            except BaseException as exc:  # a bug: fail the waiting requests, keep serving
                log.exception("engine step failed")
                self._fail_all(exc)
                continue
            for out in outputs:
                target = self._queues.get(out.request_id)
                if target is not None:
                    loop, queue = target
                    loop.call_soon_threadsafe(queue.put_nowait, out)

    def _fail_all(self, exc: BaseException) -> None:
        for rid, (loop, queue) in list(self._queues.items()):
            self.engine.abort(rid)
            loop.call_soon_threadsafe(queue.put_nowait, exc)
