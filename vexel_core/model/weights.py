"""Reading a model's tensors out of a GGUF file into the layers that hold them."""

from __future__ import annotations

import mlx.core as mx
import numpy as np

from vexel_core.errors import GGUFError
from vexel_core.gguf.reader import GGUFFile, TensorInfo
from vexel_core.model.linear import Embedding, Linear, load_weight
from vexel_core.plugins import PluginHost


class Weights:
    """Typed access to a file's tensors by GGUF name (``blk.3.attn_q.weight``)."""

    def __init__(self, gguf: GGUFFile, host: PluginHost, dtype: mx.Dtype) -> None:
        self.gguf = gguf
        self.host = host
        self.dtype = dtype  # activations; vectors (norms, biases) are cast to it

    def has(self, name: str) -> bool:
        return name in self.gguf.tensors

    def vector(self, name: str, dtype: mx.Dtype | None = None) -> mx.array:
        """A 1-D tensor in the activation dtype, or *dtype* (rope factors stay float32)."""
        t = self._tensor(name)
        fmt = self.host.quant_formats.get(t.ggml_type.name)
        values = fmt.dequantize(np.asarray(t.raw).reshape(1, -1)).reshape(t.shape)
        return mx.array(values.astype(np.float32)).astype(dtype or self.dtype)

    def _tensor(self, name: str) -> TensorInfo:
        """The file's tensor *name*, whose type a registered quant format reads."""
        t = self.gguf.tensor(name)
        if t.ggml_type.name not in self.host.quant_formats:
            raise GGUFError(self.gguf.path, f"tensor {name}",
                            f"type {t.ggml_type.name} is not supported; supported: "
                            f"{', '.join(self.host.quant_formats.names())}")
        return t

    def optional_vector(self, name: str) -> mx.array | None:
        return self.vector(name) if self.has(name) else None

    def matrix(self, name: str, rows: int | None = None, cols: int | None = None):  # type: ignore[no-untyped-def]
        t = self._tensor(name)
        if len(t.shape) != 2:
            raise GGUFError(self.gguf.path, f"tensor {name}",
                            f"expected a matrix, found shape {t.shape}")
        if (rows is not None and t.shape[0] != rows) or (cols is not None and t.shape[1] != cols):
            raise GGUFError(
                self.gguf.path, f"tensor {name}",
                f"shape {t.shape} does not match the architecture's "
                f"[{rows if rows is not None else '*'}, {cols if cols is not None else '*'}]",
            )
        return load_weight(self.host, t.ggml_type, t.raw, t.shape)

    def linear(self, prefix: str, rows: int | None = None, cols: int | None = None) -> Linear:
        """``prefix.weight`` (and ``prefix.bias`` when the file has one) as a `Linear`."""
        return Linear(self.matrix(f"{prefix}.weight", rows, cols),
                      self.optional_vector(f"{prefix}.bias"))

    def attention_projections(self, prefix: str, q_rows: int, kv_rows: int,
                              cols: int) -> dict[str, Linear]:
        """Keyword arguments for `Attention`: ``{"qkv": ...}`` when the file fuses
        ``prefix.attn_qkv`` or its q, k and v stack; else ``{"qk", "v"}`` when q and k stack
        (a Q4_K_M file's v is Q6_K in half the layers, as llama-quantize mixes it), else
        ``{"q", "k", "v"}``. llama.cpp accepts either layout for these models, and fused
        weights with separate ``attn_q/k/v.bias`` vectors too."""
        if not self.has(f"{prefix}.attn_qkv.weight"):
            q, k, v = (self.linear(f"{prefix}.attn_{x}", rows, cols)
                       for x, rows in zip("qkv", (q_rows, kv_rows, kv_rows), strict=True))
            if (qkv := self.stack([q, k, v])) is not None:
                return {"qkv": qkv}
            if (qk := self.stack([q, k])) is not None:
                return {"qk": qk, "v": v}
            return {"q": q, "k": k, "v": v}
        weight = self.matrix(f"{prefix}.attn_qkv.weight", q_rows + 2 * kv_rows, cols)
        bias = self.optional_vector(f"{prefix}.attn_qkv.bias")
        parts = [f"{prefix}.attn_{x}.bias" for x in "qkv"]
        if bias is None and all(self.has(name) for name in parts):
            bias = mx.concatenate([self.vector(name) for name in parts])
        return {"qkv": Linear(weight, bias)}

    def gate_up_projections(self, prefix: str, rows: int, cols: int) -> dict[str, Linear]:
        """``{"gate_up": ...}`` (keyword arguments for `GatedMLP`): ``prefix.ffn_gate`` and
        ``prefix.ffn_up`` stacked where their format allows, else ``{"gate", "up"}``."""
        gate, up = (self.linear(f"{prefix}.ffn_{x}", rows, cols) for x in ("gate", "up"))
        if (gate_up := self.stack([gate, up])) is not None:
            return {"gate_up": gate_up}
        return {"gate": gate, "up": up}

    def stack(self, parts: list[Linear]) -> Linear | None:
        """*parts* as one `Linear` of their rows in order, when their representations stack
        (`WeightTensor.stack`: one product per step instead of one per projection, which
        matters when decoding a few tokens costs a launch per product); else None."""
        weight = type(parts[0].weight).stack([p.weight for p in parts])
        if weight is None:
            return None
        biases = [p.bias for p in parts]
        bias = None
        if any(b is not None for b in biases):
            bias = mx.concatenate([b if b is not None else mx.zeros((p.shape[0],), self.dtype)
                                   for b, p in zip(biases, parts, strict=True)])
        return Linear(weight, bias)

    def embedding(self, name: str, rows: int | None = None, cols: int | None = None) -> Embedding:
        return Embedding(self.matrix(name, rows, cols))

    def embedding_and_head(self, vocab: int, hidden: int) -> tuple[Embedding, Linear]:
        """``token_embd`` and the output projection: ``output`` (with its bias, if any) when
        the file has one, else the token table itself (tied, as llama.cpp falls back)."""
        embed = self.embedding("token_embd.weight", vocab, hidden)
        if self.has("output.weight"):
            return embed, self.linear("output", vocab, hidden)
        return embed, embed.as_linear()
