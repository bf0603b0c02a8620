"""Consumers of the asynchronous engine that come late and leave early, as HTTP clients do:
Hypothesis picks each one's request, when it starts and after how many outputs it walks away
(the stream closed, as the server closes it on a disconnect).

Whatever the mix, a consumer that stays gets, for each choice, the tokens that its request
gets alone (up to `assert_same_runs`'s near-ties), and a choice that finishes finishes once;
once everyone is gone the engine is idle with no KV block in use.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
from collections.abc import Callable, Iterator
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders.models import LlamaShape, write_llama
from tests.builders.vocab import spm_vocab
from tests.helpers import (
    Trace,
    assert_same_runs,
    engine_for,
    examples,
    run_choices,
    search_timeout,
    trace,
)
from vexel_core.engine import AsyncEngine, GenerationRequest, LLMEngine
from vexel_core.kvcache.pool import KVPool
from vexel_core.plugins import PluginHost
from vexel_core.sampling.params import SamplingParams

SHAPE = LlamaShape(hidden=32, layers=2, heads=4, kv_heads=2, ffn=64, context=256)
TRACED = SamplingParams(temperature=0.0, logprobs=3)
PROMPTS = ([1, *range(300, 310)], [1, *range(300, 320)], [1, 270, 271, 272], [1] + [260] * 40)


@dataclass(frozen=True)
class Consumer:
    prompt: int  # index into PROMPTS
    max_tokens: int
    n: int
    delay_ms: int  # before it sends its request
    leave_after: int | None  # outputs read before it walks away; None: it reads them all


CONSUMERS = st.lists(st.builds(
    Consumer, prompt=st.integers(0, len(PROMPTS) - 1), max_tokens=st.integers(1, 16),
    n=st.sampled_from([1, 1, 2]), delay_ms=st.integers(0, 5),
    leave_after=st.none() | st.integers(1, 6)), min_size=1, max_size=6)


@pytest.fixture(scope="module")
def model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_llama(tmp_path_factory.mktemp("leaving") / "m.gguf", spm_vocab(), SHAPE, seed=9)


@pytest.fixture(scope="module")
def alone(model_path: Path, host: PluginHost) -> LLMEngine:
    """Runs each request alone (its choices together)."""
    return engine_for(model_path, host, max_batch_size=2)


@pytest.fixture(scope="module")
def served(model_path: Path, host: PluginHost, alone: LLMEngine) -> Iterator[AsyncEngine]:
    # A pool of 6 blocks of 16 tokens for up to four sequences: some wait, some are
    # preempted; the engine's thread builds it, as the server's does.
    block_bytes = KVPool.bytes_per_block(alone.model.kv_spec, 16)
    aeng = AsyncEngine(lambda: engine_for(model_path, host, kv_cache_memory=str(
        6 * block_bytes), max_batch_size=4, max_batched_tokens=32, prefill_chunk=16))
    aeng.wait_ready(60)
    yield aeng
    aeng.shutdown()


@pytest.fixture(scope="module")
def runs_alone(alone: LLMEngine) -> Callable[[int, int], dict[int, Trace]]:
    """Each choice of PROMPTS[prompt] with *n* choices, run alone to 16 tokens (kept)."""
    @functools.cache
    def run(prompt: int, n: int) -> dict[int, Trace]:
        return run_choices(alone, GenerationRequest("alone", PROMPTS[prompt], TRACED, 16,
                                                    ignore_eos=True, n=n))
    return run


_ids = itertools.count()


async def consume(aeng: AsyncEngine, rid: str, c: Consumer) -> tuple[dict[int, Trace],
                                                                     dict[int, int]]:
    """What *c* read before it left or its request ended: tokens and finishes by choice."""
    await asyncio.sleep(c.delay_ms / 1000)
    got: dict[int, Trace] = {}
    finishes: dict[int, int] = {}
    request = GenerationRequest(rid, PROMPTS[c.prompt], TRACED, c.max_tokens, ignore_eos=True,
                                n=c.n)
    async with aclosing(aeng.generate(request)) as stream:
        read = 0
        async for out in stream:
            got.setdefault(out.index, []).extend(trace(out))
            finishes[out.index] = finishes.get(out.index, 0) + out.finished
            read += 1
            if c.leave_after is not None and read >= c.leave_after:
                break  # closing the stream cancels the request, as a disconnect does
    return got, finishes


async def until_idle(aeng: AsyncEngine) -> bool:
    engine = aeng.engine
    for _ in range(500):
        if not engine.has_work() and engine.blocks.num_used == 0:
            return True
        await asyncio.sleep(0.01)
    return False


@search_timeout(300)
@settings(max_examples=examples(40), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(consumers=CONSUMERS)
def test_consumers_that_leave_free_everything_and_others_get_their_answers(
        served: AsyncEngine, runs_alone: Callable[[int, int], dict[int, Trace]],
        consumers: list[Consumer]) -> None:
    async def main() -> tuple[list[tuple[dict[int, Trace], dict[int, int]]], bool]:
        results = await asyncio.gather(*(consume(served, f"c{next(_ids)}", c)
                                         for c in consumers))
        return results, await until_idle(served)

    results, idle = asyncio.run(main())
    assert idle, "the engine kept work or KV blocks after every consumer had gone"
    dtype = served.engine.model.dtype
    for c, (got, finishes) in zip(consumers, results, strict=True):
        runs = runs_alone(c.prompt, c.n)
        stayed = c.leave_after is None or c.leave_after > c.max_tokens * c.n
        for index in range(c.n):
            if stayed:
                assert finishes.get(index) == 1, (c, finishes)
                assert len(got[index]) == c.max_tokens, (c, index)
            assert finishes.get(index, 0) <= 1, (c, finishes)
            assert_same_runs({"c": got.get(index, [])},
                             {"c": runs[index][:len(got.get(index, []))]}, dtype)
