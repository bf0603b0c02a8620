"""The batched engine: continuous batching equals one-at-a-time, preemption, prefix
caching, n > 1, cancellation, and no leaked KV block ever."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from tests.builders.models import LlamaShape, write_llama
from tests.builders.vocab import spm_vocab
from tests.helpers import (
    Trace,
    Traced,
    assert_same_runs,
    engine_for,
    run_to_completion,
    run_traced,
    trace,
)
from vexel_core.engine import AsyncEngine, FinishReason, GenerationRequest
from vexel_core.errors import RequestError
from vexel_core.kvcache.pool import KVPool
from vexel_core.sampling.params import SamplingParams

SHAPE = LlamaShape(hidden=64, layers=2, heads=4, kv_heads=2, ffn=128, context=256)
GREEDY = SamplingParams(temperature=0.0)
TRACED = SamplingParams(temperature=0.0, logprobs=5)  # greedy, with the top candidates


@pytest.fixture(scope="module")
def model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_llama(tmp_path_factory.mktemp("engine") / "m.gguf", spm_vocab(), SHAPE, seed=3)


@pytest.fixture(params=[0, 8], ids=["eager", "compiled"])
def make_engine(model_path: Path, host, monkeypatch, request):  # type: ignore[no-untyped-def]
    """Engines built by a test, their decode steps built operation by operation (the CPU's
    default) or, up to 8 rows, replayed as compiled graphs (a GPU's), unless the test sets
    ``compiled_decode_rows``; afterwards every block must be back in the pool, and the
    engine must never have asked MLX to evaluate an empty array (on CUDA a kernel launched
    over nothing fails: "invalid argument")."""
    import vexel_core.engine.core as core

    evaluated: list[int] = []
    real_async_eval = core.mx.async_eval

    def recording(*arrays):  # type: ignore[no-untyped-def]
        for a in arrays:
            evaluated.extend(x.size for x in (a if isinstance(a, list) else [a]))
        return real_async_eval(*arrays)

    monkeypatch.setattr(core.mx, "async_eval", recording)
    engines = []

    def make(**settings: object):  # type: ignore[no-untyped-def]
        e = engine_for(model_path, host, **{"compiled_decode_rows": request.param, **settings})
        engines.append(e)
        return e

    yield make
    assert 0 not in evaluated, "the engine evaluated an empty array"
    for e in engines:
        assert not e.has_work()
        assert e.blocks.num_free == e.blocks.num_blocks, "a KV block leaked"
        assert all(r == 0 for r in e.blocks.refs)


def _requests(n: int, seed: int = 0) -> list[GenerationRequest]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        plen = int(rng.integers(3, 60))
        prompt = [1] + [int(t) for t in rng.integers(260, 400, plen)]
        out.append(GenerationRequest(f"r{i}", prompt, TRACED, max_tokens=int(rng.integers(1, 24)),
                                     ignore_eos=True))
    return out


def _copy(reqs: list[GenerationRequest]) -> list[GenerationRequest]:
    return [GenerationRequest(r.request_id, list(r.prompt_ids), r.sampling, r.max_tokens,
                              ignore_eos=True) for r in reqs]


@pytest.mark.parametrize("backend", ["sdpa", "paged"])
def test_concurrent_equals_sequential(make_engine, backend: str) -> None:  # type: ignore[no-untyped-def]
    reqs = _requests(16)
    sequential: Traced = {}
    one = make_engine(attention_backend=backend, max_batch_size=1)
    for r in _copy(reqs):
        sequential.update(run_traced(one, [r]))
    many = make_engine(attention_backend=backend, max_batch_size=16, max_batched_tokens=96,
                       prefill_chunk=32)
    assert_same_runs(run_traced(many, _copy(reqs)), sequential, many.model.dtype)
    assert all(len(sequential[r.request_id]) == r.max_tokens for r in reqs)


def test_admissions_and_prompt_chunks_beside_decodes_are_launched_ahead(make_engine) -> None:  # type: ignore[no-untyped-def]
    """Requests arriving while others decode: every step that admits a request or goes on
    with a prompt beside decodes is planned and launched before the previous step's samples
    reach the host, and the outputs equal one-at-a-time runs."""
    reqs = _requests(6, seed=5)
    sequential: Traced = {}
    one = make_engine(max_batch_size=1)
    for r in _copy(reqs):
        sequential.update(run_traced(one, [r]))
    many = make_engine(max_batch_size=8, max_batched_tokens=40, prefill_chunk=16)
    many.stats.step_records = []
    arriving = _copy(reqs)
    got: Traced = {r.request_id: [] for r in reqs}
    steps = 0
    while arriving or many.has_work():
        if arriving and steps % 3 == 0:
            many.add_request(arriving.pop(0))
        for o in many.step():
            got[o.request_id] += trace(o)
        steps += 1
    assert_same_runs(got, sequential, many.model.dtype)
    mixed = [r for r in many.stats.step_records if r.decodes and r.prefill_tokens]
    assert any(n < ctx for r in mixed for n, ctx in r.prefill_chunks)  # a continued prompt
    assert len(mixed) >= 3 and all(r.pipelined for r in mixed)


def test_a_step_that_samples_nothing_evaluates_no_empty_array(make_engine) -> None:  # type: ignore[no-untyped-def]
    """A step of mid-prompt chunks only has no logits rows; it must evaluate the cache
    writes alone (the fixture fails the test on any empty array evaluated)."""
    engine = make_engine(prefill_chunk=8, max_batched_tokens=8)
    prompt = [1] + list(range(260, 290))  # 31 tokens: three steps sample nothing
    (out,) = run_to_completion(engine, [GenerationRequest("long", prompt, GREEDY, max_tokens=2,
                                                          ignore_eos=True)])["long"].values()
    assert len(out) == 2


@pytest.mark.parametrize("backend", ["sdpa", "paged"])
def test_preemption_under_a_tiny_pool_keeps_outputs(make_engine, backend: str) -> None:  # type: ignore[no-untyped-def]
    reqs = _requests(16, seed=1)
    big = make_engine(attention_backend=backend)
    reference = run_traced(big, _copy(reqs))
    # 80 tokens of KV per sequence at most; 16 sequences cannot all fit in 12 blocks.
    block_bytes = KVPool.bytes_per_block(big.model.kv_spec, 16)  # its dtype: the device's
    small = make_engine(attention_backend=backend, kv_cache_memory=str(12 * block_bytes),
                        max_batch_size=16, enable_prefix_cache=False)
    assert small.num_blocks == 12
    assert_same_runs(run_traced(small, _copy(reqs)), reference, small.model.dtype)
    assert small.stats.preemptions > 0


def test_shared_prefix_reuses_blocks(make_engine) -> None:  # type: ignore[no-untyped-def]
    engine = make_engine()
    prefix = [1] + list(range(300, 347))  # 48 tokens: 3 full blocks
    a = GenerationRequest("a", prefix + [350, 351], GREEDY, 8, ignore_eos=True)
    b = GenerationRequest("b", prefix + [350, 351], GREEDY, 8, ignore_eos=True)
    first = run_to_completion(engine, [a])["a"]
    hits_before = engine.blocks.stats.prefix_hits
    second = run_to_completion(engine, [b])["b"]
    assert engine.blocks.stats.prefix_hits - hits_before == 3
    assert second == first
    fresh = make_engine(enable_prefix_cache=False)
    assert run_to_completion(fresh, [GenerationRequest("c", prefix + [350, 351], GREEDY, 8,
                                                       ignore_eos=True)])["c"] == first


def test_an_answer_of_one_token_still_caches_its_prompt(make_engine) -> None:  # type: ignore[no-untyped-def]
    # The sequence finishes in the step that computes its prompt (max_tokens 1 here; an
    # end-of-turn as the first token in a chat): its full blocks must be named before they
    # go back to the pool, or the same prompt sent again finds nothing.
    engine = make_engine()
    prompt = [1] + list(range(300, 340))  # 41 tokens: 2 full blocks
    first = run_to_completion(engine, [GenerationRequest("a", prompt, GREEDY, 1)])["a"]
    hits_before = engine.blocks.stats.prefix_hits
    again = run_to_completion(engine, [GenerationRequest("b", prompt, GREEDY, 1)])["b"]
    assert engine.blocks.stats.prefix_hits - hits_before == 2
    assert again == first


def test_n_greater_than_one_shares_the_prompt_blocks(make_engine) -> None:  # type: ignore[no-untyped-def]
    engine = make_engine()
    prompt = [1] + list(range(300, 340))  # 41 tokens: 3 blocks, the last one partial
    req = GenerationRequest("n3", prompt, SamplingParams(temperature=1.0, seed=7), 6,
                            ignore_eos=True, n=3)
    engine.add_request(req)
    outs: dict[int, list[int]] = {}
    while engine.has_work():
        for o in engine.step():
            outs.setdefault(o.index, []).extend(o.token_ids)
    assert sorted(outs) == [0, 1, 2] and all(len(v) == 6 for v in outs.values())
    # 47 tokens fit in 3 blocks: unshared, three sequences would hold 9. Shared, they hold
    # the prompt's 3 once plus one copy of the partial last block per child.
    assert engine.blocks.stats.cow_copies == 2
    assert engine.stats.kv_blocks_peak == 5
    assert len({tuple(v) for v in outs.values()}) > 1  # distinct samples per choice


def test_a_pipelined_plan_short_of_blocks_keeps_copy_on_write_whole(make_engine) -> None:  # type: ignore[no-untyped-def]
    # Found by test_engine_interleavings. Two siblings (n = 2) share a partly filled block;
    # the step planned ahead gave the first its own block for the copy, then ran out of
    # blocks for a later prompt chunk and was given up. The sibling's table kept the new
    # block, but the copy was never made: its next token read a block that lacked the
    # prompt's last key and value.
    block_bytes = KVPool.bytes_per_block(make_engine().model.kv_spec, 16)
    engine = make_engine(kv_cache_memory=str(8 * block_bytes), max_batch_size=4,
                         max_batched_tokens=24, prefill_chunk=16)
    prefix = [1, *range(300, 316), *range(320, 337)]
    reqs = [GenerationRequest("r0", prefix + [260] * 8, TRACED, 1, ignore_eos=True),
            GenerationRequest("r1", [1] + [260] * 22, TRACED, 2, ignore_eos=True),
            GenerationRequest("r2", [1, 260, 261] + [260] * 13 + [263], TRACED, 2,
                              ignore_eos=True, n=2),
            GenerationRequest("r3", prefix + [260] * 14, TRACED, 2, ignore_eos=True)]
    got: dict[tuple[str, int], Trace] = {}

    def step() -> None:
        for o in engine.step():
            got.setdefault((o.request_id, o.index), []).extend(trace(o))

    engine.add_request(reqs[0])
    step()  # r0's first chunk alone, then the others arrive together
    for r in reqs[1:]:
        engine.add_request(r)
    while engine.has_work():
        step()
    assert engine.blocks.stats.cow_copies == 1
    alone = make_engine(max_batch_size=1)
    for r in reqs:
        want = run_traced(alone, _copy([r]))
        for index in range(r.n):  # greedy: each choice is the answer alone
            assert_same_runs({r.request_id: got[(r.request_id, index)]}, want,
                             alone.model.dtype)


def test_cancel_frees_blocks_within_one_step(make_engine) -> None:  # type: ignore[no-untyped-def]
    engine = make_engine()
    req = GenerationRequest("x", [1] + list(range(300, 340)), GREEDY, 100, ignore_eos=True)
    engine.add_request(req)
    engine.step()
    engine.step()
    assert engine.blocks.num_used > 0
    engine.abort("x")
    outs = engine.step()
    assert engine.blocks.num_used == 0
    assert [o.finish_reason for o in outs] == [FinishReason.ABORT]


def test_choices_have_seats_and_finish_even_when_cancelled_before_forking(make_engine) -> None:  # type: ignore[no-untyped-def]
    engine = make_engine(max_batch_size=3)
    engine.add_request(GenerationRequest("one", [1, 300, 301], GREEDY, 4, ignore_eos=True))
    engine.add_request(GenerationRequest("three", [1, 302], GREEDY, 4, ignore_eos=True, n=3))
    engine.add_request(GenerationRequest("two", [1, 303], GREEDY, 4, ignore_eos=True, n=2))
    finished: list[tuple[str, int, FinishReason]] = []
    while engine.has_work():
        assert engine.scheduler.seats_taken() <= 3 and len(engine.scheduler.running) <= 3
        running = [s.request.request_id for s in engine.scheduler.running]
        if running == ["one"] and engine.stats.steps == 2:
            # "three" waits (its siblings need two seats beside "one"'s), "two" behind it;
            # cancelled before it ever ran, each of its three choices still finishes
            engine.abort("three")
        finished += [(o.request_id, o.index, o.finish_reason) for o in engine.step()
                     if o.finish_reason is not None]
    assert sorted(finished) == [("one", 0, FinishReason.LENGTH),
                                ("three", 0, FinishReason.ABORT),
                                ("three", 1, FinishReason.ABORT),
                                ("three", 2, FinishReason.ABORT),
                                ("two", 0, FinishReason.LENGTH),
                                ("two", 1, FinishReason.LENGTH)]


def test_async_engine_streams_and_cancels(make_engine) -> None:  # type: ignore[no-untyped-def]
    aeng = AsyncEngine(make_engine)  # built by the engine's thread, which owns its arrays

    async def main() -> tuple[list[int], int]:
        full = []
        async for out in aeng.generate(GenerationRequest("full", [1, 300, 301], GREEDY, 10,
                                                          ignore_eos=True)):
            full += out.token_ids
        got = 0
        async for out in aeng.generate(GenerationRequest("cut", [1, 300, 301], GREEDY, 200,
                                                          ignore_eos=True)):
            got += len(out.token_ids)
            if got >= 3:
                break  # the consumer walks away: the request is aborted
        engine = aeng.engine
        for _ in range(100):
            if engine.blocks.num_used == 0 and not engine.has_work():
                break
            await asyncio.sleep(0.02)
        return full, got

    try:
        full, got = asyncio.run(main())
    finally:
        aeng.shutdown()
    assert len(full) == 10 and got == 3
    assert aeng.engine.blocks.num_used == 0


def test_stop_strings_and_length(make_engine) -> None:  # type: ignore[no-untyped-def]
    engine = make_engine()
    base = GenerationRequest("s", [1, 300, 301], GREEDY, 12, ignore_eos=True)
    text = "".join(_texts(engine, base))
    assert len(text) > 4
    stop = text[2:4]
    cut = "".join(_texts(engine, GenerationRequest("t", [1, 300, 301], GREEDY, 12, stop=[stop],
                                                    ignore_eos=True)))
    assert cut == text[: text.find(stop)]


def _texts(engine, req):  # type: ignore[no-untyped-def]
    engine.add_request(req)
    texts = []
    while engine.has_work():
        texts += [o.text for o in engine.step()]
    return texts


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        ({"prompt_ids": []}, "prompt"),
        ({"prompt_ids": [1] * 300}, "prompt"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"n": 0}, "n"),
        ({"n": 65}, "n"),  # more choices than the 64 sequences the engine runs at once
        ({"sampling": SamplingParams(temperature=5.0)}, "temperature"),
        ({"prompt_ids": [10**6]}, "prompt"),
    ],
)
def test_invalid_requests_name_the_parameter(make_engine, kwargs, param) -> None:  # type: ignore[no-untyped-def]
    engine = make_engine()
    req = GenerationRequest("bad", **{"prompt_ids": [1, 2], **kwargs})
    with pytest.raises(RequestError) as err:
        engine.add_request(req)
    assert err.value.param == param


def test_seeded_sampling_is_the_same_pipelined_or_not(make_engine) -> None:  # type: ignore[no-untyped-def]
    """Alone, a seeded request decodes pipelined (its next step launched before its token
    reaches the host); beside a request with penalties, every step waits. Same tokens."""
    seeded = SamplingParams(temperature=0.9, top_k=50, seed=1234)
    alone = run_to_completion(make_engine(), [
        GenerationRequest("x", [1, 300, 301, 302], seeded, 20, ignore_eos=True)])
    penalised = SamplingParams(temperature=0.0, repetition_penalty=1.3)
    mixed = run_to_completion(make_engine(), [
        GenerationRequest("x", [1, 300, 301, 302], seeded, 20, ignore_eos=True),
        GenerationRequest("p", [1, 310, 311], penalised, 20, ignore_eos=True)])
    assert mixed["x"] == alone["x"]
    assert len(set(alone["x"][0])) > 3


def test_step_arrays_advanced_on_the_device_hold_the_hosts_values() -> None:
    # StepArrayMaker (on CUDA by default): a decode step's array is the last one plus one
    # where every sequence's next token is the next slot of the same blocks; anything else
    # (a prompt, a new block, a sequence gone or added) is made on the host. Either way the
    # values are the host's. Two sequences over 40 tokens with blocks of 16: steps with a
    # crossing take the host's array.
    from vexel_core.engine.runner import StepArrayMaker, step_arrays

    maker = StepArrayMaker(on_device=True)
    tables = {0: [7], 1: [3, 9]}
    expected_advanced = 0
    for step in range(40):
        if step == 0:  # prompts: 5 and 20 tokens
            positions, slots = list(range(5)) + list(range(20)), []
            lens = [5, 20]
        else:
            positions, lens = [4 + step, 19 + step], [5 + step, 20 + step]
        for s, n in enumerate(lens):
            while len(tables[s]) * 16 < n:  # a block when the sequence enters it
                tables[s].append(11 + 2 * len(tables[s]) + s)
        if step:
            slots = [tables[s][p // 16] * 16 + p % 16 for s, p in enumerate(positions)]
            crossed = any(p % 16 == 0 for p in positions) or step == 1
            expected_advanced += not crossed
        else:
            slots = [tables[0][p // 16] * 16 + p % 16 for p in range(5)] + [
                tables[1][p // 16] * 16 + p % 16 for p in range(20)]
        width = 4
        flat = [b for s in (0, 1) for b in tables[s] + [0] * (width - len(tables[s]))]
        got = maker(positions, slots, lens, flat, width)
        want = step_arrays(positions, slots, lens, flat, width)
        for a, b in zip(got, want, strict=True):
            assert a is not None and b is not None
            assert np.array_equal(np.array(a), np.array(b)), step
    assert maker.advanced == expected_advanced > 30


@pytest.mark.parametrize("backend", ["sdpa", "paged"])
def test_step_arrays_made_on_the_device_change_no_token(make_engine, backend: str) -> None:  # type: ignore[no-untyped-def]
    # The engine with its step arrays advanced on the device against the host's arrays
    # (both forced: CUDA's default is the first, the CPU's the second): the same tokens and
    # log-probs, bit for bit, over prompts, block crossings and a batch that changes as
    # requests finish.
    reqs = [GenerationRequest(r.request_id, r.prompt_ids, r.sampling, 40, ignore_eos=True)
            for r in _requests(4, seed=7)]
    host = make_engine(attention_backend=backend, max_batch_size=4)
    device = make_engine(attention_backend=backend, max_batch_size=4)
    host.runner.step_arrays.on_device = False
    device.runner.step_arrays.on_device = True
    assert run_traced(device, _copy(reqs)) == run_traced(host, _copy(reqs))
    assert device.runner.step_arrays.advanced > 0
    assert host.runner.step_arrays.advanced == 0
