"""The built-in attention backends: ``sdpa`` and ``paged``.

Both store the step's keys and values into the paged pool, then attend. Decoding sequences
(one new token each, no tree mask) are served together in one batched call over their block
tables; prefill chunks and candidate trees one sequence at a time.

- ``sdpa`` gathers each sequence's blocks and calls MLX's fused
  ``scaled_dot_product_attention`` (a fresh prompt attends to its own keys directly, on the
  fused causal path); with a logit soft-cap, which the fused kernel lacks, it computes the
  same math by hand.
- ``paged`` reads keys and values through the block table: decodes run the CUDA kernel of
  `vexel_core.attention.kernels` where it exists; a fresh prompt without soft-cap or window
  takes the fused causal path as ``sdpa`` does; everything else is the plain-MLX reference
  (scores, soft-cap, mask, softmax, values), which is also the kernel's oracle.
"""

from __future__ import annotations

import mlx.core as mx

from vexel_core.attention import kernels
from vexel_core.attention.base import AttentionBatch, Unrotated
from vexel_core.gpu import kernel_backend

NEG_INF = float("-inf")


def visible(
    q_pos: mx.array, k_len: int, window: int | None, new_mask: mx.array | None = None
) -> mx.array:
    """Bool ``[q, k_len]``: which keys each query sees.

    Key ``j`` is the token at position ``j``. A query at position p sees ``j <= p`` and, with
    a window, ``j > p - window``. With *new_mask* (``[q, q]``, tree verification) the last q
    keys — this step's tokens — are visible exactly where the mask says.
    """
    j = mx.arange(k_len, dtype=mx.int32)[None, :]
    p = q_pos[:, None]
    vis = j <= p
    if window is not None:
        vis = vis & (j > p - window)
    if new_mask is not None:
        q = new_mask.shape[0]
        vis = mx.concatenate([vis[:, : k_len - q], new_mask.astype(mx.bool_)], axis=1)
    return vis


def attend_by_hand(
    q: mx.array, k: mx.array, v: mx.array, mask: mx.array | str, scale: float,
    softcap: float | None,
) -> mx.array:
    """Reference attention. ``q[B, Hq, Lq, D]``, ``k``/``v`` ``[B, Hkv, Lk, D]``, bool mask
    broadcastable to ``[B, 1, Lq, Lk]`` -> ``[B, Hq, Lq, D]`` (GQA without repeating K/V)."""
    B, Hq, Lq, D = q.shape
    Hkv = k.shape[1]
    if isinstance(mask, str):  # "causal" over keys that end with the queries
        Lk = k.shape[2]
        mask = (mx.arange(Lk)[None, :] <= mx.arange(Lk - Lq, Lk)[:, None])[None, None]
    rep = Hq // Hkv
    qg = (q * scale).reshape(B, Hkv, rep, Lq, D).astype(mx.float32)
    scores = qg @ k[:, :, None].astype(mx.float32).swapaxes(-1, -2)  # [B, Hkv, rep, Lq, Lk]
    if softcap is not None:
        scores = softcap * mx.tanh(scores / softcap)
    scores = mx.where(mask[:, :, None] if mask.ndim == 4 else mask, scores, NEG_INF)
    probs = mx.softmax(scores, axis=-1)
    out = probs @ v[:, :, None].astype(mx.float32)
    return out.reshape(B, Hq, Lq, D).astype(q.dtype)


