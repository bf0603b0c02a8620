"""The decoder-only transformer every built-in architecture is an instance of.

Architectures differ in how a block combines attention and MLP (pre-norm, parallel,
sandwich norms) and in details (embedding scale, final soft-cap); those are options and
small block classes here, so an architecture file only reads its metadata and tensors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import mlx.core as mx
import mlx.nn as nn

from vexel_core.attention.base import AttentionBatch, StepPlan
from vexel_core.model.architecture import CausalLM, KVSpec
from vexel_core.model.layers import (
    MLP,
    QKV,
    Attention,
    Delta,
    GatedMLP,
    LongRoPE,
    Norm,
    Product,
    RMSNorm,
    softcap,
)
from vexel_core.model.linear import Embedding, Linear
from vexel_core.model.metadata import DecoderArgs
from vexel_core.model.weights import Weights

Carry = tuple[mx.array, ...]
Stream = tuple[mx.array, Delta]
"""The residual stream between blocks as ``(base, delta)``, its value ``base + delta``: a block
leaves its last residual add to the next norm (`Norm.add`), which on a GPU does the add and
the norm in one launch, or (delta a `Product`, one row on CUDA) in the product's own."""


class Block(nn.Module):
    """A transformer block in two halves around its attention's use of the KV cache: `enter`
    (up to the rotated q, k, v) and `leave` (from the attention's output to the block's).
    Neither touches the cache: each may be compiled apart from the attention (as decode steps
    were until session 22, `benchmarks/ab.py --segment-compile`)."""

    attn: Attention

    def enter(self, x: Stream, positions: mx.array) -> tuple[QKV, Carry]:
        """The attention's inputs for the stream *x* and what `leave` needs besides its
        output."""
        raise NotImplementedError

    def leave(self, carry: Carry, attn: mx.array) -> Stream:
        """The block's output stream from *carry* and the attention's output
        ``[T, Hq, D]``."""
        raise NotImplementedError

    def __call__(self, x: Stream, batch: AttentionBatch) -> Stream:
        qkv, carry = self.enter(x, batch.positions)
        return self.leave(carry, self.attn.attend(qkv, batch))


class PreNormBlock(Block):
    """``h = x + attn(norm1(x)); out = h + mlp(norm2(h))`` (LLaMA, Mistral, Phi-3).

    With ``post_attn_norm``/``post_mlp_norm`` it is Gemma 2's sandwich: each sub-layer's
    output is normalised again before the residual add.
    """

    def __init__(self, attn_norm: Norm, attn: Attention, mlp_norm: Norm,
                 mlp: GatedMLP | MLP, post_attn_norm: nn.Module | None = None,
                 post_mlp_norm: nn.Module | None = None) -> None:
        super().__init__()
        self.attn_norm, self.attn, self.mlp_norm, self.mlp = attn_norm, attn, mlp_norm, mlp
        self.post_attn_norm, self.post_mlp_norm = post_attn_norm, post_mlp_norm

    def enter(self, x: Stream, positions: mx.array) -> tuple[QKV, Carry]:
        h, n = self.attn_norm.add(*x)
        return self.attn.project(n, positions), (h,)

    def leave(self, carry: Carry, attn: mx.array) -> Stream:
        out = self.attn.output(attn)
        a = out if self.post_attn_norm is None else self.post_attn_norm(out.value())
        h, n = self.mlp_norm.add(carry[0], a)
        if self.post_mlp_norm is not None:
            return h, self.post_mlp_norm(self.mlp(n))
        return h, self.mlp.product(n)


