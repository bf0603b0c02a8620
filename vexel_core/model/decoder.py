"""The decoder-only transformer every built-in architecture is an instance of.

Architectures differ in how a block combines attention and MLP (pre-norm, parallel,
sandwich norms) and in details (embedding scale, final soft-cap); those are options and
small block classes here, so an architecture file only reads its metadata and tensors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mlx.core as mx
import mlx.nn as nn

from vexel_core.attention.base import AttentionBatch
from vexel_core.model.architecture import CausalLM, KVSpec
from vexel_core.model.layers import LongRoPE, RMSNorm, softcap
from vexel_core.model.linear import Embedding, Linear
from vexel_core.model.metadata import DecoderArgs
from vexel_core.model.weights import Weights


class PreNormBlock(nn.Module):
    """``h = x + attn(norm1(x)); out = h + mlp(norm2(h))`` (LLaMA, Mistral, Phi-3).

    With ``post_attn_norm``/``post_mlp_norm`` it is Gemma 2's sandwich: each sub-layer's
    output is normalised again before the residual add.
    """

    def __init__(self, attn_norm: nn.Module, attn: nn.Module, mlp_norm: nn.Module,
                 mlp: nn.Module, post_attn_norm: nn.Module | None = None,
                 post_mlp_norm: nn.Module | None = None) -> None:
        super().__init__()
        self.attn_norm, self.attn, self.mlp_norm, self.mlp = attn_norm, attn, mlp_norm, mlp
        self.post_attn_norm, self.post_mlp_norm = post_attn_norm, post_mlp_norm

    def __call__(self, x: mx.array, batch: AttentionBatch) -> mx.array:
        a = self.attn(self.attn_norm(x), batch)
        if self.post_attn_norm is not None:
            a = self.post_attn_norm(a)
        h = x + a
        m = self.mlp(self.mlp_norm(h))
        if self.post_mlp_norm is not None:
            m = self.post_mlp_norm(m)
        return h + m


class ParallelBlock(nn.Module):
    """``out = x + attn(norm(x)) + mlp(norm(x))`` (Phi-2)."""

    def __init__(self, norm: nn.Module, attn: nn.Module, mlp: nn.Module) -> None:
        super().__init__()
        self.norm, self.attn, self.mlp = norm, attn, mlp

    def __call__(self, x: mx.array, batch: AttentionBatch) -> mx.array:
        h = self.norm(x)
        return x + self.attn(h, batch) + self.mlp(h)


class DecoderLM(CausalLM):
    def __init__(
        self,
        *,
        embed: Embedding,
        blocks: list[nn.Module],
        norm: nn.Module,
        head: Linear,
        kv_spec: KVSpec,
        vocab_size: int,
        dtype: mx.Dtype,
        embed_scale: float | None = None,
        final_softcap: float | None = None,
        context_dependent: Sequence[LongRoPE] = (),
    ) -> None:
        super().__init__()
        self.embed, self.blocks, self.norm, self.head = embed, blocks, norm, head
        self.kv_spec = kv_spec
        self.vocab_size = vocab_size
        self.dtype = dtype
        self.embed_scale = embed_scale
        self.final_softcap = final_softcap
        self.context_dependent = list(context_dependent)  # told the engine's context length

    def set_context_len(self, n: int) -> None:
        for layer in self.context_dependent:
            layer.set_context_len(n)

    def __call__(self, tokens: mx.array, batch: AttentionBatch) -> mx.array:
        x = self.embed(tokens).astype(self.dtype)
        if self.embed_scale is not None:
            # llama.cpp scales in the activation type; round the factor the same way
            x = x * mx.array(self.embed_scale, dtype=self.dtype)
        for block in self.blocks:
            x = block(x, batch)
        x = self.norm(x if batch.logits_rows is None else x[batch.logits_rows])
        logits = self.head(x).astype(mx.float32)
        if self.final_softcap is not None:
            logits = softcap(logits, self.final_softcap)
        return logits


def rms_pre_norm_block(w: Weights, prefix: str, attn: nn.Module, mlp: nn.Module,
                       eps: float) -> PreNormBlock:
    """The LLaMA-family block: RMS norms ``attn_norm`` and ``ffn_norm`` before each part."""
    return PreNormBlock(RMSNorm(w.vector(f"{prefix}.attn_norm.weight"), eps), attn,
                        RMSNorm(w.vector(f"{prefix}.ffn_norm.weight"), eps), mlp)


def assemble(w: Weights, a: DecoderArgs, blocks: list[nn.Module], norm: nn.Module,
             dtype: mx.Dtype, **options: Any) -> DecoderLM:
    """The model around *blocks*: token table, final *norm*, output projection (the file's
    ``output``, else the tied table) and the KV cache's shape. *options* go to `DecoderLM`."""
    embed, head = w.embedding_and_head(a.vocab_size, a.hidden)
    return DecoderLM(
        embed=embed, blocks=blocks, norm=norm, head=head,
        kv_spec=KVSpec(a.layers, a.kv_heads, a.head_dim, a.context_len, dtype),
        vocab_size=a.vocab_size, dtype=dtype, **options)
