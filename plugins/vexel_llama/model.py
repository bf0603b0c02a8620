"""LLaMA 2 (MHA), LLaMA 3 (GQA, llama3 rope scaling through ``rope_freqs``), Mistral (GQA,
optional sliding window). GGUF stores Q/K rows permuted for llama.cpp's interleaved rope."""

from __future__ import annotations

from dataclasses import dataclass

from vexel_core.gguf.reader import GGUFFile
from vexel_core.model.decoder import Block, DecoderLM, assemble, rms_pre_norm_block
from vexel_core.model.layers import Attention, AttentionOptions, GatedMLP, RMSNorm, RoPE
from vexel_core.model.metadata import ArchKeys, DecoderArgs, activation_dtype
from vexel_core.model.weights import Weights
from vexel_core.plugins import PluginHost


@dataclass(frozen=True)
class ModelArgs(DecoderArgs):
    norm_eps: float
    sliding_window: int | None

    @classmethod
    def from_gguf(cls, g: GGUFFile) -> ModelArgs:
        k = ArchKeys(g)
        window = k.get("attention.sliding_window")
        return cls(
            **DecoderArgs.common(k),
            norm_eps=k.float("attention.layer_norm_rms_epsilon", 1e-5),
            sliding_window=int(window) if isinstance(window, int) and window > 0 else None,
        )


class LlamaArchitecture:
    def load(self, gguf: GGUFFile, host: PluginHost) -> DecoderLM:
        a = ModelArgs.from_gguf(gguf)
        dtype = activation_dtype(gguf.tensor("blk.0.attn_q.weight").ggml_type.name)
        w = Weights(gguf, host, dtype)
        if w.has("rope_freqs.weight"):  # llama3 scaling, precomputed per frequency pair
            rope = RoPE.with_factors(a.rope_dims, a.rope_base, w.vector("rope_freqs.weight"),
                                     scale=a.rope_scale)
        else:
            rope = RoPE(a.rope_dims, a.rope_base, interleaved=True, scale=a.rope_scale)
        opts = AttentionOptions(a.heads, a.kv_heads, a.head_dim, window=a.sliding_window)
        blocks: list[Block] = []
        for i in range(a.layers):
            p = f"blk.{i}"
            attn = Attention(i, opts, rope, w.linear(f"{p}.attn_output", a.hidden, a.q_rows),
                             **w.attention_projections(p, a.q_rows, a.kv_rows, a.hidden))
            mlp = GatedMLP(w.linear(f"{p}.ffn_down", a.hidden, a.ffn),
                           **w.gate_up_projections(p, a.ffn, a.hidden))
            blocks.append(rms_pre_norm_block(w, p, attn, mlp, a.norm_eps))
        final_norm = RMSNorm(w.vector("output_norm.weight"), a.norm_eps)
        return assemble(w, a, blocks, final_norm, dtype)
