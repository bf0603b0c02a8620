"""Phi-3 (GGUF ``general.architecture = "phi3"``), as llama.cpp runs it.

LLaMA-like pre-norm blocks (RMSNorm, SwiGLU) with Q, K, V fused in ``attn_qkv`` and gate and up
fused in ``ffn_up`` (gate rows first); NeoX-style rotary embedding, with LongRoPE for the 128k
models: per-pair factors ``rope_factors_short`` / ``rope_factors_long``, chosen by the context
length the engine runs with, and ``rope.scaling.attn_factor`` scaling q and k.

llama.cpp ignores ``attention.sliding_window`` for Phi-3 ("Phi SWA is currently disabled",
llama.cpp PR 13676: the converters write windows that do not match training). We do the same,
so that a file means the same model in both engines, and log it.
"""

from __future__ import annotations

from dataclasses import dataclass

import mlx.core as mx

from vexel_core.errors import GGUFError
from vexel_core.gguf.reader import GGUFFile
from vexel_core.logs import get_logger
from vexel_core.model.decoder import Block, DecoderLM, assemble, rms_pre_norm_block
from vexel_core.model.layers import (
    Attention,
    AttentionOptions,
    GatedMLP,
    LongRoPE,
    RMSNorm,
    RoPE,
)
from vexel_core.model.metadata import ArchKeys, DecoderArgs, activation_dtype
from vexel_core.model.weights import Weights
from vexel_core.plugins import PluginHost

log = get_logger(__name__)


@dataclass(frozen=True)
class ModelArgs(DecoderArgs):
    original_context: int  # LongRoPE switches to the long factors beyond it
    norm_eps: float
    sliding_window: int  # declared by the file; 0 when absent (unused, see module doc)

    @classmethod
    def from_gguf(cls, g: GGUFFile) -> ModelArgs:
        k = ArchKeys(g)
        common = DecoderArgs.common(k)
        return cls(
            **common,
            original_context=k.int("rope.scaling.original_context_length",
                                   common["context_len"]),
            norm_eps=k.float("attention.layer_norm_rms_epsilon"),
            sliding_window=k.int("attention.sliding_window", 0),
        )


class Phi3Architecture:
    def load(self, gguf: GGUFFile, host: PluginHost) -> DecoderLM:
        a = ModelArgs.from_gguf(gguf)
        if a.sliding_window:
            log.info("phi3 sliding window ignored, as llama.cpp does",
                     model=str(gguf.path), sliding_window=a.sliding_window)
        dtype = activation_dtype(gguf.tensor("blk.0.ffn_down.weight").ggml_type.name)
        w = Weights(gguf, host, dtype)
        rope = LongRoPE(_rope(w, a, "rope_factors_short.weight"),
                        _rope(w, a, "rope_factors_long.weight"),
                        a.original_context, a.context_len)
        opts = AttentionOptions(a.heads, a.kv_heads, a.head_dim)
        blocks: list[Block] = []
        for i in range(a.layers):
            p = f"blk.{i}"
            attn = Attention(i, opts, rope, w.linear(f"{p}.attn_output", a.hidden, a.q_rows),
                             **w.attention_projections(p, a.q_rows, a.kv_rows, a.hidden))
            mlp = GatedMLP(w.linear(f"{p}.ffn_down", a.hidden, a.ffn),
                           gate_up=w.linear(f"{p}.ffn_up", 2 * a.ffn, a.hidden))
            blocks.append(rms_pre_norm_block(w, p, attn, mlp, a.norm_eps))
        final_norm = RMSNorm(w.vector("output_norm.weight"), a.norm_eps)
        return assemble(w, a, blocks, final_norm, dtype, context_dependent=[rope])


def _rope(w: Weights, a: ModelArgs, factors: str) -> RoPE:
    """NeoX rope, divided by the per-pair *factors* tensor when the file has it."""
    options = dict(interleaved=False, scale=a.rope_scale, attn_factor=a.rope_attn_factor)
    if not w.has(factors):
        return RoPE(a.rope_dims, a.rope_base, **options)  # type: ignore[arg-type]
    values = w.vector(factors, mx.float32)
    if values.shape != (a.rope_dims // 2,):
        raise GGUFError(w.gguf.path, f"tensor {factors}",
                        f"shape {list(values.shape)} does not match [rope.dimension_count / 2]"
                        f" = [{a.rope_dims // 2}]")
    return RoPE.with_factors(a.rope_dims, a.rope_base, values, **options)
