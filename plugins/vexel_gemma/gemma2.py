"""Gemma 2 (GGUF ``general.architecture = "gemma2"``), as llama.cpp runs it.

Embeddings scaled by √hidden; RMSNorm before and after both attention and the GeGLU MLP (the
GGUF converter already folded Gemma's ``1 + w`` into the weights); attention logits soft-capped
(``attn_logit_softcapping``, default 50) and final logits too (``final_logit_softcapping``,
default 30); sliding-window attention on some layers; the output projection is the token table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from vexel_core.errors import GGUFError
from vexel_core.gguf.reader import GGUFFile
from vexel_core.model.architecture import KVSpec
from vexel_core.model.decoder import Block, DecoderLM, PreNormBlock
from vexel_core.model.layers import (
    Attention,
    AttentionOptions,
    GatedMLP,
    RMSNorm,
    RoPE,
    gelu_tanh,
)
from vexel_core.model.metadata import ArchKeys, DecoderArgs, activation_dtype
from vexel_core.model.weights import Weights
from vexel_core.plugins import PluginHost

GEMMA2_27B_LAYERS = 46


@dataclass(frozen=True)
class ModelArgs(DecoderArgs):
    query_scale: float
    rope_base_swa: float  # sliding layers may rotate with another base (rope.freq_base_swa)
    norm_eps: float
    attn_softcap: float
    final_softcap: float
    window: int
    sliding: tuple[bool, ...]  # per layer: does it attend through the window?

    @classmethod
    def from_gguf(cls, g: GGUFFile) -> ModelArgs:
        k = ArchKeys(g)
        c = DecoderArgs.common(k)
        # Gemma 2 scales queries by query_pre_attn_scalar**-0.5, which GGUF does not store:
        # llama.cpp uses hidden / heads for the 27B model (46 layers, where the scalar is
        # 144) and the head size for every other.
        scalar = c["hidden"] // c["heads"] if c["layers"] == GEMMA2_27B_LAYERS else c["head_dim"]
        return cls(
            **c,
            query_scale=1.0 / math.sqrt(scalar),
            rope_base_swa=k.float("rope.freq_base_swa", c["rope_base"]),
            norm_eps=k.float("attention.layer_norm_rms_epsilon"),
            attn_softcap=k.float("attn_logit_softcapping", 50.0),
            final_softcap=k.float("final_logit_softcapping", 30.0),
            window=k.int("attention.sliding_window", 4096),
            sliding=_sliding_layers(k, c["layers"]),
        )


def _sliding_layers(k: ArchKeys, layers: int) -> tuple[bool, ...]:
    """llama.cpp's rule: ``attention.sliding_window_pattern`` as one flag per layer (layers
    past the list attend globally), or as a period n (default 2) where layer i slides unless
    ``i % n == n - 1`` (n = 0: all slide). Gemma 2 thus slides on even layers only."""
    key = "attention.sliding_window_pattern"
    pattern = k.get(key, 2)
    if isinstance(pattern, list):
        if not all(isinstance(flag, (bool, int)) for flag in pattern):
            raise GGUFError(k.gguf.path, f"key {k.arch}.{key}",
                            f"expected one flag per layer, found {pattern!r}")
        flags = tuple(bool(flag) for flag in pattern[:layers])
        return flags + (False,) * (layers - len(flags))
    period = k.int(key, 2)
    return tuple(period == 0 or i % period < period - 1 for i in range(layers))


class Gemma2Architecture:
    def load(self, gguf: GGUFFile, host: PluginHost) -> DecoderLM:
        a = ModelArgs.from_gguf(gguf)
        dtype = activation_dtype(gguf.tensor("blk.0.ffn_down.weight").ggml_type.name)
        w = Weights(gguf, host, dtype)
        q_rows, kv_rows = a.q_rows, a.kv_rows
        blocks: list[Block] = []
        for i in range(a.layers):
            p = f"blk.{i}"
            sliding = a.sliding[i]
            opts = AttentionOptions(a.heads, a.kv_heads, a.head_dim, scale=a.query_scale,
                                    softcap=a.attn_softcap, window=a.window if sliding else None)
            rope = RoPE(a.rope_dims, a.rope_base_swa if sliding else a.rope_base,
                        interleaved=False, scale=a.rope_scale, attn_factor=a.rope_attn_factor)
            attn = Attention(i, opts, rope, w.linear(f"{p}.attn_output", a.hidden, q_rows),
                             **w.attention_projections(p, q_rows, kv_rows, a.hidden))
            mlp = GatedMLP(w.linear(f"{p}.ffn_down", a.hidden, a.ffn),
                           **w.gate_up_projections(p, a.ffn, a.hidden), act=gelu_tanh)
            blocks.append(PreNormBlock(
                self._norm(w, a, f"{p}.attn_norm"), attn,
                self._norm(w, a, f"{p}.ffn_norm"), mlp,
                post_attn_norm=self._norm(w, a, f"{p}.post_attention_norm"),
                post_mlp_norm=self._norm(w, a, f"{p}.post_ffw_norm"),
            ))
        embed = w.embedding("token_embd.weight", a.vocab_size, a.hidden)
        return DecoderLM(
            embed=embed,
            blocks=blocks,
            norm=self._norm(w, a, "output_norm"),
            head=embed.as_linear(),  # llama.cpp always ties Gemma 2's output to the table
            kv_spec=KVSpec(a.layers, a.kv_heads, a.head_dim, a.context_len, dtype),
            vocab_size=a.vocab_size,
            dtype=dtype,
            embed_scale=math.sqrt(a.hidden),
            final_softcap=a.final_softcap,
        )

    @staticmethod
    def _norm(w: Weights, a: ModelArgs, prefix: str) -> RMSNorm:
        return RMSNorm(w.vector(f"{prefix}.weight"), a.norm_eps)
