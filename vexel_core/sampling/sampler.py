"""Picks the next token of every sequence in a batch.

``Sampler(host).sample(logits, params, histories)`` runs the registered processors (see
`vexel_core.sampling.processors` for their order) on the rows that ask for each, then takes
an argmax: plain for greedy rows, after adding Gumbel noise for the others (the Gumbel-max
trick draws exactly from ``softmax(logits)``). Each sampling row's noise comes from its own
key (`SequenceHistory.step_key`), generated for all rows in one vectorised call.

Log-probabilities are those of the *raw* logits — the model's distribution before penalties,
truncation and temperature — as vLLM reports them by default; a greedy row's chosen token
thus gets the model's own probability even when penalties changed the choice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import mlx.core as mx
import numpy as np

from vexel_core.errors import PluginError
from vexel_core.plugins import PluginHost, get_host
from vexel_core.sampling.params import SamplingParams, SequenceHistory
from vexel_core.sampling.processors import LogitsProcessor, SamplingRows

TopLogprobs = list[tuple[int, float]]


@dataclass(frozen=True)
class SampleResult:
    """Per row of the batch: the token chosen, and its log-probabilities when asked."""

    tokens: list[int]
    logprobs: list[float | None]
    """log p(chosen token) under the raw logits; None for rows that did not ask."""
    top_logprobs: list[TopLogprobs | None]
    """The ``params.logprobs`` most likely tokens, most likely first; None when not asked."""


@dataclass
class PendingSample:
    """A launched draw: `tokens` is an unevaluated ``[B]`` array; `resolve` waits for it."""

    tokens: mx.array
    logprob_rows: list[int]
    chosen: mx.array | None
    top_ids: mx.array | None
    top_values: mx.array | None
    params: list[SamplingParams]

    def arrays(self) -> list[mx.array]:
        return [a for a in (self.tokens, self.chosen, self.top_ids, self.top_values)
                if a is not None]

    def resolve(self) -> SampleResult:
        mx.eval(self.arrays())
        return _result(self.tokens, self.logprob_rows, self.chosen, self.top_ids,
                       self.top_values, self.params)


class Sampler:
    """Samples batches with the processors registered as samplers in *host*."""

    def __init__(self, host: PluginHost | None = None) -> None:
        host = host if host is not None else get_host()
        processors = []
        for name in host.samplers:
            entry = host.samplers.entry(name)
            if not isinstance(entry.value, LogitsProcessor):
                raise PluginError(f"sampler {name!r} of plugin {entry.plugin!r} is not a "
                                  "vexel_core.sampling.LogitsProcessor")
            processors.append(entry.value)
        self.processors: list[LogitsProcessor] = sorted(processors,
                                                        key=lambda p: (p.order, p.name))

    def sample(self, logits: mx.array, params: Sequence[SamplingParams],
               histories: Sequence[SequenceHistory]) -> SampleResult:
        """Choose one token per row of ``logits [B, V]``; *params* and *histories* by row.

        Does not change the histories: the caller appends the tokens it keeps.
        """
        return self.launch(logits, params, histories).resolve()

    def launch(self, logits: mx.array, params: Sequence[SamplingParams],
               histories: Sequence[SequenceHistory], *,
               ahead: Sequence[int] | None = None) -> PendingSample:
        """`sample` without waiting: the draw as unevaluated arrays (``.tokens`` can feed the
        next forward pass at once). *ahead*: per row, tokens its history is behind (sampled
        but not appended yet; None: none behind); only the random step key depends on it, so
        rows with penalties, which read the history, must not be launched ahead."""
        if logits.ndim != 2 or not logits.shape[0] == len(params) == len(histories):
            raise ValueError(f"logits {logits.shape} need one row per params ({len(params)}) "
                             f"and history ({len(histories)})")
        raw = logits.astype(mx.float32)
        processed = self.process(raw, params, histories)
        tokens = self._choose(processed, params, histories, ahead)
        logprob_rows = [i for i, p in enumerate(params) if p.logprobs is not None]
        chosen, top_ids, top_values = _logprobs(raw, tokens, logprob_rows, params)
        return PendingSample(tokens, logprob_rows, chosen, top_ids, top_values, list(params))

    def process(self, logits: mx.array, params: Sequence[SamplingParams],
                histories: Sequence[SequenceHistory]) -> mx.array:
        """The logits after the chain, before the draw (``-inf`` for removed tokens).

        Speculative decoding's acceptance rule needs this distribution; `sample` uses it.
        Greedy rows get only the processors they want (the penalties).
        """
        logits = logits.astype(mx.float32)
        for processor in self.processors:
            rows = [i for i, p in enumerate(params) if processor.wants(p)]
            if not rows:
                continue
            selected = SamplingRows([params[i] for i in rows], [histories[i] for i in rows])
            if len(rows) == len(params):
                logits = processor.apply(logits, selected)
            else:
                index = mx.array(rows)
                logits = _replace_rows(logits, index, processor.apply(logits[index], selected))
        return logits

    def _choose(self, logits: mx.array, params: Sequence[SamplingParams],
                histories: Sequence[SequenceHistory],
                ahead: Sequence[int] | None = None) -> mx.array:
        sampling = [i for i, p in enumerate(params) if not p.is_greedy]
        if not sampling:
            return mx.argmax(logits, axis=-1)
        keys = mx.array(np.stack([histories[i].step_key(ahead[i] if ahead else 0)
                                  for i in sampling]))
        noise = _gumbel_rows(logits.shape[-1])(keys)
        if len(sampling) == len(params):
            return mx.argmax(logits + noise, axis=-1)
        index = mx.array(sampling)
        drawn = mx.argmax(logits[index] + noise, axis=-1)
        return _replace_rows(mx.argmax(logits, axis=-1), index, drawn)


@lru_cache(maxsize=8)
def _gumbel_rows(vocab: int) -> Callable[[mx.array], mx.array]:
    """``keys [R, 2] -> noise [R, vocab]``: row r drawn with key r alone, in one call."""
    return mx.vmap(lambda key: mx.random.gumbel((vocab,), key=key))


def _replace_rows(full: mx.array, index: mx.array, rows: mx.array) -> mx.array:
    out = mx.array(full)  # a new array, so the assignment leaves *full* (maybe raw) alone
    out[index] = rows
    return out


def _logprobs(
    raw: mx.array, tokens: mx.array, rows: list[int], params: Sequence[SamplingParams]
) -> tuple[mx.array | None, mx.array | None, mx.array | None]:
    """For the rows that ask: log p(chosen) and the n most likely (ids, log p), sorted."""
    if not rows:
        return None, None, None
    index = mx.array(rows)
    logits = raw[index]
    log_norm = mx.logsumexp(logits, axis=-1, keepdims=True)
    chosen = (mx.take_along_axis(logits, tokens[index][:, None], axis=-1) - log_norm)[:, 0]
    n = min(max(params[i].logprobs or 0 for i in rows), logits.shape[-1])
    if n == 0:
        return chosen, None, None
    top_ids = mx.argpartition(-logits, kth=n - 1, axis=-1)[:, :n]
    top_values = mx.take_along_axis(logits, top_ids, axis=-1) - log_norm
    order = mx.argsort(-top_values, axis=-1)
    return (chosen, mx.take_along_axis(top_ids, order, axis=-1),
            mx.take_along_axis(top_values, order, axis=-1))


def _result(tokens: mx.array, rows: list[int], chosen: mx.array | None,
            top_ids: mx.array | None, top_values: mx.array | None,
            params: Sequence[SamplingParams]) -> SampleResult:
    batch = len(params)
    logprobs: list[float | None] = [None] * batch
    top: list[TopLogprobs | None] = [None] * batch
    chosen_list = _to_list(chosen, rows)
    ids_list = _to_list(top_ids, rows)
    values_list = _to_list(top_values, rows)
    for j, i in enumerate(rows):
        n = params[i].logprobs or 0
        logprobs[i] = chosen_list[j]
        top[i] = list(zip(ids_list[j][:n], values_list[j][:n], strict=True))
    return SampleResult(_to_list(tokens, params), logprobs, top)


def _to_list(values: mx.array | None, rows: Sequence[object]) -> list[Any]:
    """Host copy of a per-row array; empty rows when it was not computed."""
    return np.asarray(values).tolist() if values is not None else [[] for _ in rows]
