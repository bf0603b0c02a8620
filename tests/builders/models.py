"""Random-weight model files for tests, written the way real GGUF files are.

`write_llama` writes an F32 file with `gguf.GGUFWriter`; `convert` turns it into any of the
13 tensor types with llama.cpp's own quantizer (which also makes K-quant files realistic:
rows that are not a multiple of 256 fall back to other types, as in real *_K_M files).
Weights are scaled so that greedy continuations vary (see FACTS.md on tied embeddings).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from gguf import GGUFWriter

from vexel_core.gguf.writer import finish

# llama.cpp's ftype names for each tensor type the engine supports.
FTYPES = {
    "F32": "LLAMA_FTYPE_ALL_F32",
    "F16": "LLAMA_FTYPE_MOSTLY_F16",
    "BF16": "LLAMA_FTYPE_MOSTLY_BF16",
    "Q8_0": "LLAMA_FTYPE_MOSTLY_Q8_0",
    "Q4_0": "LLAMA_FTYPE_MOSTLY_Q4_0",
    "Q4_1": "LLAMA_FTYPE_MOSTLY_Q4_1",
    "Q5_0": "LLAMA_FTYPE_MOSTLY_Q5_0",
    "Q5_1": "LLAMA_FTYPE_MOSTLY_Q5_1",
    "Q2_K": "LLAMA_FTYPE_MOSTLY_Q2_K",
    "Q3_K": "LLAMA_FTYPE_MOSTLY_Q3_K_M",
    "Q4_K": "LLAMA_FTYPE_MOSTLY_Q4_K_M",
    "Q5_K": "LLAMA_FTYPE_MOSTLY_Q5_K_M",
    "Q6_K": "LLAMA_FTYPE_MOSTLY_Q6_K",
}


@dataclass(frozen=True)
class LlamaShape:
    hidden: int = 256
    layers: int = 2
    heads: int = 4
    kv_heads: int = 4
    ffn: int = 512
    context: int = 512
    rope_base: float = 10000.0
    llama3_rope: bool = False  # write a rope_freqs tensor as LLaMA 3.1 files do
    sliding_window: int | None = None
    tied: bool = False


LLAMA2 = LlamaShape()
LLAMA3 = LlamaShape(kv_heads=2, rope_base=500000.0, llama3_rope=True)
MISTRAL = LlamaShape(kv_heads=1, rope_base=1000000.0)


def llama3_freq_factors(head_dim: int, base: float, factor: float = 8.0,
                        low: float = 1.0, high: float = 4.0, orig_ctx: int = 64) -> np.ndarray:
    """The per-pair factors convert_hf_to_gguf.py writes as ``rope_freqs`` for LLaMA 3.1
    (a small original context so that every band — kept, scaled, smoothed — occurs)."""
    freqs = 1.0 / base ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    wavelen = 2 * np.pi / freqs
    low_wl, high_wl = orig_ctx / low, orig_ctx / high
    out = []
    for wl in wavelen:
        if wl < high_wl:
            out.append(1.0)
        elif wl > low_wl:
            out.append(factor)
        else:
            smooth = (orig_ctx / wl - low) / (high - low)
            out.append(1.0 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def write_llama(path: Path, vocab: Mapping[str, Any], shape: LlamaShape = LLAMA2,
                seed: int = 0, name: str = "test-llama", qk_gain: float = 1.0,
                mute: tuple[int, ...] = ()) -> Path:
    """An F32 LLaMA-architecture file with *vocab* (GGUF tokenizer metadata) and random weights.

    *qk_gain* sets how sharp attention is. At 1.0 a wrong rotary layout still drops Pearson
    against llama.cpp to ~0.9 (measured), while llama.cpp's 8-bit activation rounding for
    Q8_0 stays harmless (worst position >= 0.9999 over 18 models; at 2.0 one model in a few
    dozen fell below 0.999, as sharp attention amplifies that rounding).
    *mute*: token ids whose output rows are zero, so their logit is 0 while the best of the
    others is ~3 standard deviations up: greedy decoding never picks them (e.g. end-of-turn
    tokens, for a test that needs answers to run their full length).
    """
    rng = np.random.default_rng(seed)
    s = shape
    n_vocab = len(vocab["tokenizer.ggml.tokens"])
    head_dim = s.hidden // s.heads

    def mat(rows: int, cols: int, gain: float = 1.0) -> np.ndarray:
        return (rng.standard_normal((rows, cols)) * gain / np.sqrt(cols)).astype(np.float32)

    def norm(n: int) -> np.ndarray:
        return (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)

    w = GGUFWriter(str(path), "llama")
    w.add_name(name)
    w.add_context_length(s.context)
    w.add_embedding_length(s.hidden)
    w.add_block_count(s.layers)
    w.add_feed_forward_length(s.ffn)
    w.add_head_count(s.heads)
    w.add_head_count_kv(s.kv_heads)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(s.rope_base)
    w.add_rope_dimension_count(head_dim)
    w.add_vocab_size(n_vocab)
    w.add_file_type(0)
    if s.sliding_window:
        w.add_sliding_window(s.sliding_window)
    _add_vocab(w, vocab)
    w.add_tensor("token_embd.weight", rng.standard_normal((n_vocab, s.hidden)).astype(np.float32))
    if s.llama3_rope:
        w.add_tensor("rope_freqs.weight", llama3_freq_factors(head_dim, s.rope_base))
    for i in range(s.layers):
        p = f"blk.{i}"
        w.add_tensor(f"{p}.attn_norm.weight", norm(s.hidden))
        w.add_tensor(f"{p}.attn_q.weight", mat(s.heads * head_dim, s.hidden, qk_gain))
        w.add_tensor(f"{p}.attn_k.weight", mat(s.kv_heads * head_dim, s.hidden, qk_gain))
        w.add_tensor(f"{p}.attn_v.weight", mat(s.kv_heads * head_dim, s.hidden))
        w.add_tensor(f"{p}.attn_output.weight", mat(s.hidden, s.heads * head_dim))
        w.add_tensor(f"{p}.ffn_norm.weight", norm(s.hidden))
        w.add_tensor(f"{p}.ffn_gate.weight", mat(s.ffn, s.hidden))
        w.add_tensor(f"{p}.ffn_up.weight", mat(s.ffn, s.hidden))
        w.add_tensor(f"{p}.ffn_down.weight", mat(s.hidden, s.ffn))
    w.add_tensor("output_norm.weight", norm(s.hidden))
    if not s.tied:
        output = mat(n_vocab, s.hidden, 4.0)
        output[list(mute)] = 0.0
        w.add_tensor("output.weight", output)
    finish(w)
    return path


def _add_vocab(w: GGUFWriter, vocab: Mapping[str, Any]) -> None:
    from tests.builders.vocab import add_vocab

    add_vocab(w, dict(vocab))


def convert(src: Path, dst: Path, type_name: str) -> Path:
    """Re-quantize an F32 file to *type_name* with llama.cpp's quantizer."""
    import ctypes

    import llama_cpp

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, FTYPES[type_name])
    params.nthread = 2
    rc = llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(),
                                        ctypes.byref(params))
    if rc != 0:
        raise RuntimeError(f"llama.cpp could not quantize {src} to {type_name} (rc={rc})")
    return dst
