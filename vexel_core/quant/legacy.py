"""GGUF's 32-element block formats: Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0.

Each block is a float16 scale ``d`` (and for the ``_1`` types a float16 minimum ``m``)
followed by 32 codes. 4-bit codes sit in 16 bytes, byte j holding element j (low nibble) and
j + 16 (high nibble); the 5-bit types keep each code's fifth bit in a 32-bit word ``qh``
(bit i for element i). All of them map exactly onto MLX's affine layout with group 32:

==== ========================= ============ ==================================
type value                     MLX bits     memory, bits per weight (file)
==== ========================= ============ ==================================
Q4_0 ``d * (q - 8)``           4            5.0 (4.5)
Q4_1 ``d * q + m``             4            5.0 (5.0)
Q5_0 ``d * (q - 16)``          5            6.0 (5.5)
Q5_1 ``d * q + m``             5            6.0 (6.0)
Q8_0 ``d * q``, q signed       8, q + 128   9.0 (8.5)
==== ========================= ============ ==================================

MLX 0.32.4 supports 5-bit affine quantization (``mx.quantize(..., bits=5)``), so the 5-bit
types need no wider stand-in. Scales and biases (``-8d``, ``m``, ``-16d``, ``-128d``) are
float16 values, or exact multiples of one by a power of two: they stay float16 (one bit per
weight), unless a block's value would overflow float16, in which case the matrix keeps
float32 scales (`AffineMatrix.compact`).
"""

from __future__ import annotations

import mlx.core as mx
from gguf import GGMLQuantizationType as T

from vexel_core.quant.bits import read_f16, unpack_bits
from vexel_core.quant.blocks import BlockFormat, Unpacked


def _nibbles(qs: mx.array) -> mx.array:
    """16 bytes per block -> 32 codes: low nibbles are elements 0-15, high ones 16-31."""
    return unpack_bits(qs, 4, run=16)


def _fifth_bits(qh: mx.array) -> mx.array:
    """The little-endian 32-bit word ``qh`` -> its bit i for element i, already shifted."""
    return unpack_bits(qh, 1, run=1) << 4


class Q4_0(BlockFormat):
    ggml_type, bits, sub_block = T.Q4_0, 4, 32

    def unpack(self, blocks: mx.array) -> Unpacked:
        d = read_f16(blocks, 0)[..., None]
        return Unpacked(_nibbles(blocks[..., 2:]), d, -8 * d)


class Q4_1(BlockFormat):
    ggml_type, bits, sub_block = T.Q4_1, 4, 32

    def unpack(self, blocks: mx.array) -> Unpacked:
        d, m = read_f16(blocks, 0)[..., None], read_f16(blocks, 2)[..., None]
        return Unpacked(_nibbles(blocks[..., 4:]), d, m)


class Q5_0(BlockFormat):
    ggml_type, bits, sub_block = T.Q5_0, 5, 32

    def unpack(self, blocks: mx.array) -> Unpacked:
        d = read_f16(blocks, 0)[..., None]
        codes = _nibbles(blocks[..., 6:]) | _fifth_bits(blocks[..., 2:6])
        return Unpacked(codes, d, -16 * d)


class Q5_1(BlockFormat):
    ggml_type, bits, sub_block = T.Q5_1, 5, 32

    def unpack(self, blocks: mx.array) -> Unpacked:
        d, m = read_f16(blocks, 0)[..., None], read_f16(blocks, 2)[..., None]
        codes = _nibbles(blocks[..., 8:]) | _fifth_bits(blocks[..., 4:8])
        return Unpacked(codes, d, m)


class Q8_0(BlockFormat):
    ggml_type, bits, sub_block = T.Q8_0, 8, 32

    def unpack(self, blocks: mx.array) -> Unpacked:
        d = read_f16(blocks, 0)[..., None]
        # int8 q as the unsigned code q + 128: flipping the sign bit does exactly that.
        return Unpacked(blocks[..., 2:] ^ 0x80, d, -128 * d)
