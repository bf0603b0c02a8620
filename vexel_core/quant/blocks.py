"""What every GGUF block format shares: the common unpacked form, the reference
dequantization in plain MLX, and loading a matrix a slice of rows at a time.

Every block type of this package decodes to the same form (`Unpacked`): unsigned integer
codes and, per sub-block, a float32 scale and bias with ``w = scale * code + bias``. The
reference dequantization evaluates exactly that, in float32. It equals
`gguf.quants.dequantize` bit for bit: each format's scale, code and bias are chosen so that
either the operations are gguf's own (``d * q + m``) or every intermediate is an exact float32
(e.g. Q4_0's ``d * code - 8 * d`` is ``d * (code - 8)`` exactly, an 11-bit mantissa times a
4-bit integer), so no rounding can differ.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

import mlx.core as mx
import numpy as np
from gguf import GGML_QUANT_SIZES

from vexel_core.quant.affine import AffineMatrix, concat_rows
from vexel_core.quant.base import QuantFormat
from vexel_core.quant.layout import matrix_bytes
from vexel_core.quant.weights import BlockWeight, Term

# Elements converted per step when loading: bounds the temporaries of `pack_codes`
# (4 bytes per code bit, so at most 128 MiB for 8-bit codes).
_ELEMENTS_PER_STEP = 1 << 22


@dataclass(frozen=True)
class Unpacked:
    """Blocks decoded: ``w = scales * codes + biases``, one scale and bias per sub-block."""

    codes: mx.array  # uint8 [..., n_blocks, block_elems]
    scales: mx.array  # float32 [..., n_blocks, n_sub_blocks]
    biases: mx.array  # float32 [..., n_blocks, n_sub_blocks]

    def values(self) -> mx.array:
        """float32 ``[..., n_blocks * block_elems]``."""
        *lead, n_blocks, n_sub = self.scales.shape
        codes = self.codes.reshape(*lead, n_blocks, n_sub, -1).astype(mx.float32)
        w = self.scales[..., None] * codes + self.biases[..., None]
        return w.reshape(*lead, -1)


class BlockFormat(QuantFormat):
    """A GGUF block type. Subclasses set `ggml_type`, `bits` and `sub_block`, and `unpack`."""

    bits: int  # code width in the MLX affine layout (the default single-term conversion)
    sub_block: int  # elements sharing one scale and bias
    float32_products = False  # see `BlockWeight`

    def __init__(self) -> None:
        self.block_elems, self.block_bytes = GGML_QUANT_SIZES[self.ggml_type]

    @abstractmethod
    def unpack(self, blocks: mx.array) -> Unpacked:
        """``uint8[..., n_blocks, block_bytes]`` -> codes, scales and biases."""

    def dequantize_mlx(self, raw: mx.array) -> mx.array:
        """The reference: ``uint8[..., n_blocks * block_bytes]`` -> float32 ``[..., n]``."""
        blocks = raw.reshape(*raw.shape[:-1], -1, self.block_bytes)
        return self.unpack(blocks).values()

    def dequantize(self, raw: np.ndarray) -> np.ndarray:
        data = np.ascontiguousarray(raw).view(np.uint8)
        return np.array(self.dequantize_mlx(mx.array(data)))

    def terms(self, blocks: mx.array) -> list[Term]:
        """MLX representation of ``uint8[rows, n_blocks, block_bytes]``.

        By default one affine matrix whose group is the sub-block (32 elements here), with
        GGUF's codes, scales and biases unchanged: exact. Group-16 formats override this.
        """
        u = self.unpack(blocks)
        rows = blocks.shape[0]
        matrix = AffineMatrix.from_codes(
            u.codes.reshape(rows, -1),
            u.scales.reshape(rows, -1),
            u.biases.reshape(rows, -1),
            group_size=self.sub_block,
            bits=self.bits,
        )
        return [Term(matrix)]

    def load(self, raw: np.ndarray, shape: tuple[int, ...] | Sequence[int]) -> BlockWeight:
        data = matrix_bytes(self, raw, shape)
        rows, cols = int(shape[0]), int(shape[1])
        weight = BlockWeight(self._affine_terms, (rows, cols), self.ggml_type, [data],
                             self.float32_products)
        weight.prepare()
        return weight

    def _affine_terms(self, data: np.ndarray) -> list[Term]:
        """`terms` of the blocks ``data[rows, row_bytes]``, converted a slice of rows at a time."""
        cols = data.shape[1] // self.block_bytes * self.block_elems
        step = max(1, _ELEMENTS_PER_STEP // cols)
        slices: list[list[Term]] = []
        for start in range(0, data.shape[0], step):
            blocks = mx.array(data[start : start + step]).reshape(-1, cols // self.block_elems,
                                                                   self.block_bytes)
            terms = self.terms(blocks)
            mx.eval([t.matrix.arrays() for t in terms])
            slices.append(terms)
        terms = [
            Term(concat_rows([s[i].matrix for s in slices]).compact(), slices[0][i].span)
            for i in range(len(slices[0]))
        ]
        mx.eval([t.matrix.arrays() for t in terms])
        return terms
