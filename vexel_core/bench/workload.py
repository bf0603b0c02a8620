"""Synthetic serving workloads through the AsyncEngine, and what they measure."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import mlx.core as mx
import numpy as np

from vexel_core.engine import AsyncEngine, GenerationRequest
from vexel_core.engine.async_engine import WARM_UP_BATCHES
from vexel_core.engine.metrics import StepRecord
from vexel_core.sampling.params import SamplingParams


@dataclass(frozen=True)
class Workload:
    num_requests: int
    prompt_len: int
    output_len: int
    rate: float | None = None  # requests per second (Poisson arrivals); None = all at once
    seed: int = 0

    def prompts(self, vocab: int) -> list[list[int]]:
        rng = np.random.default_rng(self.seed)
        # Avoid the first ids (BOS/EOS/control tokens of common vocabularies).
        shape = (self.num_requests, self.prompt_len)
        return rng.integers(min(300, vocab // 2), vocab, shape).tolist()  # type: ignore[no-any-return]


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50": 0.0, "p90": 0.0, "p99": 0.0}
    arr = np.asarray(values)
    return {f"p{p}": float(np.percentile(arr, p)) for p in (50, 90, 99)}


@dataclass
class BenchResult:
    engine: str
    requests: int
    prompt_len: int
    output_len: int
    wall_s: float
    requests_per_s: float
    generated_tok_per_s: float
    prompt_tok_per_s: float
    ttft_s: dict[str, float] = field(default_factory=dict)
    itl_s: dict[str, float] = field(default_factory=dict)
    peak_memory_gib: float = 0.0
    peak_kv_blocks: int = 0
    kv_blocks: int = 0
    preemptions: int = 0
    generated_tokens: int = 0

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


async def run_workload(engine: AsyncEngine, w: Workload,
                       progress: Callable[[int], None] = lambda n: None,
                       steps: list[StepRecord] | None = None) -> BenchResult:
    """Send the workload (greedy, EOS ignored so every request makes output_len tokens).
    With *steps*, the engine appends a `StepRecord` of each of the workload's steps to it."""
    # One-time costs (GPU kernels compiled on first use, attention plans per batch shape) are
    # not timed, as llama-bench warms up too: the server's rounds and one of as many requests
    # as the workload's, of its prompt length, first (session 40's 16 requests behind a
    # warm-up of 4 spent 4.8 s of TTFT in the first 16-prompt prefill), counters reset after.
    await engine.warm_up(w.prompt_len, batches=(*WARM_UP_BATCHES, w.num_requests))
    stats = engine.stats
    stats.step_records = steps
    vocab = engine.engine.model.vocab_size
    prompts = w.prompts(vocab)
    rng = random.Random(w.seed)
    ttfts: list[float] = []
    itls: list[float] = []
    generated = 0
    mx.reset_peak_memory()

    async def one(i: int, delay: float) -> None:
        nonlocal generated
        await asyncio.sleep(delay)
        req = GenerationRequest(f"bench-{i}", prompts[i], SamplingParams(temperature=0.0),
                                max_tokens=w.output_len, ignore_eos=True)
        start = time.perf_counter()
        last = None
        async for out in engine.generate(req):
            now = time.perf_counter()
            n = len(out.token_ids)
            if n:
                if last is None:
                    ttfts.append(now - start)
                else:
                    itls.append((now - last) / n)
                last = now
                generated += n
                progress(n)

    delays, t = [], 0.0
    for _ in range(w.num_requests):
        delays.append(t)
        if w.rate:
            t += rng.expovariate(w.rate)
    t0 = time.perf_counter()
    await asyncio.gather(*(one(i, d) for i, d in enumerate(delays)))
    wall = time.perf_counter() - t0
    return BenchResult(
        engine="vexel",
        requests=w.num_requests,
        prompt_len=w.prompt_len,
        output_len=w.output_len,
        wall_s=wall,
        requests_per_s=w.num_requests / wall,
        generated_tok_per_s=generated / wall,
        prompt_tok_per_s=w.num_requests * w.prompt_len / wall,
        ttft_s=percentiles(ttfts),
        itl_s=percentiles(itls),
        peak_memory_gib=mx.get_peak_memory() / 2**30,
        peak_kv_blocks=stats.kv_blocks_peak,
        kv_blocks=stats.kv_blocks_total,
        preemptions=stats.preemptions,
        generated_tokens=generated,
    )
