"""Random-weight Phi-2, Phi-3 and Gemma 2 files, with the quirks of the real models.

Each ``write_*`` writes an F32 file with `vexel_core.gguf.write_gguf`;
`tests.builders.models.convert` turns it into any other type with llama.cpp's quantizer. The
shapes are tiny but keep what makes each architecture itself:

- Phi-2: head size 80 with rotary on 32 features only, fused QKV with a bias, LayerNorm with a
  bias, parallel attention and GELU MLP, an output bias; GPT-2 BPE vocabulary without BOS.
- Phi-3: head size 96, fused QKV and fused gate/up, LongRoPE factor tensors and attention
  factor, optionally a declared sliding window; SentencePiece vocabulary with Phi-3's added
  tokens (``<|endoftext|>`` ... ``<|end|>``), so it may carry a "Phi-3" name (see FACTS.md).
- Gemma 2: head size 256 with GQA (heads × head size ≠ hidden), a sliding window smaller than
  the test prompts, soft-caps that bite, post-norm weights ≈ 4 (so that greedy continuations
  vary although the output is tied to the token table; see FACTS.md).

Weights are scaled so that every quirk matters to the logits: a model that ignored one would
disagree with llama.cpp.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tests.builders.vocab import CONTROL, USER_DEFINED, bpe_vocab, spm_vocab
from vexel_core.gguf import write_gguf


@dataclass(frozen=True)
class Phi2Shape:
    heads: int = 2
    head_dim: int = 80  # llama.cpp derives it as hidden / heads for phi2
    rope_dims: int = 32  # partial rotary: Phi-2's partial_rotary_factor 0.4 of 80
    layers: int = 2
    ffn: int = 512  # a multiple of 256, so ffn_down is a real K-quant in *_K files
    context: int = 2048
    qk_gain: float = 1.5  # scores of a few units: sharper attention amplifies rounding

    @property
    def hidden(self) -> int:
        return self.heads * self.head_dim


@dataclass(frozen=True)
class Phi3Shape:
    heads: int = 2
    kv_heads: int = 1  # Phi-3-medium's GQA; q and kv rows differ inside attn_qkv
    head_dim: int = 96
    layers: int = 2
    ffn: int = 512
    context: int = 1024
    original_context: int = 256  # LongRoPE: the long factors apply to contexts beyond this
    long_rope: bool = True
    sliding_window: int = 0  # written when > 0 (llama.cpp then ignores it, see vexel_phi.phi3)
    rope_base: float = 10000.0
    qk_gain: float = 1.0  # scores of order 1: sharper attention amplifies rounding

    @property
    def hidden(self) -> int:
        return self.heads * self.head_dim


@dataclass(frozen=True)
class Gemma2Shape:
    hidden: int = 256
    heads: int = 2
    kv_heads: int = 1
    head_dim: int = 256
    layers: int = 2  # layer 0 slides, layer 1 attends globally
    ffn: int = 512
    context: int = 512
    sliding_window: int = 8  # smaller than every test prompt
    sliding_pattern: tuple[bool, ...] = ()  # per-layer flags, written when given (else: even)
    attn_softcap: float = 2.0  # (Gemma 2: 50) low enough to bite on smooth attention
    final_softcap: float = 30.0
    qk_gain: float = 1.0  # scores of order 1: sharper attention amplifies rounding
    post_norm: float = 4.0  # ≈ weights of post_attention_norm / post_ffw_norm
    embed_rms: float = 0.3  # of the scaled embeddings: small beside the layers' outputs, or
    #                         the tied output predicts the input token again and again
    output_norm: float = 30.0  # logits of tens, so that the final soft-cap bites


PHI2 = Phi2Shape()
PHI3 = Phi3Shape()
GEMMA2 = Gemma2Shape()


def with_added_tokens(vocab: dict[str, Any], added: list[tuple[str, int]]) -> dict[str, Any]:
    """*vocab* with tokens appended (text, GGUF token type), as a fine-tune's added tokens."""
    out = dict(vocab)
    out["tokenizer.ggml.tokens"] = list(vocab["tokenizer.ggml.tokens"]) + [t for t, _ in added]
    out["tokenizer.ggml.token_type"] = list(vocab["tokenizer.ggml.token_type"]) \
        + [kind for _, kind in added]
    if "tokenizer.ggml.scores" in vocab:
        out["tokenizer.ggml.scores"] = list(vocab["tokenizer.ggml.scores"]) + [0.0] * len(added)
    return out


