"""The two `WeightTensor` kinds: plain float matrices and GGUF block formats.

A block-format weight keeps the file's raw blocks (`BlockWeight.raw`, which the GGUF kernels
read) and can be a sum of `Term`s, each an MLX affine matrix. Formats that map onto MLX's
layout exactly (Q4_0 ... Q5_K) have one term; Q2_K, Q3_K and Q6_K use a few (see
`vexel_core.quant.kquants`).

On CUDA a Q4_0 weight whose rows are a multiple of 1,024 columns keeps its blocks repacked
(`BlockWeight.packed`; the layout: `vexel_core.quant.kernels.packed`): each run of 32 blocks
regrouped into 512 bytes of quants then 64 of scales, the same bytes, so that every block's
quants are one aligned 16-byte word for the kernels. The repack runs once, as ``raw`` is
built, by MLX on the device as part of the copy into its memory (numpy on one core of the
development machine took 42-45 ms for a 14336x4096 matrix, ~5 s of host time for an 8B
model's 3.7 GB: too long to pay at every load).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import mlx.core as mx
import numpy as np
from gguf import GGMLQuantizationType

from vexel_core.gpu import device_resident
from vexel_core.quant.affine import AffineMatrix, concat_rows
from vexel_core.quant.base import Activation, WeightTensor
from vexel_core.quant.kernels import (
    GatedAct,
    gguf_add_norm,
    gguf_dequantize,
    gguf_feed_forward,
    gguf_gated,
    gguf_matmul,
    gpu_backend,
)
from vexel_core.quant.kernels.library import add_norm_scratch, feed_forward_scratch
from vexel_core.quant.kernels.packed import SUPER_ELEMS, pack_q4_0
from vexel_core.quant.selection import QuantPath, paths_on_this_device, select_for


class DenseWeight(WeightTensor):
    """F32, F16 or BF16: the matrix itself, in the file's dtype."""

    def __init__(self, w: mx.array) -> None:
        self.w = w
        self.shape = (int(w.shape[0]), int(w.shape[1]))

    def matmul(self, x: mx.array) -> mx.array:
        return (x @ self.w.T).astype(x.dtype)

    def take(self, ids: mx.array, dtype: mx.Dtype | None = None) -> mx.array:
        rows = self.w[ids]
        return rows if dtype is None else rows.astype(dtype)

    def dequantize(self) -> mx.array:
        return self.w.astype(mx.float32)

    @property
    def nbytes(self) -> int:
        return self.w.nbytes

    @classmethod
    def stack(cls, parts: list[WeightTensor]) -> WeightTensor | None:
        dense = [p for p in parts if isinstance(p, DenseWeight)]
        if len(dense) != len(parts) or any(p.w.dtype != dense[0].w.dtype for p in dense):
            return None
        w = mx.concatenate([p.w for p in dense])
        mx.eval(w)
        return DenseWeight(w)


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
    """A GGUF block-format matrix: its raw blocks and, built when a path needs them, MLX
    affine terms.

    Two representations serve the three paths of `vexel_core.quant.selection`: ``raw``, the
    file's blocks as ``uint8[rows, row_bytes]`` (the GGUF kernels read them; on CUDA, Q4_0
    repacked where `packed`: the module's doc), and ``terms``
    (MLX's ``quantized_matmul``). Each is built on first use; `prepare` builds at load time
    what this device's selected paths use, so a CUDA model does not also hold affine copies of
    its weights and the first request pays no conversion.

    *float32_products* makes `affine_matmul` run in float32 whatever the activations' dtype:
    set for representations whose terms cancel each other (Q6_K: two terms of up to
    ``4096 * |d|`` for weights that may be far smaller), where float16 arithmetic would lose
    the result.
    """

    def __init__(
        self,
        convert: Callable[[np.ndarray], list[Term]],
        shape: tuple[int, int],
        ggml_type: GGMLQuantizationType,
        raw_parts: list[np.ndarray],
        float32_products: bool = False,
    ) -> None:
        self._convert = convert  # blocks uint8[rows, row_bytes] -> affine terms
        self.float32_products = float32_products
        self.shape = shape
        self.ggml_type = ggml_type
        # Row blocks of the matrix, usually views into the memory-mapped file: no copy.
        self._raw_parts = raw_parts

    @cached_property
    def terms(self) -> list[Term]:
        """The affine terms (converted from the blocks on first use)."""
        parts = self._raw_parts
        return self._convert(parts[0] if len(parts) == 1 else np.concatenate(parts))

    @cached_property
    def packed(self) -> bool:
        """Whether `raw` holds Q4_0 repacked into 1,024-element super-blocks (the module's
        doc): where the GGUF kernels serve this weight on CUDA and its rows are whole
        super-blocks. Decided once, with `raw`; Metal and the CPU keep the file's layout."""
        return (self.ggml_type == GGMLQuantizationType.Q4_0 and self.shape[1] % SUPER_ELEMS == 0
                and gpu_backend() == "cuda"
                and QuantPath.GGUF_KERNEL in paths_on_this_device(self.ggml_type))

    @cached_property
    def raw(self) -> mx.array:
        """The blocks as ``uint8[rows, row_bytes]`` (copied into MLX on first use): the
        file's, or repacked where `packed`."""
        # (repacked by the GPU as it copies them: lazily, before the copy into its memory)
        parts = [mx.array(np.asarray(p)) for p in self._raw_parts]
        parts = [pack_q4_0(p) for p in parts] if self.packed else parts
        # one part: copied by the GPU into its memory; several: concatenated by it
        return device_resident(parts[0]) if len(parts) == 1 else mx.concatenate(parts)

    def prepare(self) -> None:
        """Build now each representation that the paths selected on this device use."""
        paths = paths_on_this_device(self.ggml_type)
        if QuantPath.GGUF_KERNEL in paths:
            mx.eval(self.raw)
        if QuantPath.MLX_AFFINE in paths:
            mx.eval([t.matrix.arrays() for t in self.terms])

    @classmethod
    def stack(cls, parts: list[WeightTensor]) -> WeightTensor | None:
        blocks = [p for p in parts if isinstance(p, BlockWeight)]
        if len(blocks) != len(parts) or any(b.ggml_type != blocks[0].ggml_type for b in blocks):
            return None
        first = blocks[0]
        stacked = cls(first._convert, (sum(b.shape[0] for b in blocks), first.shape[1]),
                      first.ggml_type, [r for b in blocks for r in b._raw_parts],
                      first.float32_products)
        # What the parts already built is concatenated rather than built again from the
        # file (converting to affine terms is most of a load). New arrays only: the parts are
        # dropped after this, and nothing here may keep them alive.
        built = [b.__dict__ for b in blocks]
        # (rows concatenated stay valid in either layout, if it is the stack's)
        if all("raw" in d and d["packed"] == stacked.packed for d in built):
            stacked.raw = mx.concatenate([d["raw"] for d in built])
        if all("terms" in d for d in built):
            stacked.terms = [
                Term(concat_rows([d["terms"][i].matrix for d in built]).compact(), t.span)
                for i, t in enumerate(built[0]["terms"])
            ]
        stacked.prepare()
        return stacked

    def matmul(self, x: mx.array) -> mx.array:
        """``x @ W.T`` in ``x``'s dtype, by the path `vexel_core.quant.selection` picks: the
        GGUF-native kernels (on a GPU), the affine terms, or the reference."""
        path = select_for(self.ggml_type, x)
        if path is QuantPath.GGUF_KERNEL:
            return gguf_matmul(x, self.raw, self.ggml_type, packed=self.packed)
        if path is QuantPath.REFERENCE:
            return (x.astype(mx.float32) @ self.dequantize().T).astype(x.dtype)
        return self.affine_matmul(x)

    def gated_matmul(self, x: mx.array, act: Activation,
                     kernel_act: GatedAct | None = None) -> mx.array:
        """`WeightTensor.gated_matmul`; where the GGUF kernels compute the product and one
        of them fuses *kernel_act* (one row on CUDA: ``gemv_int8``), in that one kernel."""
        if kernel_act is not None and select_for(self.ggml_type, x) is QuantPath.GGUF_KERNEL:
            y = gguf_gated(x, self.raw, self.ggml_type, kernel_act, packed=self.packed)
            if y is not None:
                return y
        return super().gated_matmul(x, act, kernel_act)

    def matmul_add_norm(self, x: mx.array, residual: mx.array, weight: mx.array,
                        eps: float) -> tuple[mx.array, mx.array] | None:
        """`WeightTensor.matmul_add_norm`: ``gemv_int8``'s epilogue, where the GGUF kernels
        compute the product."""
        if select_for(self.ggml_type, x) is not QuantPath.GGUF_KERNEL:
            return None
        return gguf_add_norm(x, self.raw, self.ggml_type, residual, weight, eps,
                             self._add_norm_scratch, packed=self.packed)

    def feed_forward_add_norm(self, gate_up: WeightTensor, x: mx.array, kernel_act: GatedAct,
                              residual: mx.array, weight: mx.array, eps: float
                              ) -> tuple[mx.array, mx.array] | None:
        """`WeightTensor.feed_forward_add_norm`: the one-launch kernel where this weight and
        *gate_up* are packed Q4_0 and the GGUF kernels compute the products."""
        if (not isinstance(gate_up, BlockWeight) or not (self.packed and gate_up.packed)
                or select_for(self.ggml_type, x) is not QuantPath.GGUF_KERNEL):
            return None
        return gguf_feed_forward(x, gate_up.raw, self.raw, kernel_act, residual, weight, eps,
                                 self._feed_forward_scratch)

    @cached_property
    def _feed_forward_scratch(self) -> mx.array:
        """The feed-forward kernel's rounded intermediate values and counts, one scratch per
        down matrix ``[N, F]`` (ordered by their data, as `_add_norm_scratch`)."""
        return feed_forward_scratch(self.shape[1])

    @cached_property
    def _add_norm_scratch(self) -> mx.array:
        """The AddNorm epilogue's count, one per matrix: its launches in a model are ordered
        by their data (`KernelLibrary.gemv_add_norm`)."""
        return add_norm_scratch()

    def affine_matmul(self, x: mx.array) -> mx.array:
        """``x @ W.T`` on the affine terms; in float32 when `float32_products` is set."""
        xs = x.astype(mx.float32) if self.float32_products else x
        products = [t.matrix.matmul(sum_over_spans(xs, t.span)) for t in self.terms]
        return _total(products).astype(x.dtype)

    def take(self, ids: mx.array, dtype: mx.Dtype | None = None) -> mx.array:
        """Rows *ids* as *dtype* (default float32), equal to the reference dequantization of
        those rows rounded once: from the affine terms when they exist, else by the GPU's
        dequantization kernel, which writes *dtype* itself (one launch a decode step fewer
        than float32 rows and their cast: 4.2 us on the H200, session 32)."""
        if ("terms" not in self.__dict__
                and QuantPath.GGUF_KERNEL in paths_on_this_device(self.ggml_type)):
            rows = gguf_dequantize(self.raw[ids.reshape(-1)], self.ggml_type,
                                   dtype or mx.float32, packed=self.packed)
            return rows.reshape(*ids.shape, self.shape[1])
        rows = _total([_widen(t.matrix.take(ids), t.span) for t in self.terms])
        return rows if dtype is None else rows.astype(dtype)

    def dequantize(self) -> mx.array:
        return _total([_widen(t.matrix.dequantize(), t.span) for t in self.terms])

    @property
    def nbytes(self) -> int:
        """Bytes of the representations built so far (the affine terms, the raw blocks)."""
        built = self.__dict__
        terms = sum(t.matrix.nbytes for t in built["terms"]) if "terms" in built else 0
        return terms + (built["raw"].nbytes if "raw" in built else 0)


def _widen(values: mx.array, span: int) -> mx.array:
    """Undo a `Term`'s span: repeat each column *span* times."""
    return values if span == 1 else mx.repeat(values, span, axis=-1)


def _total(arrays: list[mx.array]) -> mx.array:
    total = arrays[0]
    for a in arrays[1:]:
        total = total + a
    return total
