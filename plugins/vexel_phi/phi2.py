"""Phi-2 (GGUF ``general.architecture = "phi2"``), as llama.cpp runs it.

One LayerNorm (with bias) feeds attention and the GELU MLP in parallel; Q, K and V come fused
in ``attn_qkv`` with a bias; rotary embedding on the first ``rope.dimension_count`` features of
each head only (NeoX style); the output projection has a bias.
"""

from __future__ import annotations

from dataclasses import dataclass

from vexel_core.gguf.reader import GGUFFile
from vexel_core.model.decoder import Block, DecoderLM, ParallelBlock, assemble
from vexel_core.model.layers import MLP, Attention, AttentionOptions, LayerNorm, RoPE, gelu_tanh
from vexel_core.model.metadata import ArchKeys, DecoderArgs, activation_dtype
from vexel_core.model.weights import Weights
from vexel_core.plugins import PluginHost


@dataclass(frozen=True)
class ModelArgs(DecoderArgs):
    norm_eps: float

    @classmethod
    def from_gguf(cls, g: GGUFFile) -> ModelArgs:
        k = ArchKeys(g)
        return cls(**DecoderArgs.common(k), norm_eps=k.float("attention.layer_norm_epsilon"))


class Phi2Architecture:
    def load(self, gguf: GGUFFile, host: PluginHost) -> DecoderLM:
        a = ModelArgs.from_gguf(gguf)
        dtype = activation_dtype(gguf.tensor("blk.0.ffn_down.weight").ggml_type.name)
        w = Weights(gguf, host, dtype)
        rope = RoPE(a.rope_dims, a.rope_base, interleaved=False, scale=a.rope_scale,
                    attn_factor=a.rope_attn_factor)
        opts = AttentionOptions(a.heads, a.kv_heads, a.head_dim)
        q_rows, kv_rows = a.q_rows, a.kv_rows
        blocks: list[Block] = []
        for i in range(a.layers):
            p = f"blk.{i}"
            attn = Attention(i, opts, rope, w.linear(f"{p}.attn_output", a.hidden, q_rows),
                             **w.attention_projections(p, q_rows, kv_rows, a.hidden))
            mlp = MLP(w.linear(f"{p}.ffn_up", a.ffn, a.hidden),
                      w.linear(f"{p}.ffn_down", a.hidden, a.ffn), act=gelu_tanh)
            norm = LayerNorm(w.vector(f"{p}.attn_norm.weight"),
                             w.optional_vector(f"{p}.attn_norm.bias"), a.norm_eps)
            blocks.append(ParallelBlock(norm, attn, mlp))
        final_norm = LayerNorm(w.vector("output_norm.weight"),
                               w.optional_vector("output_norm.bias"), a.norm_eps)
        return assemble(w, a, blocks, final_norm, dtype)
