"""The steps of the sampling chain, each a `LogitsProcessor` registered as a sampler plugin.

A processor transforms a batch of logits ``[rows, V]`` (float32) with per-row parameters and
returns new logits; a token it removes gets ``-inf``. The `Sampler` runs each processor only
on the rows whose parameters ask for it, in ascending `order`.

The order is llama.cpp's default chain (``penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;
xtc;temperature``) less the steps Vexel does not have::

    penalties (10) -> top_k (20) -> top_p (30) -> min_p (40) -> temperature (50)

Penalties come first because they change which tokens are likely. The truncations run
before the temperature, as in llama.cpp, so ``top_p=0.9`` or ``min_p=0.05`` keep the same
tokens whatever the temperature (vLLM divides by the temperature first, which makes the kept
set depend on it). The temperature then only reshapes what survives. A plugin slots its own
processor in between by its `order`.

Greedy rows (temperature 0) get the penalties only: the truncations always keep the most
likely token, so for an argmax they would cost a sort and change nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import mlx.core as mx
import numpy as np

from vexel_core.sampling.params import SamplingParams, SequenceHistory

NEG_INF = float("-inf")


@dataclass(frozen=True)
class SamplingRows:
    """The rows one processor runs on: their parameters and histories, in row order."""

    params: Sequence[SamplingParams]
    histories: Sequence[SequenceHistory]

    def values(self, field: str) -> mx.array:
        """One parameter of every row, ``[rows]`` float32."""
        return mx.array([float(getattr(p, field)) for p in self.params], dtype=mx.float32)

    def column(self, field: str) -> mx.array:
        """One parameter of every row as ``[rows, 1]``, to broadcast over ``[rows, V]``."""
        return self.values(field)[:, None]


@dataclass(frozen=True)
class LogitsProcessor:
    """One step of the sampling chain; registered through the ``register_samplers`` hook."""

    name: str
    order: int
    """Position in the chain: lower runs first."""
    wants: Callable[[SamplingParams], bool]
    """Whether a row with these parameters needs this step (rows that do not skip it)."""
    apply: Callable[[mx.array, SamplingRows], mx.array]
    """``(logits [rows, V], rows) -> logits [rows, V]`` for the rows that want it."""


def _samples(p: SamplingParams) -> bool:
    return p.temperature > 0


# -- penalties ---------------------------------------------------------------------------------


def _wants_penalties(p: SamplingParams) -> bool:
    return p.repetition_penalty != 1 or p.frequency_penalty != 0 or p.presence_penalty != 0


def _penalize(logits: mx.array, rows: SamplingRows) -> mx.array:
    """Repetition over every token seen; frequency and presence over generated tokens.

    For a token seen ``c`` times in the output (``c`` may be 0 for a prompt-only token)::

        logit = logit / repetition if logit > 0 else logit * repetition
        logit = logit - c * frequency - (c > 0) * presence

    Only the seen tokens are gathered and written back, not whole rows.
    """
    row_ids, token_ids, counts = [], [], []
    for r, history in enumerate(rows.histories):
        ids, generated = history.token_counts()
        row_ids.append(np.full(len(ids), r, np.int32))
        token_ids.append(ids)
        counts.append(generated)
    if sum(len(ids) for ids in token_ids) == 0:
        return logits
    row = mx.array(np.concatenate(row_ids))
    token = mx.array(np.concatenate(token_ids))
    count = mx.array(np.concatenate(counts))
    seen = logits[row, token]
    repetition = rows.values("repetition_penalty")[row]
    seen = mx.where(seen > 0, seen / repetition, seen * repetition)
    seen = (seen - count * rows.values("frequency_penalty")[row]
            - (count > 0) * rows.values("presence_penalty")[row])
    out = mx.array(logits)  # a new array: item assignment must not reach the caller's logits
    out[row, token] = seen
    return out


# -- truncations -------------------------------------------------------------------------------


def _top_k_bound(rows: SamplingRows, vocab: int) -> int:
    """How many tokens per row can still be finite: top_k runs before, so when every row
    set one, only the largest k of the batch need ranking instead of the whole vocabulary."""
    ks = [p.top_k for p in rows.params]
    return vocab if min(ks) == 0 else min(max(ks), vocab)


def _ranked(logits: mx.array, limit: int) -> mx.array:
    """Indices of the *limit* largest logits of each row, largest first."""
    if limit >= logits.shape[-1]:
        return mx.argsort(-logits, axis=-1)
    candidates = mx.argpartition(-logits, kth=limit - 1, axis=-1)[:, :limit]
    order = mx.argsort(-mx.take_along_axis(logits, candidates, axis=-1), axis=-1)
    return mx.take_along_axis(candidates, order, axis=-1)


def _top_k(logits: mx.array, rows: SamplingRows) -> mx.array:
    """Keep exactly k tokens per row (ties at the k-th value are broken arbitrarily)."""
    vocab = logits.shape[-1]
    k = np.minimum([p.top_k for p in rows.params], vocab)
    k_max = int(k.max())
    candidates = _ranked(logits, k_max)
    values = mx.take_along_axis(logits, candidates, axis=-1)
    values = mx.where(mx.arange(k_max)[None, :] < mx.array(k)[:, None], values, NEG_INF)
    return mx.put_along_axis(mx.full(logits.shape, NEG_INF), candidates, values, axis=-1)


def _top_p(logits: mx.array, rows: SamplingRows) -> mx.array:
    """Keep the smallest set of most likely tokens whose probability reaches top_p.

    A token stays when the mass of the tokens ranked above it is still below top_p, so the
    most likely token always stays (llama.cpp's rule, with probabilities at temperature 1).
    """
    order = _ranked(logits, _top_k_bound(rows, logits.shape[-1]))
    probs = mx.softmax(mx.take_along_axis(logits, order, axis=-1), axis=-1)
    keep_sorted = mx.cumsum(probs, axis=-1, inclusive=False) < rows.column("top_p")
    keep = mx.put_along_axis(mx.zeros(logits.shape, mx.bool_), order, keep_sorted, axis=-1)
    return mx.where(keep, logits, NEG_INF)


def _min_p(logits: mx.array, rows: SamplingRows) -> mx.array:
    """Drop tokens with p < min_p * p_max, i.e. logit < max_logit + log(min_p); no sort."""
    floor = mx.max(logits, axis=-1, keepdims=True) + mx.log(rows.column("min_p"))
    return mx.where(logits >= floor, logits, NEG_INF)


def _temperature(logits: mx.array, rows: SamplingRows) -> mx.array:
    return logits / rows.column("temperature")


PROCESSORS: tuple[LogitsProcessor, ...] = (
    LogitsProcessor("penalties", 10, _wants_penalties, _penalize),
    LogitsProcessor("top_k", 20, lambda p: _samples(p) and p.top_k > 0, _top_k),
    LogitsProcessor("top_p", 30, lambda p: _samples(p) and p.top_p < 1, _top_p),
    LogitsProcessor("min_p", 40, lambda p: _samples(p) and p.min_p > 0, _min_p),
    LogitsProcessor("temperature", 50, lambda p: _samples(p) and p.temperature != 1,
                    _temperature),
)