class ParallelBlock(Block):
    """``out = x + attn(norm(x)) + mlp(norm(x))`` (Phi-2)."""

    def __init__(self, norm: Norm, attn: Attention, mlp: nn.Module) -> None:
        super().__init__()
        self.norm, self.attn, self.mlp = norm, attn, mlp

    def enter(self, x: Stream, positions: mx.array) -> tuple[QKV, Carry]:
        s, h = self.norm.add(*x)
        return self.attn.project(h, positions), (s, h)

    def leave(self, carry: Carry, attn: mx.array) -> Stream:
        x, h = carry
        return x, self.attn.output(attn).value() + self.mlp(h)  # llama.cpp's order of the adds


class DecoderLM(CausalLM):
    """Token table, blocks, final norm, output projection.

    Decode steps (every sequence one new token, every row sampled) of at most
    `compile_decode`'s rows replay one compiled graph, from the tokens to the logits, the
    attention backend's cache writes and attention included. A step of one request is
    host-bound on a GPU: building its operations in Python costs more than the GPU needs to
    run them; a compiled graph is replayed in C++, with its elementwise operations fused (one
    Q4_0 Llama-3-8B token on the H200: 3.3 ms of Python before, 1.4 ms after compiling all but
    the attention, 145 -> 234 tok/s; notes/engine-gpu.md, sessions 8 and 22). A trace fixes
    the step's shapes and what the backend decides from them on the host: one per row count
    and width of the block tables (`table_width`: powers of two); prefill steps, whose
    lengths vary, stay eager.
    """

    def __init__(
        self,
        *,
        embed: Embedding,
        blocks: Sequence[Block],
        norm: Norm,
        head: Linear,
        kv_spec: KVSpec,
        vocab_size: int,
        dtype: mx.Dtype,
        embed_scale: float | None = None,
        final_softcap: float | None = None,
        context_dependent: Sequence[LongRoPE] = (),
    ) -> None:
        super().__init__()
        for i, block in enumerate(blocks):
            if not isinstance(block, Block):
                raise TypeError(f"DecoderLM block {i} is a {type(block).__name__}: expected a "
                                "vexel_core.model.decoder.Block (enter/leave around attention)")
        self.embed, self.blocks, self.norm, self.head = embed, list(blocks), norm, head
        self.kv_spec = kv_spec
        self.vocab_size = vocab_size
        self.dtype = dtype
        self.embed_scale = embed_scale
        self.final_softcap = final_softcap
        self.context_dependent = list(context_dependent)  # told the engine's context length
        self.compiled_rows = 0
        self.paced_over: int | None = None
        self._steps: dict[tuple[int, int], Callable[..., Any]] = {}

    def set_context_len(self, n: int) -> None:
        for layer in self.context_dependent:
            layer.set_context_len(n)
        self._steps.clear()  # traced with the rotary factors of before

    def compile_decode(self, max_rows: int) -> None:
        self.compiled_rows = max_rows
        self._steps.clear()

    def pace_steps_over(self, tokens: int | None) -> None:
        self.paced_over = tokens

    def __call__(self, tokens: mx.array, batch: AttentionBatch) -> mx.array:
        if self._replays(tokens, batch):
            return self._decode_compiled(tokens, batch)
        paced = self.paced_over is not None and tokens.shape[0] > self.paced_over
        return self._forward(tokens, batch, paced)

    def _forward(self, tokens: mx.array, batch: AttentionBatch, paced: bool = False) -> mx.array:
        """The step; *paced*: evaluated a layer at a time (`pace_steps_over`; never inside a
        compiled trace)."""
        x: Stream = (self._embed(tokens), None)
        launched: list[mx.array] = []
        for block in self.blocks:
            x = block(x, batch)
            if paced:
                # Launch this layer, then wait for the one before: the GPU always has a layer
                # queued, and the buffers of the layers it has run are freed (MLX keeps a
                # launched operation's inputs until the GPU has run it).
                residual, delta = x
                pending = delta.x if isinstance(delta, Product) else delta
                layer = [residual] + ([] if pending is None else [pending])
                mx.async_eval(*layer)
                if launched:
                    mx.eval(*launched)
                launched = layer
        if batch.logits_rows is not None:
            rows, delta = batch.logits_rows, x[1]
            if isinstance(delta, Product):
                delta = delta.value()
            x = (x[0][rows], None if delta is None else delta[rows])
        return self._logits(x)

    def _embed(self, tokens: mx.array) -> mx.array:
        x = self.embed(tokens, self.dtype)
        if self.embed_scale is not None:
            # llama.cpp scales in the activation type; round the factor the same way
            x = x * mx.array(self.embed_scale, dtype=self.dtype)
        return x

    def _logits(self, x: Stream) -> mx.array:
        logits = self.head(self.norm.add(*x)[1]).astype(mx.float32)
        if self.final_softcap is not None:
            logits = softcap(logits, self.final_softcap)
        return logits

    def _replays(self, tokens: mx.array, batch: AttentionBatch) -> bool:
        return (tokens.shape[0] == batch.num_seqs <= self.compiled_rows
                and batch.logits_rows is None
                and not any(m is not None for m in batch.query_masks))

    def _decode_compiled(self, tokens: mx.array, batch: AttentionBatch) -> mx.array:
        pool, context = batch.pool, batch.context_array
        if context is None:
            context = mx.array(batch.context_lens, dtype=mx.int32)
        key = (tokens.shape[0], batch.block_tables.shape[1])
        if key not in self._steps:
            self._steps[key] = self._compiled_step(batch)
        logits, *state = self._steps[key](tokens, batch.positions, batch.slot_mapping,
                                          batch.block_tables, context, *pool.state())
        pool.adopt(state)
        return logits

    def _compiled_step(self, batch: AttentionBatch) -> Callable[..., Any]:
        """A decode step of *batch*'s rows and table width as one compiled function of the
        step's arrays and the pool's state (`KVPool.replica`), to the logits and the new
        state. The backend plans it as the longest context the tables hold: what it decides
        on the host from that length (the attention kernel's split of the context) must
        serve every step of the trace."""
        pool, backend, rows = batch.pool, batch.backend, batch.num_seqs
        longest = batch.block_tables.shape[1] * pool.block_size

        def step(tokens: mx.array, positions: mx.array, slots: mx.array, tables: mx.array,
                 context: mx.array, *state: mx.array) -> list[mx.array]:
            replica = pool.replica(state)
            traced = AttentionBatch(
                pool=replica, backend=backend, positions=positions, slot_mapping=slots,
                block_tables=tables, query_lens=[1] * rows,
                context_lens=[],  # the step's lengths are `context` (an array) here
                logits_rows=None, context_array=context,
                _plan=StepPlan(list(range(rows)), tables, context, [], longest))
            return [self._forward(tokens, traced), *replica.state()]

        return mx.compile(step)


def rms_pre_norm_block(w: Weights, prefix: str, attn: Attention, mlp: GatedMLP | MLP,
                       eps: float) -> PreNormBlock:
    """The LLaMA-family block: RMS norms ``attn_norm`` and ``ffn_norm`` before each part."""
    return PreNormBlock(RMSNorm(w.vector(f"{prefix}.attn_norm.weight"), eps), attn,
                        RMSNorm(w.vector(f"{prefix}.ffn_norm.weight"), eps), mlp)


def assemble(w: Weights, a: DecoderArgs, blocks: Sequence[Block], norm: Norm,
             dtype: mx.Dtype, **options: Any) -> DecoderLM:
    """The model around *blocks*: token table, final *norm*, output projection (the file's
    ``output``, else the tied table) and the KV cache's shape. *options* go to `DecoderLM`."""
    embed, head = w.embedding_and_head(a.vocab_size, a.hidden)
    return DecoderLM(
        embed=embed, blocks=blocks, norm=norm, head=head,
        kv_spec=KVSpec(a.layers, a.kv_heads, a.head_dim, a.context_len, dtype),
        vocab_size=a.vocab_size, dtype=dtype, **options)
