"""The synchronous engine: requests in, one batched step at a time, streamed outputs out.

`LLMEngine.step` schedules, runs the model once, samples, detokenizes and checks stop
conditions. It is not thread-safe; `AsyncEngine` drives it from one worker thread.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import mlx.core as mx

from vexel_core.config import EngineSettings, parse_memory
from vexel_core.engine.loader import LoadedModel
from vexel_core.engine.metrics import EngineStats, StepClock
from vexel_core.engine.request import (
    FinishReason,
    GenerationRequest,
    RequestOutput,
    SeqStatus,
    Sequence,
    StopStrings,
    TokenLogprob,
)
from vexel_core.engine.runner import ModelRunner
from vexel_core.engine.scheduler import Schedule, ScheduledSeq, Scheduler
from vexel_core.errors import ConfigError, RequestError
from vexel_core.gpu import kernel_backend
from vexel_core.kvcache.blocks import BlockManager
from vexel_core.kvcache.pool import KVPool
from vexel_core.logs import get_logger
from vexel_core.memory import (
    bound_device_memory,
    device_memory_bytes,
    paced_step_tokens,
    release_device_memory,
    step_working_set,
)
from vexel_core.plugins import PluginHost, get_host
from vexel_core.sampling.sampler import PendingSample, Sampler, SequenceHistory
from vexel_core.tokenizer import StreamingDetokenizer

log = get_logger(__name__)


@dataclass(eq=False)
class _SeqState:
    seq: Sequence
    history: SequenceHistory
    detok: StreamingDetokenizer
    stops: StopStrings


@dataclass(eq=False)
class _InFlight:
    """A launched step: its schedule and the draw still running on the device."""

    schedule: Schedule
    pairs: list[tuple[_RequestState, _SeqState]]  # who samples, in the draw's row order
    sample: PendingSample | None


@dataclass(eq=False)
class _RequestState:
    request: GenerationRequest
    seqs: list[_SeqState] = field(default_factory=list)
    finished: int = 0


def resolve_backend(name: str) -> str:
    """``auto``: the paged backend where its GPU kernel runs (it reads the cache in place),
    MLX's fused attention elsewhere."""
    if name != "auto":
        return name
    return "paged" if kernel_backend() is not None else "sdpa"


def compiled_decode_rows(settings: EngineSettings) -> int:
    """``engine.compiled_decode_rows``, whose default depends on the device (config.py)."""
    if settings.compiled_decode_rows is not None:
        return settings.compiled_decode_rows
    return settings.max_batch_size if mx.default_device() != mx.cpu else 0


