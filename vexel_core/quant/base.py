"""The contract of a tensor format.

A `QuantFormat` describes one GGML tensor type: how many elements a block holds, how many
bytes it takes, how to dequantize it (the numpy reference, the oracle of every test) and how
to turn the file's bytes into a `WeightTensor` that MLX code multiplies with.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

import mlx.core as mx
import numpy as np
from gguf import GGMLQuantizationType

if TYPE_CHECKING:
    from vexel_core.quant.kernels.library import GatedAct

Activation = Callable[[mx.array], mx.array]


@cache
def gated(act: Activation) -> Callable[[mx.array, mx.array], mx.array]:
    """``act(g) * u`` compiled into one fused elementwise kernel (as separate operations,
    the activation and the product are two kernels and two launches per layer on a GPU)."""
    return mx.compile(lambda g, u: act(g) * u, shapeless=True)


class WeightTensor(ABC):
    """A 2-D weight ``W[rows, cols]`` in some MLX representation.

    `matmul` computes ``x @ W.T`` for ``x[..., cols]`` (the `Linear` product); `take`
    gathers rows as floats (embedding lookup) without dequantizing the whole table.
    """

    shape: tuple[int, int]

    @abstractmethod
    def matmul(self, x: mx.array) -> mx.array: ...

    def gated_matmul(self, x: mx.array, act: Activation,
                     kernel_act: GatedAct | None = None) -> mx.array:
        """``act(g) * u`` for ``[g, u] = x @ W.T`` split in halves: W is a fused gate/up
        projection, gate rows then up rows. *kernel_act* names *act* for kinds with a kernel
        that fuses it (``"silu"``, ``"gelu_tanh"``; `BlockWeight` on CUDA); this default
        multiplies, then applies `gated`."""
        g, u = mx.split(self.matmul(x), 2, axis=-1)
        return gated(act)(g, u)

    def matmul_add_norm(self, x: mx.array, residual: mx.array, weight: mx.array,
                        eps: float) -> tuple[mx.array, mx.array] | None:
        """``(h, rms_norm(h) * weight)`` for ``h = residual + x @ W.T``, in one kernel where
        this kind has one (`BlockWeight` on CUDA, one activation row); None elsewhere (this
        default): the caller multiplies, adds and normalises."""
        return None

    def feed_forward_add_norm(self, gate_up: WeightTensor, x: mx.array, kernel_act: GatedAct,
                              residual: mx.array, weight: mx.array, eps: float
                              ) -> tuple[mx.array, mx.array] | None:
        """`matmul_add_norm` of this down projection on ``act(g) * u`` for ``[g, u] = x @
        gate_up.T``: a gated feed-forward part, its add and its norm in one kernel where both
        weights have one (`BlockWeight`: packed Q4_0 on CUDA, one row); None elsewhere (this
        default)."""
        return None

    @abstractmethod
    def take(self, ids: mx.array, dtype: mx.Dtype | None = None) -> mx.array:
        """Rows *ids* ``[*ids.shape, cols]`` (an embedding lookup) as *dtype*, each value
        rounded once from its exact value; by default in the table's own float dtype (float32
        for block formats)."""

    @abstractmethod
    def dequantize(self) -> mx.array:
        """The whole matrix as floats (tests and tied embeddings of small models)."""

    @property
    @abstractmethod
    def nbytes(self) -> int: ...

    @classmethod
    def stack(cls, parts: list[WeightTensor]) -> WeightTensor | None:
        """The rows of *parts* (same class, type and columns) as one matrix, so that fused
        projections take one product instead of several; None where a representation
        cannot be stacked (the parts are then used separately)."""
        return None


class QuantFormat(ABC):
    """One GGML tensor type. Registered through the ``register_quant_formats`` hook."""

    ggml_type: GGMLQuantizationType
    block_elems: int  # elements per block
    block_bytes: int  # bytes per block

    @property
    def name(self) -> str:
        return self.ggml_type.name

    def row_bytes(self, cols: int) -> int:
        return cols // self.block_elems * self.block_bytes

    @abstractmethod
    def dequantize(self, raw: np.ndarray) -> np.ndarray:
        """Reference: ``raw`` uint8 ``[..., n_blocks * block_bytes]`` -> float32 ``[..., n]``."""

    @abstractmethod
    def load(self, raw: np.ndarray, shape: tuple[int, ...]) -> WeightTensor:
        """The file's bytes (uint8, one row of blocks per matrix row) as a `WeightTensor`."""
