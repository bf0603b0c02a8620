"""Random-weight GGUF files of real model shapes, for timing (never for correctness).

Block bytes are random with a sane scale, so files of billions of parameters are written in
seconds; the vocabulary is a plain SPM byte vocabulary of the right size. The files are
ordinary GGUF, so the same file times Vexel and llama.cpp.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, GGUFWriter

from vexel_core.errors import ConfigError
from vexel_core.gguf.writer import finish
from vexel_core.quant.measure import F16_FIELDS


@dataclass(frozen=True)
class Preset:
    hidden: int
    layers: int
    ffn: int
    heads: int
    kv_heads: int
    vocab: int
    context: int = 8192
    rope_base: float = 500000.0


PRESETS = {
    "llama3-8b": Preset(4096, 32, 14336, 32, 8, 128256),
    "llama3-1b": Preset(2048, 16, 8192, 32, 8, 128256),
    "small": Preset(512, 4, 1536, 8, 4, 4096, context=2048),  # CPU: a minute end to end
    "tiny": Preset(128, 2, 384, 4, 2, 1024, context=1024),
}
DTYPES = {"bf16": "BF16", "f16": "F16", "f32": "F32", "q8_0": "Q8_0", "q4_0": "Q4_0",
          "q4_1": "Q4_1", "q5_0": "Q5_0", "q5_1": "Q5_1", "q4_k": "Q4_K", "q5_k": "Q5_K",
          "q6_k": "Q6_K", "q4_k_m": "Q4_K", "q5_k_m": "Q5_K"}
# llama-quantize's Q4_K_M and Q5_K_M (llama.cpp src/llama-quant.cpp, llama_tensor_get_type):
# the base type, but Q6_K for the output matrix and, in the layers `_more_bits` picks, for
# attn_v and ffn_down: what most users' files hold.
MIXES = frozenset({"q4_k_m", "q5_k_m"})
# The K formats multiply d by a sub-block scale (Q4_K, Q5_K: 6 bits, ~32; Q6_K: int8, ~64): d
# is divided by it so that weights stay near the legacy formats' magnitudes.
_SUB_SCALE = {"Q4_K": 32.0, "Q5_K": 32.0, "Q6_K": 64.0}
# The second float16 field, in steps of d: the K formats' dmin is d; Q4_1's and Q5_1's min m
# (added to d * q, q unsigned) is -8 d and -16 d, which centre the weights on zero as Q4_0's and
# Q5_0's fixed offsets do.
_SECOND_FIELD_IN_STEPS = {"Q4_1": -8.0, "Q5_1": -16.0}


def _matrix(
    rng: np.random.Generator, rows: int, cols: int, qtype: str
) -> tuple[np.ndarray, GGMLQuantizationType]:
    t = GGMLQuantizationType[qtype]
    if qtype == "F32":
        return rng.standard_normal((rows, cols), dtype=np.float32) / np.float32(np.sqrt(cols)), t
    if qtype in ("BF16", "F16"):
        # Random bit patterns with a fixed small exponent: magnitudes in [2^-7, 2^-6),
        # random sign and mantissa; written at memory speed, unlike normal draws.
        bits = rng.integers(0, 1 << 16, size=(rows, cols), dtype=np.uint16)
        if qtype == "BF16":
            return ((bits & 0x807F) | np.uint16(120 << 7)).astype(np.uint16).view(np.uint8), t
        return ((bits & 0x83FF) | np.uint16(8 << 10)).astype(np.uint16).view(np.float16), t
    block, size = GGML_QUANT_SIZES[t]
    raw = rng.integers(0, 256, size=(rows, cols // block, size), dtype=np.uint8)
    scale = np.float16(0.5 / np.sqrt(cols) / _SUB_SCALE.get(qtype, 1.0))
    for i, offset in enumerate(F16_FIELDS[qtype]):  # d (then dmin or m): sane, never NaN
        value = np.float16(_SECOND_FIELD_IN_STEPS.get(qtype, 1.0) * float(scale)) if i else scale
        raw[:, :, offset : offset + 2] = np.frombuffer(value.tobytes(), dtype=np.uint8)
    return raw.reshape(rows, -1), t


def _more_bits(layer: int, layers: int) -> bool:
    """llama-quantize's use_more_bits: the first and last eighth of the layers, every third
    between."""
    return layer < layers // 8 or layer >= 7 * layers // 8 or (layer - layers // 8) % 3 == 2


def write_random_model(path: Path, preset_name: str, dtype: str, seed: int = 0) -> Path:
    """Write (once) a random-weight LLaMA-architecture file for *preset_name* in *dtype*."""
    if preset_name not in PRESETS:
        raise ConfigError(
            f"unknown --random preset {preset_name!r}; choose from {', '.join(PRESETS)}")
    if dtype not in DTYPES:
        raise ConfigError(f"unknown --dtype {dtype!r}; choose from {', '.join(DTYPES)}")
    p = PRESETS[preset_name]
    qtype = DTYPES[dtype]
    block = GGML_QUANT_SIZES[GGMLQuantizationType[qtype]][0]
    if p.hidden % block or p.ffn % block:
        raise ConfigError(
            f"--dtype {dtype} packs rows in blocks of {block} values; preset {preset_name!r} "
            f"has rows of {p.hidden} and {p.ffn}: choose another preset or dtype")
    if path.exists():
        return path
    rng = np.random.default_rng(seed)
    head_dim = p.hidden // p.heads
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".partial")
    w = GGUFWriter(str(tmp), "llama")
    w.add_name(f"random-{preset_name}-{dtype}")
    w.add_context_length(p.context)
    w.add_embedding_length(p.hidden)
    w.add_block_count(p.layers)
    w.add_feed_forward_length(p.ffn)
    w.add_head_count(p.heads)
    w.add_head_count_kv(p.kv_heads)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(p.rope_base)
    w.add_rope_dimension_count(head_dim)
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    tokens += [f"t{i}" for i in range(p.vocab - len(tokens))]
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * p.vocab)
    w.add_token_types([2, 3, 3] + [6] * 256 + [1] * (p.vocab - 259))
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)

    def add(name: str, rows: int, cols: int, more_bits: bool = False) -> None:
        arr, t = _matrix(rng, rows, cols, "Q6_K" if more_bits and dtype in MIXES else qtype)
        if t in (GGMLQuantizationType.F32, GGMLQuantizationType.F16):
            w.add_tensor(name, arr)
        else:
            w.add_tensor(name, arr, raw_dtype=t)

    ones = np.ones(p.hidden, dtype=np.float32)
    add("token_embd.weight", p.vocab, p.hidden)
    kv = p.kv_heads * head_dim
    for i in range(p.layers):
        b = f"blk.{i}"
        w.add_tensor(f"{b}.attn_norm.weight", ones)
        w.add_tensor(f"{b}.ffn_norm.weight", ones)
        add(f"{b}.attn_q.weight", p.hidden, p.hidden)
        add(f"{b}.attn_k.weight", kv, p.hidden)
        add(f"{b}.attn_v.weight", kv, p.hidden, _more_bits(i, p.layers))
        add(f"{b}.attn_output.weight", p.hidden, p.hidden)
        add(f"{b}.ffn_gate.weight", p.ffn, p.hidden)
        add(f"{b}.ffn_up.weight", p.ffn, p.hidden)
        add(f"{b}.ffn_down.weight", p.hidden, p.ffn, _more_bits(i, p.layers))
    w.add_tensor("output_norm.weight", ones)
    add("output.weight", p.vocab, p.hidden, more_bits=True)
    finish(w)
    tmp.rename(path)
    return path