def phi2_vocab() -> dict[str, Any]:
    """GPT-2 style BPE with ``<|endoftext|>`` as BOS and EOS, no BOS added (as Phi-2)."""
    vocab = bpe_vocab(pre="phi-2", chat_template=None)
    for key in ("tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id",
                "tokenizer.ggml.padding_token_id"):
        vocab.pop(key, None)
    vocab = with_added_tokens(vocab, [("<|endoftext|>", CONTROL)])
    eot = len(vocab["tokenizer.ggml.tokens"]) - 1
    vocab.update({"tokenizer.ggml.bos_token_id": eot, "tokenizer.ggml.eos_token_id": eot,
                  "tokenizer.ggml.add_bos_token": False})
    return vocab


PHI3_ADDED = ("<|endoftext|>", "<|assistant|>", "<|placeholder1|>", "<|placeholder2|>",
              "<|placeholder3|>", "<|placeholder4|>", "<|system|>", "<|end|>", "<|user|>")


def phi3_vocab() -> dict[str, Any]:
    """SentencePiece with Phi-3's added tokens after the pieces; EOS ``<|endoftext|>``,
    EOT ``<|end|>``."""
    vocab = with_added_tokens(spm_vocab(), [(t, CONTROL if t == "<|endoftext|>" else USER_DEFINED)
                                            for t in PHI3_ADDED])
    first = len(vocab["tokenizer.ggml.tokens"]) - len(PHI3_ADDED)
    vocab["tokenizer.ggml.eos_token_id"] = first
    vocab["tokenizer.ggml.eot_token_id"] = first + PHI3_ADDED.index("<|end|>")
    return vocab


def gemma2_vocab() -> dict[str, Any]:
    """SentencePiece without the space prefix, with Gemma's turn markers (EOT ``<end_of_turn>``)."""
    vocab = with_added_tokens(spm_vocab(add_space_prefix=False),
                              [("<start_of_turn>", CONTROL), ("<end_of_turn>", CONTROL)])
    vocab["tokenizer.ggml.eot_token_id"] = len(vocab["tokenizer.ggml.tokens"]) - 1
    return vocab


Edit = Callable[[dict[str, Any], dict[str, np.ndarray]], None]


def _write(path: Path, arch: str, meta: dict[str, Any], tensors: dict[str, np.ndarray],
           edit: Edit | None) -> Path:
    """Write the file; *edit* first changes metadata and tensors in place (bad-input tests)."""
    if edit is not None:
        edit(meta, tensors)
    return write_gguf(path, arch, meta, tensors)


