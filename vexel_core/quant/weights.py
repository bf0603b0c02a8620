"""The two `WeightTensor` kinds: plain float matrices and GGUF block formats.

A block-format weight is a sum of `Term`s, each an MLX affine matrix. Formats that map onto
MLX's layout exactly (Q4_0 ... Q5_K) have one term; Q2_K, Q3_K and Q6_K use a few (see
`vexel_core.quant.kquants`). The file's raw blocks stay reachable (`BlockWeight.raw`) for
kernels that read GGUF blocks directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import mlx.core as mx
import numpy as np
from gguf import GGMLQuantizationType

from vexel_core.quant.affine import AffineMatrix
from vexel_core.quant.base import WeightTensor
from vexel_core.quant.kernels import gguf_matmul
from vexel_core.quant.selection import QuantPath, select_for


class DenseWeight(WeightTensor):
    """F32, F16 or BF16: the matrix itself, in the file's dtype."""

    def __init__(self, w: mx.array) -> None:
        self.w = w
        self.shape = (int(w.shape[0]), int(w.shape[1]))

    def matmul(self, x: mx.array) -> mx.array:
        return (x @ self.w.T).astype(x.dtype)

    def take(self, ids: mx.array) -> mx.array:
        return self.w[ids]

    def dequantize(self) -> mx.array:
        return self.w.astype(mx.float32)

    @property
    def nbytes(self) -> int:
        return self.w.nbytes


@dataclass(frozen=True)
class Term:
    """``W += expand(matrix)``: each column of *matrix* stands for *span* consecutive columns
    of W (a value constant over them), so its product needs ``x`` summed over those columns."""

    matrix: AffineMatrix
    span: int = 1


def sum_over_spans(x: mx.array, span: int) -> mx.array:
    """``x[..., n]`` -> ``x[..., n // span]``, each the float32 sum of *span* neighbours."""
    if span == 1:
        return x
    return x.astype(mx.float32).reshape(*x.shape[:-1], -1, span).sum(axis=-1)


class BlockWeight(WeightTensor):
    """A GGUF block-format matrix as a sum of MLX affine terms, plus its raw blocks.

    *float32_products* makes `matmul` run in float32 whatever the activations' dtype: set for
    representations whose terms cancel each other (Q6_K: two terms of up to ``4096 * |d|``
    for weights that may be far smaller), where float16 arithmetic would lose the result.
    """

    def __init__(
        self,
        terms: list[Term],
        shape: tuple[int, int],
        ggml_type: GGMLQuantizationType,
        raw_bytes: np.ndarray,
        float32_products: bool = False,
    ) -> None:
        self.terms = terms
        self.float32_products = float32_products
        self.shape = shape
        self.ggml_type = ggml_type
        self._raw_bytes = raw_bytes  # usually a view into the memory-mapped file: no copy

    @cached_property
    def raw(self) -> mx.array:
        """The file's blocks as ``uint8[rows, row_bytes]`` (copied into MLX on first use)."""
        return mx.array(np.asarray(self._raw_bytes))

    def matmul(self, x: mx.array) -> mx.array:
        """``x @ W.T`` in ``x``'s dtype, by the path `vexel_core.quant.selection` picks: the
        GGUF-native kernels (on a GPU), the affine terms, or the reference."""
        path = select_for(self.ggml_type, x)
        if path is QuantPath.GGUF_KERNEL:
            return gguf_matmul(x, self.raw, self.ggml_type)
        if path is QuantPath.REFERENCE:
            return (x.astype(mx.float32) @ self.dequantize().T).astype(x.dtype)
        return self.affine_matmul(x)

    def affine_matmul(self, x: mx.array) -> mx.array:
        """``x @ W.T`` on the affine terms; in float32 when `float32_products` is set."""
        xs = x.astype(mx.float32) if self.float32_products else x
        products = [t.matrix.matmul(sum_over_spans(xs, t.span)) for t in self.terms]
        return _total(products).astype(x.dtype)

    def take(self, ids: mx.array) -> mx.array:
        """Rows *ids* as float32, equal to the reference dequantization of those rows."""
        return _total([_widen(t.matrix.take(ids), t.span) for t in self.terms])

    def dequantize(self) -> mx.array:
        return _total([_widen(t.matrix.dequantize(), t.span) for t in self.terms])

    @property
    def nbytes(self) -> int:
        """Bytes of the MLX representation (the raw blocks, kept on demand, not counted)."""
        return sum(t.matrix.nbytes for t in self.terms)


def _widen(values: mx.array, span: int) -> mx.array:
    """Undo a `Term`'s span: repeat each column *span* times."""
    return values if span == 1 else mx.repeat(values, span, axis=-1)


def _total(arrays: list[mx.array]) -> mx.array:
    total = arrays[0]
    for a in arrays[1:]:
        total = total + a
    return total
