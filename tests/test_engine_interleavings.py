"""The engine under interleavings of arrivals, steps and cancellations that Hypothesis
chooses (stateful testing), on an engine it also chooses (blocks of 8 or 16 tokens, 2-4
sequences, 4-32 tokens a step, chunks of 8-32, decode steps compiled or not): prefix caching
on, prompts that share prefixes, a pool small enough to preempt, pipelined steps, ``n = 2``
forks, one-token answers, stop tokens, requests with a repetition penalty (whose steps wait
for the previous samples instead of running ahead) and seeded sampling.

After every step the block manager must agree with the sequences: each block's reference
count is the number of live tables holding it, and the free count is the rest. At the end no
block is in use and every choice has finished exactly once. Each choice's tokens are that
choice's tokens when its request runs alone (up to the near-ties of `assert_same_runs`); a
cancelled choice's are a beginning of them. A failure prints the shortest sequence of rules
Hypothesis found that breaks one of these.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

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
from vexel_core.engine import FinishReason, GenerationRequest, LLMEngine, RequestOutput
from vexel_core.engine.request import SeqStatus
from vexel_core.kvcache.pool import KVPool
from vexel_core.plugins import PluginHost
from vexel_core.sampling.params import SamplingParams

SHAPE = LlamaShape(hidden=32, layers=2, heads=4, kv_heads=2, ffn=64, context=256)
TRACED = SamplingParams(temperature=0.0, logprobs=3)  # greedy, with the top candidates
# A penalty reads the history, so a step with such a request waits for the previous step's
# samples instead of being planned ahead: the two schedulers' paths interleave.
PENALISED = SamplingParams(temperature=0.0, logprobs=3, repetition_penalty=1.3)
# Seeded sampling draws each step's noise from (seed, choice, step), so batching, chunking and
# preemption must not change a single token.
SEEDED = SamplingParams(temperature=0.8, seed=7, logprobs=3)
# Three leading parts (1, 17 and 34 tokens: whole blocks and a token or two more) so that
# prompts share cached blocks, and the shared block is sometimes the last, partial one.
PREFIXES = ([1], [1, *range(300, 316)], [1, *range(300, 316), *range(320, 337)])
MAX_TOKENS = 12
CONTEXT = 65  # prompts over 53 tokens (of 64 at most) reach it before MAX_TOKENS
POOL_TOKENS = 112  # sequences of up to 65 tokens: admissions wait, decodes preempt


class EngineMachine(RuleBasedStateMachine):
    engine: LLMEngine  # made by `start`, the first rule

    def __init__(self, model_path: Path, host: PluginHost, alone: LLMEngine,
                 runs_alone: dict[tuple[int, ...], dict[int, Trace]]) -> None:
        super().__init__()
        self.model_path, self.host = model_path, host
        self.alone = alone
        self.runs_alone = runs_alone  # by sampling, n and prompt; kept across runs (one model)
        self.requests: dict[str, GenerationRequest] = {}
        self.got: dict[tuple[str, int], Trace] = {}
        self.finishes: dict[tuple[str, int], list[FinishReason]] = {}
        self.cancelled: set[str] = set()

    @initialize(block_size=st.sampled_from([8, 16]), max_batch_size=st.integers(2, 4),
                max_batched_tokens=st.integers(4, 32), prefill_chunk=st.sampled_from([8, 16, 32]),
                compiled_rows=st.sampled_from([0, 3]))
    def start(self, block_size: int, max_batch_size: int, max_batched_tokens: int,
              prefill_chunk: int, compiled_rows: int) -> None:
        """The engine under test; a step may hold fewer tokens than sequences running. Its
        decode steps of up to *compiled_rows* rows replay compiled graphs (a GPU's default),
        the others are built operation by operation (the CPU's)."""
        block_bytes = KVPool.bytes_per_block(self.alone.model.kv_spec, block_size)
        blocks = POOL_TOKENS // block_size
        self.engine = engine_for(
            self.model_path, self.host, kv_cache_memory=str(blocks * block_bytes),
            kv_block_size=block_size, max_batch_size=max_batch_size,
            max_batched_tokens=max_batched_tokens, prefill_chunk=prefill_chunk,
            attention_backend=self.alone.settings.attention_backend, context_len=CONTEXT,
            compiled_decode_rows=compiled_rows)
        assert self.engine.num_blocks == blocks

    def run_alone(self, request: GenerationRequest, index: int) -> Trace:
        """Choice *index* of *request* run alone, to MAX_TOKENS."""
        key = (id(request.sampling), request.n, *request.prompt_ids)
        if key not in self.runs_alone:
            self.runs_alone[key] = run_choices(self.alone, GenerationRequest(
                "alone", request.prompt_ids, request.sampling, MAX_TOKENS, ignore_eos=True,
                n=request.n))
        return self.runs_alone[key][index]

    # -- rules ----------------------------------------------------------------------------
    @rule(prefix=st.sampled_from(PREFIXES),
          tail=st.lists(st.integers(260, 399), min_size=8, max_size=30),
          max_tokens=st.integers(1, MAX_TOKENS), n=st.sampled_from([1, 1, 1, 2]),
          sampling=st.sampled_from([TRACED, TRACED, PENALISED, SEEDED]),
          stop_at=st.none() | st.integers(0, MAX_TOKENS - 1))
    def arrive(self, prefix: list[int], tail: list[int], max_tokens: int, n: int,
               sampling: SamplingParams, stop_at: int | None) -> None:
        rid = f"r{len(self.requests)}"
        request = GenerationRequest(rid, [*prefix, *tail], sampling, max_tokens,
                                    ignore_eos=True, n=n)
        alone = self.run_alone(request, 0)
        if stop_at is not None and stop_at < len(alone):  # a token its answer alone meets
            request.stop_token_ids = [alone[stop_at][0]]
        self.requests[rid] = request
        self.engine.add_request(request)

    @precondition(lambda self: self.engine.has_work())
    @rule(steps=st.integers(1, 6))
    def step(self, steps: int) -> None:
        for _ in range(steps):
            if self.engine.has_work():
                self.record(self.engine.step())

    def record(self, outputs: list[RequestOutput]) -> None:
        for out in outputs:
            key = (out.request_id, out.index)
            self.got.setdefault(key, []).extend(trace(out))
            if out.finish_reason is not None:
                self.finishes.setdefault(key, []).append(out.finish_reason)

    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        live = [rid for rid, request in self.requests.items() if rid not in self.cancelled
                and any((rid, i) not in self.finishes for i in range(request.n))]
        if live:
            rid = data.draw(st.sampled_from(live), label="cancelled")
            self.cancelled.add(rid)
            self.engine.abort(rid)

    # -- what must hold ------------------------------------------------------------------
    @invariant()
    def blocks_are_counted_once_per_holder(self) -> None:
        sched, blocks = self.engine.scheduler, self.engine.blocks
        held: Counter[int] = Counter()
        for seq in [*sched.running, *sched.waiting]:
            assert seq.status is not SeqStatus.FINISHED
            held.update(seq.table.blocks)
        assert all(blocks.refs[b] == held[b] for b in range(blocks.num_blocks)), (
            "a block's reference count differs from the tables holding it")
        assert blocks.num_free == blocks.num_blocks - len(held)
        assert len(sched.running) <= sched.seats_taken() <= self.engine.settings.max_batch_size

    def teardown(self) -> None:
        while self.engine.has_work():
            self.record(self.engine.step())
        assert self.engine.blocks.num_used == 0, "a KV block leaked"
        for rid, request in self.requests.items():
            for index in range(request.n):
                key = (rid, index)
                finishes = self.finishes.get(key, [])
                assert len(finishes) == 1, f"{key} finished {len(finishes)} times"
                got = self.got.get(key, [])
                # Cancelled, it may still have finished whole in the step that was running.
                tokens = [t for t, _ in got]
                stops = [t in request.stop_token_ids for t in tokens]
                assert not any(stops[:-1]), (key, tokens)  # nothing after a stop token
                if finishes[0] is FinishReason.ABORT:
                    assert rid in self.cancelled and len(got) < request.max_tokens, key
                elif finishes[0] is FinishReason.STOP:  # the stop token is the last one
                    assert stops[-1], (key, tokens)
                else:
                    assert finishes[0] is FinishReason.LENGTH, (key, finishes[0])
                    assert len(got) == request.max_tokens and not stops[-1], key
                # a beginning of the run alone; parting at a near-tie ends the comparison
                alone = self.run_alone(request, index)
                assert_same_runs({rid: got}, {rid: alone[:len(got)]}, self.engine.model.dtype)


@pytest.fixture(scope="module")
def model_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_llama(tmp_path_factory.mktemp("interleavings") / "m.gguf", spm_vocab(), SHAPE,
                       seed=5)


@search_timeout(600)
@pytest.mark.parametrize("backend", ["sdpa", "paged"])
def test_any_interleaving_keeps_blocks_counted_and_outputs_equal(
        model_path: Path, host: PluginHost, backend: str) -> None:
    alone = engine_for(model_path, host, max_batch_size=2, attention_backend=backend,
                       context_len=CONTEXT)
    runs_alone: dict[tuple[int, ...], dict[int, Trace]] = {}
    # 40 runs of up to 40 rules each: ~10 s a backend on the 2-core CI machine. No deadline:
    # a step's time on a busy CPU says nothing here.
    run_state_machine_as_test(
        lambda: EngineMachine(model_path, host, alone, runs_alone),
        settings=settings(max_examples=examples(40), stateful_step_count=40, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow]))
