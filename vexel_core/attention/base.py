"""The attention contract: one metadata object per engine step, one backend call per layer.

The engine flattens every scheduled sequence's new tokens into one batch ``[T]``. For each
layer the model computes ``q[T, Hq, D]``, ``k[T, Hkv, D]``, ``v[T, Hkv, D]`` (rotary
applied; unrotated too, for a kernel that rotates as it reads) and calls the backend, which
writes ``k``/``v`` into the paged cache at ``batch.slot_mapping`` and returns
``out[T, Hq, D]``: each token attends to its sequence's cached tokens and to the new tokens
before it — or, when ``batch.query_masks`` gives one, to the new tokens that mask allows
(speculative tree verification: each candidate sees only its ancestors). Soft-cap and sliding
window are per call, since they vary per layer (Gemma 2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, Protocol

import mlx.core as mx

if TYPE_CHECKING:
    from vexel_core.kvcache.pool import KVPool


@dataclass
class AttentionBatch:
    """Everything a backend needs for one step, built once by the model runner.

    Host-side lists (``query_lens``, ``context_lens``) let backends plan without reading
    device arrays back.
    """

    pool: KVPool
    backend: AttentionBackend
    positions: mx.array  # [T] int32: position of each token within its sequence
    slot_mapping: mx.array  # [T] int32: flat cache slot (block * block_size + offset)
    block_tables: mx.array  # [B, width] int32, padded with 0 (the engine's: `table_width`)
    query_lens: list[int]  # new tokens per sequence; sum == T
    context_lens: list[int]  # tokens each sequence attends to after this step (cached + new)
    logits_rows: mx.array | None  # [R] int32: rows of the flat batch whose logits are
    # wanted; None when every row is (decoding: one token per sequence)
    query_masks: list[mx.array | None] = field(default_factory=list)
    """Per sequence, an optional bool ``[q, q]`` mask among its new tokens (tree decoding);
    empty or None means causal."""
    context_array: mx.array | None = None
    """``context_lens`` as a device array ``[B]`` int32, when the runner made one (a view of
    its one array a step: `ModelRunner.build_batch`); None: made from the list when needed."""

    _plan: StepPlan | None = None

    def plan(self) -> StepPlan:
        """How backends split this step: batched decodes vs one-by-one sequences (cached)."""
        if self._plan is None:
            self._plan = StepPlan.build(self)
        return self._plan

    @property
    def num_seqs(self) -> int:
        return len(self.query_lens)

    @property
    def query_starts(self) -> list[int]:
        starts = [0]
        for n in self.query_lens:
            starts.append(starts[-1] + n)
        return starts


@dataclass
class StepPlan:
    decode_rows: list[int]  # flat rows of single-token, untreed sequences
    decode_tables: mx.array  # [B_decode, nb] their block tables, cut to the longest
    decode_ctx: mx.array  # [B_decode] their context lengths
    prefill_seqs: list[int]  # sequences attended one at a time
    decode_max_ctx: int = 0  # the longest decoding context (host-side)
    _memo: dict[object, mx.array] = field(default_factory=dict)

    def memo(self, key: object, make: Callable[[], mx.array]) -> mx.array:
        """Arrays every layer needs (masks, row indices), built once per step."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    @staticmethod
    def build(batch: AttentionBatch) -> StepPlan:
        starts = batch.query_starts
        decode: list[int] = []
        others: list[int] = []
        for s, n in enumerate(batch.query_lens):
            treed = s < len(batch.query_masks) and batch.query_masks[s] is not None
            (decode if n == 1 and not treed else others).append(s)
        bs = batch.pool.block_size
        nb = max((-(-batch.context_lens[s] // bs) for s in decode), default=0)
        tables = batch.block_tables
        if not decode:
            tables = mx.zeros((0, 1), dtype=mx.int32)
        elif decode != list(range(batch.num_seqs)):  # (when every sequence decodes: no gather)
            tables = tables[mx.array(decode, dtype=mx.int32), :nb]
        elif tables.shape[1] != nb:
            tables = tables[:, :nb]
        lens = [batch.context_lens[s] for s in decode]
        ctx = (batch.context_array if batch.context_array is not None and not others
               else mx.array(lens, dtype=mx.int32))
        return StepPlan([starts[s] for s in decode], tables, ctx, others, max(lens, default=0))


def table_width(blocks: int) -> int:
    """The width of a step's block tables for sequences of at most *blocks* blocks: a power of
    two, padded with block 0 (never read: the context lengths bound every read), so that a
    compiled decode step (`DecoderLM`), whose trace fixes the tables' shape, traces once per
    doubling of the context instead of once per block."""
    return 1 << max(0, blocks - 1).bit_length()


class Rotation(NamedTuple):
    """A rotary embedding as a kernel applies it, element by element: the first *dims*
    features of each head turn (adjacent pairs if *interleaved*, else the two halves) by
    angles ``position * scale * inv_freq[pair]``, then scale by *attn_factor*."""

    dims: int
    interleaved: bool
    scale: float
    attn_factor: float
    inv_freq: mx.array  # [dims / 2] float32, evaluated (a constant of every launch)


class Unrotated(NamedTuple):
    """A step's q and k before their rotary embedding, and the embedding (`Rotation`).

    *heads*: where the projection is fused, the array that q, k and v are slices of,
    ``[T, Hq + 2 Hkv, D]`` (q's heads, k's, v's), for a kernel that reads them where they
    lie: each slice is one more array for MLX to build and submit in every step, five a
    layer."""

    q: mx.array
    k: mx.array
    rotation: Rotation
    heads: mx.array | None = None


class AttentionBackend(Protocol):
    """Registered by ``register_attention_backends``; chosen by ``engine.attention_backend``."""

    name: str

    def __call__(
        self,
        q: mx.array,
        k: mx.array,
        v: mx.array,
        *,
        layer: int,
        batch: AttentionBatch,
        scale: float,
        softcap: float | None = None,
        window: int | None = None,
        unrotated: Unrotated | None = None,
    ) -> mx.array:
        """Write ``k``/``v`` to the cache, return attention output ``[T, Hq, D]``.

        *unrotated*: q and k before their rotation, for a kernel that rotates as it reads
        them. MLX computes only what is used: a backend that takes these leaves q and k,
        built lazily, uncomputed.

        *window*: a token at position p sees keys at positions > p - window (llama.cpp's
        sliding-window rule). *softcap*: scores become ``softcap * tanh(scores / softcap)``
        before the softmax.
        """
        ...
