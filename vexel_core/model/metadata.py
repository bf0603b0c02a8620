"""Reading an architecture's hyper-parameters from GGUF metadata, with clear errors."""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Any

import mlx.core as mx

from vexel_core.errors import GGUFError
from vexel_core.gguf.reader import GGUFFile


class ArchKeys:
    """``<architecture>.<key>`` lookups that name the key and file when they fail."""

    def __init__(self, gguf: GGUFFile) -> None:
        self.gguf = gguf
        self.arch = gguf.architecture

    def get(self, key: str, default: Any = None) -> Any:
        return self.gguf.get(f"{self.arch}.{key}", default)

    def int(self, key: str, default: builtins.int | None = None) -> builtins.int:
        value = self.get(key, default)
        if isinstance(value, list):  # per-layer arrays: llama.cpp accepts them when uniform
            value = value[0] if value and all(v == value[0] for v in value) else None
        if value is None:
            raise GGUFError(self.gguf.path, f"key {self.arch}.{key}", "missing required key")
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise GGUFError(self.gguf.path, f"key {self.arch}.{key}",
                            f"expected a non-negative integer, found {value!r}")
        return value

    def float(self, key: str, default: builtins.float | None = None) -> builtins.float:
        value = self.get(key, default)
        if value is None:
            raise GGUFError(self.gguf.path, f"key {self.arch}.{key}", "missing required key")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise GGUFError(self.gguf.path, f"key {self.arch}.{key}",
                            f"expected a number, found {value!r}")
        return float(value)

    def rope_position_scale(self) -> builtins.float:
        """llama.cpp's ``freq_scale``: positions times ``1 / rope.scaling.factor``.

        llama.cpp reads the factor for every scaling type but "none" (a missing type counts as
        "linear"; LongRoPE's factors come as tensors on top). YaRN needs more than a scale and
        is refused by name rather than run wrong.
        """
        kind = self.get("rope.scaling.type", "linear")
        if kind == "yarn":
            raise GGUFError(self.gguf.path, f"key {self.arch}.rope.scaling.type",
                            "YaRN rope scaling is not supported")
        factor = self.float("rope.scaling.factor", self.float("rope.scale_linear", 0.0))
        return 1.0 if kind == "none" or factor == 0.0 else 1.0 / factor

    def vocab_size(self) -> builtins.int:
        tokens = self.gguf.get("tokenizer.ggml.tokens")
        return self.int("vocab_size", len(tokens) if tokens else None)


@dataclass(frozen=True)
class DecoderArgs:
    """The hyper-parameters every decoder-only architecture reads the same way; each
    architecture's ``ModelArgs`` extends it with its own."""

    hidden: int
    layers: int
    ffn: int
    heads: int
    kv_heads: int
    head_dim: int
    rope_dims: int
    rope_base: float
    rope_scale: float  # positions times this (llama.cpp's freq_scale)
    rope_attn_factor: float
    context_len: int
    vocab_size: int

    @staticmethod
    def common(k: ArchKeys) -> dict[str, Any]:
        """The shared fields, as keyword arguments for a subclass's constructor."""
        hidden = k.int("embedding_length")
        heads = k.int("attention.head_count")
        head_dim = k.int("attention.key_length", hidden // heads if heads else None)
        return {
            "hidden": hidden,
            "layers": k.int("block_count"),
            "ffn": k.int("feed_forward_length"),
            "heads": heads,
            "kv_heads": k.int("attention.head_count_kv", heads),
            "head_dim": head_dim,
            "rope_dims": k.int("rope.dimension_count", head_dim),
            "rope_base": k.float("rope.freq_base", 10000.0),
            "rope_scale": k.rope_position_scale(),
            "rope_attn_factor": k.float("rope.scaling.attn_factor", 1.0),
            "context_len": k.int("context_length"),
            "vocab_size": k.vocab_size(),
        }

    @property
    def q_rows(self) -> builtins.int:
        return self.heads * self.head_dim

    @property
    def kv_rows(self) -> builtins.int:
        return self.kv_heads * self.head_dim


def activation_dtype(weights_dtype_hint: str | None = None) -> mx.Dtype:
    """The dtype a model computes in, from its matrices' GGUF type. float32 on the CPU (its
    fast path, and exact comparisons). On a GPU the file's own float type where that is F32
    or F16: no conversion of every matrix, and an F32 file keeps the precision its author
    chose, as llama.cpp and mlx-lm keep it; bfloat16 for BF16 and the quantized formats."""
    if mx.default_device() == mx.cpu or weights_dtype_hint == "F32":
        return mx.float32
    return mx.float16 if weights_dtype_hint == "F16" else mx.bfloat16