class _Random:
    """Random tensors with a chosen scale: matrices keep activations near unit size."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def mat(self, rows: int, cols: int, gain: float = 1.0) -> np.ndarray:
        return (self.rng.standard_normal((rows, cols)) * gain / np.sqrt(cols)).astype(np.float32)

    def around(self, n: int, center: float, spread: float = 0.1) -> np.ndarray:
        return (center + spread * self.rng.standard_normal(n)).astype(np.float32)

    def embeddings(self, n_vocab: int, hidden: int, std: float = 1.0) -> np.ndarray:
        return (self.rng.standard_normal((n_vocab, hidden)) * std).astype(np.float32)


def write_phi2(path: Path, shape: Phi2Shape = PHI2, seed: int = 0,
               name: str = "phi-2-random", edit: Edit | None = None) -> Path:
    s, r = shape, _Random(seed)
    vocab = phi2_vocab()
    n_vocab, hidden = len(vocab["tokenizer.ggml.tokens"]), s.hidden
    meta: dict[str, Any] = {
        "general.name": name,
        "phi2.context_length": s.context,
        "phi2.embedding_length": hidden,
        "phi2.feed_forward_length": s.ffn,
        "phi2.block_count": s.layers,
        "phi2.attention.head_count": s.heads,
        "phi2.attention.head_count_kv": s.heads,
        "phi2.attention.layer_norm_epsilon": 1e-5,
        "phi2.rope.dimension_count": s.rope_dims,
        **vocab,
    }
    t: dict[str, np.ndarray] = {"token_embd.weight": r.embeddings(n_vocab, hidden)}
    for i in range(s.layers):
        p = f"blk.{i}"
        t[f"{p}.attn_norm.weight"] = r.around(hidden, 1.0)
        t[f"{p}.attn_norm.bias"] = r.around(hidden, 0.0)
        t[f"{p}.attn_qkv.weight"] = np.concatenate([
            r.mat(2 * hidden, hidden, s.qk_gain), r.mat(hidden, hidden)])
        t[f"{p}.attn_qkv.bias"] = r.around(3 * hidden, 0.0, 0.2)
        t[f"{p}.attn_output.weight"] = r.mat(hidden, hidden)
        t[f"{p}.attn_output.bias"] = r.around(hidden, 0.0)
        t[f"{p}.ffn_up.weight"] = r.mat(s.ffn, hidden, 2.0)
        t[f"{p}.ffn_up.bias"] = r.around(s.ffn, 0.0)
        t[f"{p}.ffn_down.weight"] = r.mat(hidden, s.ffn)
        t[f"{p}.ffn_down.bias"] = r.around(hidden, 0.0)
    t["output_norm.weight"] = r.around(hidden, 1.0)
    t["output_norm.bias"] = r.around(hidden, 0.0)
    t["output.weight"] = r.mat(n_vocab, hidden, 4.0)
    t["output.bias"] = r.around(n_vocab, 0.0, 0.5)
    return _write(path, "phi2", meta, t, edit)


def longrope_factors(rng: np.random.Generator, pairs: int) -> tuple[np.ndarray, np.ndarray]:
    """Short and long factors shaped like Phi-3-mini-128k's: short ones near 1, long ones
    rising from 1 to tens over the low-frequency pairs."""
    ramp = np.linspace(0.0, 1.0, pairs)
    short = 1.0 + 0.2 * ramp * rng.random(pairs)
    long = 1.0 + 40.0 * ramp**2 * (0.8 + 0.4 * rng.random(pairs))
    return short.astype(np.float32), long.astype(np.float32)


def write_phi3(path: Path, shape: Phi3Shape = PHI3, seed: int = 0,
               name: str = "Phi-3-mini-random", edit: Edit | None = None) -> Path:
    s, r = shape, _Random(seed)
    vocab = phi3_vocab()
    n_vocab, hidden = len(vocab["tokenizer.ggml.tokens"]), s.hidden
    q_rows, kv_rows = s.heads * s.head_dim, s.kv_heads * s.head_dim
    meta: dict[str, Any] = {
        "general.name": name,
        "phi3.context_length": s.context,
        "phi3.rope.scaling.original_context_length": s.original_context,
        "phi3.embedding_length": hidden,
        "phi3.feed_forward_length": s.ffn,
        "phi3.block_count": s.layers,
        "phi3.attention.head_count": s.heads,
        "phi3.attention.head_count_kv": s.kv_heads,
        "phi3.attention.layer_norm_rms_epsilon": 1e-5,
        "phi3.rope.dimension_count": s.head_dim,
        "phi3.rope.freq_base": s.rope_base,
        **vocab,
    }
    if s.sliding_window:
        meta["phi3.attention.sliding_window"] = s.sliding_window
    t: dict[str, np.ndarray] = {"token_embd.weight": r.embeddings(n_vocab, hidden)}
    if s.long_rope:
        # convert_hf_to_gguf.py's attention factor for "longrope" scaling
        scale = s.context / s.original_context
        meta["phi3.rope.scaling.attn_factor"] = \
            math.sqrt(1 + math.log(scale) / math.log(s.original_context))
        short, long = longrope_factors(r.rng, s.head_dim // 2)
        t["rope_factors_short.weight"], t["rope_factors_long.weight"] = short, long
    for i in range(s.layers):
        p = f"blk.{i}"
        t[f"{p}.attn_norm.weight"] = r.around(hidden, 1.0)
        t[f"{p}.attn_qkv.weight"] = np.concatenate([
            r.mat(q_rows, hidden, s.qk_gain), r.mat(kv_rows, hidden, s.qk_gain),
            r.mat(kv_rows, hidden)])
        t[f"{p}.attn_output.weight"] = r.mat(hidden, q_rows)
        t[f"{p}.ffn_norm.weight"] = r.around(hidden, 1.0)
        t[f"{p}.ffn_up.weight"] = r.mat(2 * s.ffn, hidden)  # gate rows, then up rows
        t[f"{p}.ffn_down.weight"] = r.mat(hidden, s.ffn)
    t["output_norm.weight"] = r.around(hidden, 1.0)
    t["output.weight"] = r.mat(n_vocab, hidden, 4.0)
    return _write(path, "phi3", meta, t, edit)


def write_gemma2(path: Path, shape: Gemma2Shape = GEMMA2, seed: int = 0,
                 name: str = "gemma-2-random", edit: Edit | None = None) -> Path:
    s, r = shape, _Random(seed)
    vocab = gemma2_vocab()
    n_vocab, hidden = len(vocab["tokenizer.ggml.tokens"]), s.hidden
    q_rows, kv_rows = s.heads * s.head_dim, s.kv_heads * s.head_dim
    meta: dict[str, Any] = {
        "general.name": name,
        "gemma2.context_length": s.context,
        "gemma2.embedding_length": hidden,
        "gemma2.feed_forward_length": s.ffn,
        "gemma2.block_count": s.layers,
        "gemma2.attention.head_count": s.heads,
        "gemma2.attention.head_count_kv": s.kv_heads,
        "gemma2.attention.key_length": s.head_dim,
        "gemma2.attention.value_length": s.head_dim,
        "gemma2.attention.layer_norm_rms_epsilon": 1e-6,
        "gemma2.attention.sliding_window": s.sliding_window,
        "gemma2.attn_logit_softcapping": s.attn_softcap,
        "gemma2.final_logit_softcapping": s.final_softcap,
        **vocab,
    }
    if s.sliding_pattern:
        meta["gemma2.attention.sliding_window_pattern"] = list(s.sliding_pattern)
    # Gemma's table is small (the graph multiplies it by √hidden) and doubles as the output.
    t: dict[str, np.ndarray] = {
        "token_embd.weight": r.embeddings(n_vocab, hidden, s.embed_rms / math.sqrt(hidden))}
    for i in range(s.layers):
        p = f"blk.{i}"
        t[f"{p}.attn_norm.weight"] = r.around(hidden, 1.0)
        t[f"{p}.attn_q.weight"] = r.mat(q_rows, hidden, s.qk_gain)
        t[f"{p}.attn_k.weight"] = r.mat(kv_rows, hidden, s.qk_gain)
        t[f"{p}.attn_v.weight"] = r.mat(kv_rows, hidden)
        t[f"{p}.attn_output.weight"] = r.mat(hidden, q_rows)
        t[f"{p}.post_attention_norm.weight"] = r.around(hidden, s.post_norm, 0.4)
        t[f"{p}.ffn_norm.weight"] = r.around(hidden, 1.0)
        t[f"{p}.ffn_gate.weight"] = r.mat(s.ffn, hidden, 2.0)
        t[f"{p}.ffn_up.weight"] = r.mat(s.ffn, hidden)
        t[f"{p}.ffn_down.weight"] = r.mat(hidden, s.ffn)
        t[f"{p}.post_ffw_norm.weight"] = r.around(hidden, s.post_norm, 0.4)
    t["output_norm.weight"] = r.around(hidden, s.output_norm, s.output_norm / 10)
    return _write(path, "gemma2", meta, t, edit)