class LLMEngine:
    def __init__(self, loaded: LoadedModel, settings: EngineSettings,
                 host: PluginHost | None = None) -> None:
        host = host or get_host()
        self.loaded = loaded
        self.model = loaded.model
        self.tokenizer = loaded.tokenizer
        self.settings = settings
        spec = self.model.kv_spec
        self.context_len = settings.context_len or spec.context_len
        self.model.set_context_len(self.context_len)  # LongRoPE picks its factors by it
        self.model.compile_decode(compiled_decode_rows(settings))
        bs = settings.kv_block_size
        self.num_blocks = self._pool_blocks(settings)
        self.blocks = BlockManager(self.num_blocks, bs, prefix_cache=settings.enable_prefix_cache)
        self.pool = KVPool(spec, self.num_blocks, bs)
        self.memory_limit = bound_device_memory(step_working_set(
            loaded.description, settings.max_batched_tokens, settings.max_batch_size))
        if self.memory_limit is not None:
            self.model.pace_steps_over(
                paced_step_tokens(loaded.description, settings.max_batched_tokens))
        backend = host.attention_backends.get(resolve_backend(settings.attention_backend))
        self.runner = ModelRunner(self.model, self.pool, self.blocks, backend)
        self.scheduler = Scheduler(
            self.blocks,
            max_batch_size=settings.max_batch_size,
            max_batched_tokens=settings.max_batched_tokens,
            prefill_chunk=settings.prefill_chunk,
        )
        self.sampler = Sampler(host)
        self.stats = EngineStats(kv_blocks_total=self.num_blocks)
        self._requests: dict[str, _RequestState] = {}
        self._aborts: list[str] = []
        self._lock = threading.RLock()
        self._inflight: _InFlight | None = None
        log.info("engine ready", model=loaded.name, kv_blocks=self.num_blocks, block_size=bs,
                 kv_mib=round(self.pool.nbytes / 2**20, 1), backend=backend.name,
                 memory_limit_gib=self.memory_limit and round(self.memory_limit / 2**30, 1))

    def close(self) -> None:
        """Give MLX back the memory limit the engine lowered (`bound_device_memory`)."""
        release_device_memory()

    def _pool_blocks(self, s: EngineSettings) -> int:
        """Blocks from ``kv_cache_memory``, never more than the batch could ever use."""
        per_block = KVPool.bytes_per_block(self.model.kv_spec, s.kv_block_size)
        budget = parse_memory(s.kv_cache_memory, device_memory_bytes())
        by_memory = budget // per_block
        per_seq = -(-self.context_len // s.kv_block_size)
        blocks = min(by_memory, s.max_batch_size * per_seq)
        if blocks < 1:
            raise ConfigError(
                f"invalid setting engine.kv_cache_memory = {s.kv_cache_memory!r}: it holds no "
                f"KV block ({per_block} bytes each for this model)")
        return int(blocks)

    # -- requests -----------------------------------------------------------------------
    def add_request(self, request: GenerationRequest) -> None:
        """Validate and queue *request* (raises `RequestError` naming the parameter)."""
        n_prompt = len(request.prompt_ids)
        if n_prompt == 0:
            raise RequestError("the prompt is empty", param="prompt")
        if n_prompt >= self.context_len:
            raise RequestError(
                f"the prompt has {n_prompt} tokens; this model's context is {self.context_len}"
                " tokens, which must also hold at least one generated token",
                param="prompt", code="context_length_exceeded")
        if request.max_tokens < 1:
            raise RequestError("max_tokens must be at least 1", param="max_tokens")
        if request.n < 1 or request.n > 128:
            raise RequestError("n must be between 1 and 128", param="n")
        if request.n > self.settings.max_batch_size:
            raise RequestError(
                f"n is {request.n}; the engine runs at most {self.settings.max_batch_size}"
                " sequences at once (engine.max_batch_size), and a request's choices run"
                " together", param="n")
        vocab = self.model.vocab_size
        if any(not 0 <= t < vocab for t in request.prompt_ids):
            raise RequestError(f"prompt token ids must be in [0, {vocab})", param="prompt")
        request.sampling.validate()
        request.max_tokens = min(request.max_tokens, self.context_len - n_prompt)
        need = -(-(n_prompt + request.max_tokens) // self.blocks.block_size)
        if need > self.num_blocks:
            raise RequestError(
                f"prompt plus max_tokens needs {need} KV blocks; the pool has {self.num_blocks}"
                " (raise engine.kv_cache_memory or lower max_tokens)", param="max_tokens")
        with self._lock:
            if request.request_id in self._requests:
                raise RequestError(f"request id {request.request_id!r} is already in use",
                                   param="request_id")
            state = _RequestState(request)
            self._requests[request.request_id] = state
            self._new_seq(state, Sequence(request, 0, unforked=request.n - 1))
            self.scheduler.add(state.seqs[0].seq)

    def _new_seq(self, state: _RequestState, seq: Sequence) -> None:
        r = state.request
        seed = r.sampling.seed
        history = SequenceHistory(r.prompt_ids, seed, sample_index=seq.index)
        # completion mode: each token's text as llama.cpp streams it (no clean-up of a
        # whole text's leading space); special tokens are not printed
        detok = StreamingDetokenizer(self.tokenizer, skip_special=True, completion=True)
        state.seqs.append(_SeqState(seq, history, detok, StopStrings(r.stop)))

    def abort(self, request_id: str) -> None:
        """Cancel a request; its blocks are freed at the start of the next step."""
        with self._lock:
            self._aborts.append(request_id)

    def reset_counters(self) -> None:
        """Zero what the stats accumulate, at their sources too (`_update_stats` copies the
        block manager's prefix counts and the scheduler's preemptions at every step), so that
        what follows is counted alone: real requests after a warm-up. Call it between
        requests (the engine idle), as the counters have no lock."""
        self.blocks.stats.prefix_queries = self.blocks.stats.prefix_hits = 0
        self.scheduler.num_preemptions = 0
        self.stats.reset_counters()

    # -- the step -----------------------------------------------------------------------
    # Steps are pipelined: a step's graph is launched (`mx.async_eval`) and left running; the
    # next call plans and launches the following step before the previous one's samples
    # reach the host: sequences that sampled decode their pending token, still on the device,
    # unfinished prompts go on with their next chunk, and waiting requests are admitted into
    # the rest of the budget. Only then are the previous samples brought to the host
    # (detokenize, stop checks), so the host's work overlaps the GPU's. A step that needs the
    # samples first waits for them: penalties read the history, and a pool too full for the
    # plan needs the scheduler's preemption.

    def has_work(self) -> bool:
        with self._lock:
            return (self.scheduler.has_work() or bool(self._aborts)
                    or self._inflight is not None)

    def step(self) -> list[RequestOutput]:
        clock = StepClock()
        with self._lock:
            outputs = self._process_aborts()
        prev, self._inflight = self._inflight, None
        if prev is not None:
            with self._lock:
                ahead = self._schedule_ahead(prev)
            if ahead is not None:
                schedule, rows = ahead
                tokens = None
                if rows:
                    assert prev.sample is not None
                    tokens = prev.sample.tokens
                    if len(rows) != len(prev.pairs):
                        tokens = tokens[mx.array(rows, dtype=mx.int32)]
                with clock.launching(pipelined=True):
                    self._inflight = self._launch(schedule, clock, tokens)
            with clock.waiting():
                outputs += self._resolve(prev)
            if self._inflight is not None:
                self._update_stats(clock)
                return outputs
        with self._lock:
            schedule = self.scheduler.schedule()
        if schedule.seqs:
            with clock.launching():
                self._inflight = self._launch(schedule, clock)
        self._update_stats(clock)
        return outputs

    def _schedule_ahead(self, prev: _InFlight) -> tuple[Schedule, list[int]] | None:
        """The next step, planned while *prev* runs: its schedule (the decodes of pending
        tokens first, marked ``ahead``) and, for each of those decodes, its row of *prev*'s
        draw. None when the plan needs *prev*'s samples (see the comment above `has_work`)."""
        sched = self.scheduler
        rows: list[int] = []
        pending = set()  # sequences whose next token is still on the device (or never comes)
        for k, (state, ss) in enumerate(prev.pairs):
            seq, req = ss.seq, state.request
            pending.add(id(seq))
            if seq.status is not SeqStatus.RUNNING:
                continue  # aborted since
            p = req.sampling
            if p.repetition_penalty != 1 or p.frequency_penalty or p.presence_penalty:
                return None  # penalties read the history, which lacks the pending token
            if (len(seq.output_ids) + 1 >= req.max_tokens
                    or seq.num_tokens + 1 >= self.context_len):
                continue  # the pending token is its last
            rows.append(k)
        # the pending decodes first (their inputs lead the token batch), then the running
        # sequences whose next tokens are on the host: prompt chunks, decodes left out before
        plan: list[tuple[Sequence, int | None]] = [(prev.pairs[k][1].seq, k) for k in rows]
        plan += [(seq, None) for seq in sched.running if id(seq) not in pending]
        schedule = Schedule()
        budget = sched.max_batched_tokens
        for seq, row in plan:
            if budget == 0:
                break
            n = 1 if row is not None else sched.chunk(seq, budget)
            schedule.seqs.append(ScheduledSeq(seq, seq.num_computed, n, ahead=row is not None))
            budget -= n
        # All or nothing: a plan given up halfway would keep the copy-on-write swaps made so
        # far (a table already names its private block) without the copies themselves. The
        # sum counts a block shared by two siblings twice, so it may refuse a plan that
        # would fit; the scheduler then takes the step without the pipelining.
        need = sum(self.blocks.blocks_needed(s.seq.table, s.num_tokens) for s in schedule.seqs)
        if need > self.blocks.num_free:
            return None  # the scheduler will preempt
        for s in schedule.seqs:
            schedule.copies += self.blocks.allocate(s.seq.table, s.num_tokens)
        sched.admit(schedule, budget)
        if not schedule.seqs:
            return None
        # the budget may have stopped the pending decodes early: the rows of those it took
        return schedule, rows[:sum(s.ahead for s in schedule.seqs)]

    def _launch(self, schedule: Schedule, clock: StepClock,
                device_tokens: mx.array | None = None) -> _InFlight:
        """Build the step's forward pass and sampling, start it, account what it computes."""
        result = self.runner.launch(schedule, device_tokens)
        for s in schedule.seqs:
            s.seq.num_computed += s.num_tokens
            prompt_part = max(0, min(s.start + s.num_tokens, len(s.seq.prompt_ids)) - s.start)
            self.stats.prompt_tokens += prompt_part
        with self._lock:
            pairs, logit_rows = self._sampling_rows(schedule, result.rows)
        sample = None
        if pairs:
            # a history is one token behind where the step's input was still on the device
            behind = {id(s.seq) for s in schedule.seqs if s.ahead}
            ahead = [1 if id(ss.seq) in behind else 0 for _, ss in pairs]
            logits = result.logits
            if logit_rows != list(range(logits.shape[0])):  # forks, aborts: pick the rows
                logits = logits[mx.array(logit_rows, dtype=mx.int32)]
            sample = self.sampler.launch(
                logits,
                [st.request.sampling for st, _ in pairs], [ss.history for _, ss in pairs],
                ahead=ahead)
            with clock.submitting():
                mx.async_eval(sample.arrays(), self.pool.all_written())
        else:
            # Nothing samples (mid-prompt chunks only): the cache writes alone. The logits
            # have no rows, and on CUDA a kernel launched over nothing fails ("invalid
            # argument"): the engine tests' failure on the H200, and any prompt longer than
            # one chunk alone in a step.
            with clock.submitting():
                mx.async_eval(self.pool.all_written())
        return _InFlight(schedule, pairs, sample)

    def _sampling_rows(
        self, schedule: Schedule, rows: list[int]
    ) -> tuple[list[tuple[_RequestState, _SeqState]], list[int]]:
        """Which sequences sample from which logits row; the first sample of an ``n > 1``
        request forks its siblings, which share the prompt's blocks and the row."""
        pairs: list[tuple[_RequestState, _SeqState]] = []
        logit_rows: list[int] = []
        for r, i in enumerate(rows):
            seq = schedule.seqs[i].seq
            state = self._requests.get(seq.request.request_id)
            if state is None or seq.status is not SeqStatus.RUNNING:
                continue
            ss = next(x for x in state.seqs if x.seq is seq)
            pairs.append((state, ss))
            logit_rows.append(r)
            if seq.unforked:
                for index in range(1, state.request.n):
                    self._new_seq(state, self.scheduler.fork(seq, index))
                    pairs.append((state, state.seqs[-1]))
                    logit_rows.append(r)
        return pairs, logit_rows

    def _resolve(self, done: _InFlight) -> list[RequestOutput]:
        """Bring a step's samples to the host: append, detokenize, check stops, emit."""
        result = done.sample.resolve() if done.sample is not None else None
        now = time.monotonic()
        outputs: list[RequestOutput] = []
        with self._lock:
            # Name newly filled blocks for the prefix cache first: a token appended below
            # may finish its sequence, which hands the blocks back to the pool unnamed.
            for s in done.schedule.seqs:
                seq = s.seq
                if (seq.status is SeqStatus.RUNNING
                        and seq.num_computed // self.blocks.block_size > len(seq.table.hashes)):
                    self.blocks.cache_full_blocks(seq.table, seq.token_ids())
            if result is not None:
                for k, (state, ss) in enumerate(done.pairs):
                    if ss.seq.status is not SeqStatus.RUNNING:
                        continue  # finished or aborted while this step ran: discard
                    logprob = result.logprobs[k]
                    entry = None if logprob is None else TokenLogprob(
                        result.tokens[k], logprob, result.top_logprobs[k] or [])
                    outputs += self._append_token(state, ss, result.tokens[k], entry, now)
        return outputs

    def _process_aborts(self) -> list[RequestOutput]:
        outputs = []
        for rid in self._aborts:
            state = self._requests.pop(rid, None)
            if state is None:
                continue
            for ss in state.seqs:
                if ss.seq.status is not SeqStatus.FINISHED:
                    self.scheduler.finish(ss.seq)
                    outputs.append(self._output(state, ss, [], "", None, FinishReason.ABORT))
            # choices never forked (cancelled before the first sample) finish too: whoever
            # waits for the request counts one finish per choice
            outputs += [RequestOutput(rid, index, [], "", finish_reason=FinishReason.ABORT,
                                      num_prompt_tokens=len(state.request.prompt_ids))
                        for index in range(len(state.seqs), state.request.n)]
            self.stats.observe("finish:abort")
        self._aborts.clear()
        return outputs

    def _append_token(self, state: _RequestState, ss: _SeqState, token: int,
                      logprob: TokenLogprob | None, now: float) -> list[RequestOutput]:
        seq, req = ss.seq, state.request
        seq.output_ids.append(token)
        ss.history.append(token)
        self.stats.generation_tokens += 1
        if seq.first_token_time is None:
            seq.first_token_time = now
            self.stats.observe("ttft", now - req.arrival)
        elif seq.last_token_time is not None:
            self.stats.observe("itl", now - seq.last_token_time)
        seq.last_token_time = now
        finish: FinishReason | None = None
        stop_ids = set(req.stop_token_ids)
        if not req.ignore_eos:
            stop_ids |= self.tokenizer.stop_ids
        if token in stop_ids:  # its own text is not emitted; what was held back is
            text = self._drain(ss)
            finish = FinishReason.STOP
        else:
            text, hit = ss.stops.feed(ss.detok.push(token))
            if hit:
                finish = FinishReason.STOP
            elif len(seq.output_ids) >= req.max_tokens or seq.num_tokens >= self.context_len:
                finish = FinishReason.LENGTH
                text += self._drain(ss)
        if finish is not None:
            self._finish(state, ss, finish, now)
        return [self._output(state, ss, [token], text, logprob, finish)]

    @staticmethod
    def _drain(ss: _SeqState) -> str:
        """Text still held back (partial UTF-8, partial stop-string match) at the end."""
        text, hit = ss.stops.feed(ss.detok.flush())
        return text if hit else text + ss.stops.flush()

    def _finish(self, state: _RequestState, ss: _SeqState, reason: FinishReason,
                now: float) -> None:
        self.scheduler.finish(ss.seq)
        state.finished += 1
        self.stats.observe("e2e", now - state.request.arrival)
        self.stats.observe(f"finish:{reason.value}")
        if state.finished == state.request.n:
            self._requests.pop(state.request.request_id, None)

    def _output(self, state: _RequestState, ss: _SeqState, tokens: list[int], text: str,
                logprob: TokenLogprob | None, finish: FinishReason | None) -> RequestOutput:
        seq = ss.seq
        return RequestOutput(
            request_id=state.request.request_id,
            index=seq.index,
            token_ids=tokens,
            text=text,
            logprobs=[logprob] if logprob is not None else None,
            finish_reason=finish,
            num_prompt_tokens=len(seq.prompt_ids),
            num_cached_tokens=seq.num_cached_tokens,
            num_output_tokens=len(seq.output_ids),
        )

    def _update_stats(self, clock: StepClock) -> None:
        st = self.stats
        st.steps += 1
        if st.step_records is not None and self._inflight is not None:
            st.step_records.append(clock.record(self._inflight.schedule))
        st.running = len(self.scheduler.running)
        st.waiting = len(self.scheduler.waiting)
        st.kv_blocks_used = self.blocks.num_used
        st.kv_blocks_peak = max(st.kv_blocks_peak, st.kv_blocks_used)
        st.preemptions = self.scheduler.num_preemptions
        st.prefix_queries = self.blocks.stats.prefix_queries
        st.prefix_hits = self.blocks.stats.prefix_hits
