"""One matrix in MLX's affine quantized layout, the representation `mx.quantized_matmul` reads.

``w[r, c] = scales[r, g] * code[r, c] + biases[r, g]`` with ``g = c // group_size``: the same
triplet (packed codes, scales, biases) that ``mx.quantize`` returns, but built from GGUF's own
codes and scales so that no value is re-quantized.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import mlx.core as mx

from vexel_core.quant.bits import pack_codes


@dataclass(frozen=True)
class AffineMatrix:
    packed: mx.array  # uint32 [rows, cols * bits // 32]
    scales: mx.array  # [rows, cols // group_size]
    biases: mx.array  # [rows, cols // group_size]
    group_size: int  # 32, 64 or 128: the sizes MLX accepts
    bits: int  # 2, 3, 4, 5, 6 or 8

    @classmethod
    def from_codes(
        cls, codes: mx.array, scales: mx.array, biases: mx.array, group_size: int, bits: int
    ) -> AffineMatrix:
        """Pack unsigned integer codes ``[rows, cols]``; scales and biases are kept as given."""
        return cls(pack_codes(codes, bits), scales, biases, group_size, bits)

    def compact(self) -> AffineMatrix:
        """Scales and biases in float16 when that holds every one of them exactly."""
        as_f16 = [a.astype(mx.float16) for a in (self.scales, self.biases)]
        exact = all(
            mx.array_equal(small.astype(a.dtype), a).item()
            for small, a in zip(as_f16, (self.scales, self.biases), strict=True)
        )
        return replace(self, scales=as_f16[0], biases=as_f16[1]) if exact else self

    def arrays(self) -> tuple[mx.array, mx.array, mx.array]:
        return self.packed, self.scales, self.biases

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays())

    def matmul(self, x: mx.array) -> mx.array:
        """``x @ w.T`` for ``x[..., cols]``."""
        return mx.quantized_matmul(
            x, self.packed, self.scales, self.biases, transpose=True,
            group_size=self.group_size, bits=self.bits,
        )

    def take(self, ids: mx.array) -> mx.array:
        """Rows *ids* as float32 ``[*ids.shape, cols]``, exact (computed in float32)."""
        return self._dequantize(self.packed[ids], self.scales[ids], self.biases[ids])

    def dequantize(self) -> mx.array:
        """The whole matrix as float32."""
        return self._dequantize(self.packed, self.scales, self.biases)

    def _dequantize(self, packed: mx.array, scales: mx.array, biases: mx.array) -> mx.array:
        # float32 scales make MLX compute ``scale * code + bias`` in float32: exact here.
        return mx.dequantize(
            packed, scales.astype(mx.float32), biases.astype(mx.float32),
            group_size=self.group_size, bits=self.bits,
        )


def concat_rows(parts: list[AffineMatrix]) -> AffineMatrix:
    """Stack matrices converted a slice of rows at a time back into one."""
    if len(parts) == 1:
        return parts[0]
    return replace(
        parts[0],
        packed=mx.concatenate([p.packed for p in parts]),
        scales=mx.concatenate([p.scales for p in parts]),
        biases=mx.concatenate([p.biases for p in parts]),
    )