class _PagedAttention:
    """What both backends share: cache writes, batching decodes, the per-sequence loop."""

    name = "base"

    def core(
        self, q: mx.array, k: mx.array, v: mx.array, mask: mx.array | str, scale: float,
        softcap: float | None,
    ) -> mx.array:
        """Attention proper; *mask* is a bool array, or "causal" (only for backends that
        set `direct_prefill`)."""
        raise NotImplementedError

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
        pool = batch.pool
        fused = self._decode_writing(q, k, v, layer, batch, scale, softcap, window, unrotated)
        if fused is not None:
            return fused
        pool.write(layer, batch.slot_mapping, k, v)
        plan = batch.plan()
        parts: list[tuple[list[int], mx.array]] = []
        if plan.decode_rows:
            parts.append((plan.decode_rows, self._decode(q, layer, batch, scale, softcap, window)))
        for s in plan.prefill_seqs:
            parts.append(self._one_sequence(q, k, v, layer, batch, s, scale, softcap, window))
        rows = [r for rs, _ in parts for r in rs]
        out = parts[0][1] if len(parts) == 1 else mx.concatenate([o for _, o in parts], axis=0)
        if rows != list(range(q.shape[0])):  # usually in order: decodes come first
            out = out[mx.argsort(mx.array(rows, dtype=mx.int32))]
        if self.direct_prefill and plan.prefill_seqs:
            # Fresh prompts read this step's k/v, not the pool, so nothing in the layer needs
            # the cache write: it would wait for the end of the step, every layer's k/v held
            # until then (peak of one 16 x 512-token prefill step on the CPU: 468 MB, 388 MB
            # with the write tied to its layer).
            out = mx.depends(out, pool.written(layer))
        return out

    def _decode_writing(
        self, q: mx.array, k: mx.array, v: mx.array, layer: int, batch: AttentionBatch,
        scale: float, softcap: float | None, window: int | None, unrotated: Unrotated | None,
    ) -> mx.array | None:
        """The output of a step in which every sequence decodes, with the cache write (and,
        given *unrotated*, the rotation of q and k) done by the attention kernel itself (one
        launch instead of three), where a backend has such a kernel; None: write, then
        attend."""
        return None

    # A fresh prompt (nothing cached before it) may attend to this step's k/v directly
    # instead of reading them back through the block table.
    direct_prefill = False

    def _fresh_causal(self, q: mx.array, k: mx.array, v: mx.array, scale: float) -> mx.array:
        """A fresh prompt's attention on the fused causal kernel, ``[n, H, D]`` each. Rows are
        padded at the end to `bucket_length`: causal masking hides the padding from every
        real query, and the padded queries' outputs are dropped."""
        n = q.shape[0]
        pad = bucket_length(n) - n
        q, k, v = (_pad_rows(a, pad) for a in (q, k, v))
        return self._core_rows(q, k, v, "causal", scale, None, n)

    def _core_rows(
        self, q: mx.array, k: mx.array, v: mx.array, mask: mx.array | str, scale: float,
        softcap: float | None, n: int,
    ) -> mx.array:
        """`core` for one sequence's rows (``[L, H, D]`` each): the first *n* output rows."""
        out = self.core(q.swapaxes(0, 1)[None], k.swapaxes(0, 1)[None], v.swapaxes(0, 1)[None],
                        mask, scale, softcap)
        return out[0, :, :n].swapaxes(0, 1)

    def _decode(
        self, q: mx.array, layer: int, batch: AttentionBatch, scale: float,
        softcap: float | None, window: int | None,
    ) -> mx.array:
        plan = batch.plan()
        keys, values = batch.pool.gather(layer, plan.decode_tables)  # [B, L, Hkv, D]
        mask = plan.memo(("decode", window), lambda: _decode_mask(plan.decode_ctx,
                                                                  keys.shape[1], window))
        if len(plan.decode_rows) != q.shape[0]:
            q = q[plan.memo("decode_rows", lambda: mx.array(plan.decode_rows, dtype=mx.int32))]
        out = self.core(q[:, :, None, :], keys.swapaxes(1, 2), values.swapaxes(1, 2),
                        mask, scale, softcap)
        return out[:, :, 0, :]

    def _one_sequence(
        self, q: mx.array, k: mx.array, v: mx.array, layer: int, batch: AttentionBatch,
        s: int, scale: float, softcap: float | None, window: int | None,
    ) -> tuple[list[int], mx.array]:
        """One prefill chunk or candidate tree. Queries and keys are padded at the end to
        `bucket_length` (except under a tree mask, which covers the step's last keys): the
        mask hides padded keys from every real query, padded queries copy the last real
        query's position, and their outputs are dropped."""
        plan = batch.plan()
        start = batch.query_starts[s]
        n = batch.query_lens[s]
        ctx = batch.context_lens[s]
        tree = batch.query_masks[s] if s < len(batch.query_masks) else None
        rows = slice(start, start + n)
        if self.direct_prefill and ctx == n and tree is None:
            keys, values = k[rows], v[rows]
            if window is None and softcap is None:
                return list(range(start, start + n)), self._fresh_causal(
                    q[rows], keys, values, scale)
        else:
            nb = -(-ctx // batch.pool.block_size)
            keys, values = batch.pool.gather(layer, batch.block_tables[s : s + 1, :nb])
            keys, values = keys[0, :ctx], values[0, :ctx]
        pad_q = pad_k = 0
        if tree is None:
            pad_q, pad_k = bucket_length(n) - n, bucket_length(ctx) - ctx

        def build_mask() -> mx.array:
            pos = batch.positions[rows]
            if pad_q:
                pos = mx.concatenate([pos, mx.repeat(pos[-1:], pad_q)])
            return visible(pos, ctx + pad_k, window, tree)[None, None]

        mask = plan.memo(("seq", s, window), build_mask)
        qs = _pad_rows(q[rows], pad_q)
        keys, values = _pad_rows(keys, pad_k), _pad_rows(values, pad_k)
        return list(range(start, start + n)), self._core_rows(qs, keys, values, mask, scale,
                                                              softcap, n)


def _pad_rows(a: mx.array, pad: int) -> mx.array:
    """*a* ``[L, H, D]`` with *pad* rows of zeros appended."""
    return mx.pad(a, [(0, pad), (0, 0), (0, 0)]) if pad else a


def bucket_length(n: int) -> int:
    """*n* rounded up to one of four lengths per octave, at least 64: the fused attention
    kernel builds a plan for every new shape on CUDA (cuDNN: 40 ms, some 650 ms, on the
    H200), so prompts of any length share a few dozen shapes, for at most 25% more rows."""
    step = max(64, 1 << max(0, n.bit_length() - 3))
    return -(-n // step) * step


def bucket_representatives(longest: int) -> list[int]:
    """One length of each `bucket_length` that lengths 1..*longest* reach (the bucket
    itself, or *longest* where the bucket is longer): prompts of these lengths build every
    fused-attention plan that fresh chunks of at most *longest* tokens will need."""
    buckets = sorted({bucket_length(n) for n in range(1, longest + 1)})
    return [min(b, longest) for b in buckets]


def _decode_mask(ctx: mx.array, length: int, window: int | None) -> mx.array:
    """``[B, 1, 1, L]``: slot j of a decoding sequence holds a key it sees."""
    j = mx.arange(length, dtype=mx.int32)[None, :]
    mask = j < ctx[:, None]
    if window is not None:
        mask = mask & (j >= ctx[:, None] - window)
    return mask[:, None, None, :]


class SDPABackend(_PagedAttention):
    name = "sdpa"
    direct_prefill = True

    def core(self, q, k, v, mask, scale, softcap):  # type: ignore[no-untyped-def]
        if softcap is not None:  # the fused kernel has no soft-cap
            return attend_by_hand(q, k, v, mask, scale, softcap)
        return mx.fast.scaled_dot_product_attention(q, k, v, scale=scale, mask=mask)


class PagedBackend(_PagedAttention):
    """Decodes read keys and values through the block table: a GPU kernel where one exists
    (`vexel_core.attention.kernels`), else the reference. A fresh prompt without soft-cap or
    window attends to its own keys with MLX's fused causal attention, as `sdpa` does (the
    reference computes a float32 score matrix per sequence and layer, several times slower on
    a GPU); cached prefixes, soft-caps, windows and trees take the reference path. (MLX's
    fused attention with a mask array costs ~1 s per new shape on the H200: tried for those
    chunks, it slowed the benchmark's prefill; notes/engine-gpu.md, session 4.)"""

    name = "paged"
    direct_prefill = True

    def core(self, q, k, v, mask, scale, softcap):  # type: ignore[no-untyped-def]
        if isinstance(mask, str):  # "causal": only a fresh prompt without soft-cap
            return mx.fast.scaled_dot_product_attention(q, k, v, scale=scale, mask=mask)
        return attend_by_hand(q, k, v, mask, scale, softcap)

    @staticmethod
    def _kernel_backend(q: mx.array, batch: AttentionBatch, layer: int) -> str | None:
        """The GPU backend whose paged decode kernel takes these heads (every variant it may
        launch compiled on first use), or None: the reference path."""
        backend, pool = kernel_backend(), batch.pool
        rep = q.shape[1] // pool.k[layer].shape[1]
        if backend is None or not kernels.supports(q.shape[-1], rep, q.dtype, backend=backend):
            return None
        kernels.compile_variants(q.shape[-1], rep, q.dtype, pool.block_size, backend)  # once
        return backend

    def _decode_writing(
        self, q: mx.array, k: mx.array, v: mx.array, layer: int, batch: AttentionBatch,
        scale: float, softcap: float | None, window: int | None, unrotated: Unrotated | None,
    ) -> mx.array | None:
        pool, plan = batch.pool, batch.plan()
        if (not pool.in_place or plan.prefill_seqs or len(plan.decode_rows) != q.shape[0]
                or not (q.dtype == k.dtype == v.dtype == pool.k[layer].dtype)):
            return None
        backend = self._kernel_backend(q, batch, layer)
        if backend is None:
            return None
        new_k: mx.array | None = k
        new_v: mx.array | None = v
        rotation, packed = None, False
        if unrotated is not None:  # the kernel rotates: the rotated q and k stay uncomputed
            q, new_k, rotation, heads = unrotated
            if heads is not None:  # and reads the heads where the projection left them
                q, new_k, new_v, packed = heads, None, None, True
        out, token = kernels.paged_decode_writing(
            q, new_k, new_v, batch.slot_mapping, pool.k[layer], pool.v[layer],
            plan.decode_tables, plan.decode_ctx, block_size=pool.block_size, scale=scale,
            softcap=softcap, window=window, backend=backend, max_context=plan.decode_max_ctx,
            after=pool.read_token(layer), rotation=rotation, packed=packed)
        pool.wrote(layer, token)
        return out

    def _decode(
        self, q: mx.array, layer: int, batch: AttentionBatch, scale: float,
        softcap: float | None, window: int | None,
    ) -> mx.array:
        backend = self._kernel_backend(q, batch, layer)
        if backend is None:
            return super()._decode(q, layer, batch, scale, softcap, window)
        pool, plan = batch.pool, batch.plan()
        if len(plan.decode_rows) != q.shape[0]:
            q = q[plan.memo("decode_rows", lambda: mx.array(plan.decode_rows, dtype=mx.int32))]
        return kernels.paged_decode(
            q, pool.k[layer], pool.v[layer], plan.decode_tables, plan.decode_ctx,
            block_size=pool.block_size, scale=scale, softcap=softcap, window=window,
            backend=backend, max_context=plan.decode_max_ctx, after=pool.read_token(layer))


BACKENDS = [SDPABackend(), PagedBackend()]
