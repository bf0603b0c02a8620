"""The layers that hold weight matrices of any registered format: `Linear` and `Embedding`.

A model never looks at how a matrix is stored: `load_weight` asks the plugin host for the
tensor's format and gets back a `WeightTensor` (plain float array, MLX affine triplet, or a
sum of them for the group-16 K-quants); `Linear` multiplies with it and `Embedding` gathers
rows from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import mlx.core as mx
import mlx.nn as nn
import numpy as np
from gguf import GGMLQuantizationType

from vexel_core.errors import TensorDataError
from vexel_core.quant.base import Activation, QuantFormat, WeightTensor, gated

if TYPE_CHECKING:
    from vexel_core.plugins import PluginHost
    from vexel_core.quant.kernels import GatedAct


class Linear(nn.Module):
    """``y = x @ W.T (+ bias)`` for ``x[..., cols]``; ``y`` has ``x``'s dtype."""

    def __init__(self, weight: WeightTensor, bias: mx.array | None = None) -> None:
        super().__init__()
        rows = weight.shape[0]
        if bias is not None and tuple(bias.shape) != (rows,):
            raise TensorDataError(
                f"bias of shape {tuple(bias.shape)} does not fit a weight of shape "
                f"{weight.shape}: expected ({rows},)"
            )
        self.weight = weight  # not an mx.array, so not a parameter: it is not trained
        self.bias = bias

    @property
    def shape(self) -> tuple[int, int]:
        """``(out_features, in_features)``."""
        return self.weight.shape

    def __call__(self, x: mx.array) -> mx.array:
        y = self.weight.matmul(x)
        return y if self.bias is None else y + self.bias.astype(y.dtype)

    def gated_matmul(self, x: mx.array, act: Activation,
                     kernel_act: GatedAct | None = None) -> mx.array:
        """``act(g) * u`` for ``[g, u]`` the two halves of this product (a fused gate/up
        projection: gate rows, then up rows); `WeightTensor.gated_matmul` says what
        *kernel_act* is."""
        if self.bias is not None:  # added before the activation: no fused form
            g, u = mx.split(self(x), 2, axis=-1)
            return gated(act)(g, u)
        return self.weight.gated_matmul(x, act, kernel_act)

    def add_norm(self, x: mx.array, residual: mx.array, weight: mx.array,
                 eps: float) -> tuple[mx.array, mx.array] | None:
        """``(h, rms_norm(h) * weight)`` for ``h = residual + self(x)`` in one kernel where the
        weight has one (`WeightTensor.matmul_add_norm`); None elsewhere, or with a bias."""
        if self.bias is not None:
            return None
        return self.weight.matmul_add_norm(x, residual, weight, eps)

    def feed_forward_add_norm(self, gate_up: Linear, x: mx.array, kernel_act: GatedAct,
                              residual: mx.array, weight: mx.array, eps: float
                              ) -> tuple[mx.array, mx.array] | None:
        """`add_norm` of this down projection on ``act(g) * u`` for ``[g, u] = gate_up(x)``,
        the gated product included in the one kernel where both weights have it
        (`WeightTensor.feed_forward_add_norm`); None elsewhere, or with a bias."""
        if self.bias is not None or gate_up.bias is not None:
            return None
        return self.weight.feed_forward_add_norm(gate_up.weight, x, kernel_act, residual,
                                                 weight, eps)


class Embedding(nn.Module):
    """Token table ``W[vocab, hidden]``: ids of any shape -> rows ``[*ids.shape, hidden]``.

    Quantized tables gather the packed rows first and dequantize only those, into the
    model's activation dtype when it is given.
    """

    def __init__(self, weight: WeightTensor) -> None:
        super().__init__()
        self.weight = weight

    def __call__(self, ids: mx.array, dtype: mx.Dtype | None = None) -> mx.array:
        return self.weight.take(ids, dtype)

    def as_linear(self) -> Linear:
        """The same matrix as an output projection (models with tied embeddings)."""
        return Linear(self.weight)


def load_weight(
    host: PluginHost,
    ggml_type: GGMLQuantizationType | int | str,
    raw: np.ndarray,
    shape: Sequence[int],
    name: str | None = None,
) -> WeightTensor:
    """The file's bytes of one matrix as a `WeightTensor`, through the registered format.

    *raw* holds the tensor's bytes (uint8, typically memory-mapped), *shape* is
    ``(rows, cols)`` in numpy order. A type no plugin registered raises `RegistryMiss`
    naming the available formats; bytes that do not fit the shape raise `TensorDataError`
    (prefixed with *name* when given).
    """
    fmt: QuantFormat = host.quant_formats.get(_type_name(ggml_type))
    try:
        return fmt.load(raw, tuple(int(n) for n in shape))
    except TensorDataError as err:
        if name is None:
            raise
        raise TensorDataError(f"tensor {name!r}: {err}") from None


def _type_name(ggml_type: GGMLQuantizationType | int | str) -> str:
    if isinstance(ggml_type, str):
        return ggml_type
    try:
        return GGMLQuantizationType(ggml_type).name
    except ValueError:
        return f"GGML type {int(ggml_type)}"  # unknown to gguf: the registry miss says so
