"""The plain float formats F32, F16 and BF16: kept as MLX arrays of the file's dtype."""

from __future__ import annotations

from collections.abc import Sequence

import mlx.core as mx
import numpy as np
from gguf import GGML_QUANT_SIZES
from gguf import GGMLQuantizationType as T

from vexel_core.gpu import device_resident
from vexel_core.quant.base import QuantFormat
from vexel_core.quant.layout import matrix_bytes
from vexel_core.quant.weights import DenseWeight


class FloatFormat(QuantFormat):
    """A float type: the bytes are the values."""

    mlx_dtype: mx.Dtype

    def __init__(self) -> None:
        self.block_elems, self.block_bytes = GGML_QUANT_SIZES[self.ggml_type]

    def dequantize_mlx(self, raw: mx.array) -> mx.array:
        """The reference: ``uint8[..., n * itemsize]`` -> float32 ``[..., n]``."""
        return raw.view(self.mlx_dtype).astype(mx.float32)

    def dequantize(self, raw: np.ndarray) -> np.ndarray:
        data = np.ascontiguousarray(raw).view(np.uint8)
        return np.array(self.dequantize_mlx(mx.array(data)))

    def load(self, raw: np.ndarray, shape: tuple[int, ...] | Sequence[int]) -> DenseWeight:
        return DenseWeight(device_resident(
            mx.array(matrix_bytes(self, raw, shape)).view(self.mlx_dtype)))


class F32(FloatFormat):
    ggml_type, mlx_dtype = T.F32, mx.float32


class F16(FloatFormat):
    ggml_type, mlx_dtype = T.F16, mx.float16


class BF16(FloatFormat):
    ggml_type, mlx_dtype = T.BF16, mx.bfloat16
