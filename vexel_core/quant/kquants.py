"""GGUF's K-quants: 256-element super-blocks with a float16 scale ``d`` (and for Q2_K, Q4_K
and Q5_K a float16 ``dmin``) and small integer scales per sub-block.

Q4_K and Q5_K (sub-blocks of 32) map exactly onto MLX's affine layout with group 32:
``w = (d * sc) * q - dmin * m``, so scale ``d * sc`` and bias ``-dmin * m``. Those products of
a float16 and a 6-bit integer need up to 17 significant bits, so the scales stay float32
(2 bits per weight; float16 scales would save one bit but round every scale).

Q2_K, Q3_K and Q6_K use sub-blocks of 16, and MLX refuses groups of 16. Each is rewritten as
a sum of affine matrices (`Term`) whose scales are per super-block, so groups of 128 work.
Every weight is still exact: the terms' values are integers times ``d`` (or ``dmin``) that
float32 holds exactly, and the reference values are recovered bit for bit by `take`. Only the
matrix product rounds differently (float32 accumulation of a few terms instead of one). These
products run in float32 whatever the activations' dtype (`BlockWeight.float32_products`):
terms that cancel would lose the result in float16 arithmetic (measured on MLX's CPU
backend: 20% error for Q6_K with float16 activations). A planned GGUF-native GPU kernel
would replace them.

* Q2_K, ``w = d * (sc * q) - dmin * m``: a 6-bit matrix of codes ``sc * q`` (0..45) with
  scale ``d``, minus ``dmin * m``, which is constant over each 16 columns. That part is a
  4-bit matrix holding ``m`` once per 8 columns (`Term.span` 8: ``x`` is summed over each 8
  columns first; once per 16 would need group 16 again), scale ``-dmin``.
* Q3_K, ``w = d * v`` with ``v = (sc - 32) * q`` in [-124, 128]: one 8-bit matrix of codes
  ``128 - v`` with scale ``-d`` and bias ``128 * d``.
* Q6_K, ``w = d * v`` with ``v = sc * (q - 32)`` in [-4064, 4096] (13 bits): codes
  ``c = 4096 - v`` split into an 8-bit matrix of ``c % 256`` (scale ``-d``, bias ``4096 * d``)
  plus a 5-bit matrix of ``c // 256`` (scale ``-256 * d``).

Memory and error, measured by ``python -m vexel_core.quant.measure`` (64x4096 random blocks
with sane float16 scales, 8 float32 activation rows; error = max |product - float64
reference| / max(|x| @ |W|.T)). "float16" is the alternative of a dequantized float16 matrix:

==== ============ ============ ============ ============= ====================
type file        MLX           float16      our error     float16 error
     bits/weight bits/weight   bits/weight
==== ============ ============ ============ ============= ====================
Q2_K 2.625       6.875         16           1.9e-7        1.5e-5
Q3_K 3.4375      8.25          16           2.6e-7        1.5e-5
Q4_K 4.5         6.0           16           1.1e-7        1.6e-5
Q5_K 5.5         7.0           16           1.7e-7        1.5e-5
Q6_K 6.5625      13.5          16           5.5e-7        1.5e-5
==== ============ ============ ============ ============= ====================

Our error is float32 accumulation only (the weights are exact); Q6_K's is a few times the
others' because its two terms (magnitude up to ``4096 * |d|``) cancel. Scales and biases are
float16 where that is exact (Q2_K, Q3_K, Q6_K: ``d`` or ``dmin`` times a power of two; 0.25
bit per weight and term at group 128) and float32 otherwise (Q4_K, Q5_K). Should a file hold
a scale whose multiple overflows float16, that matrix keeps float32 (`AffineMatrix.compact`).

The raw blocks stay reachable (`BlockWeight.raw`) for a GPU kernel that reads them directly.
"""

from __future__ import annotations

import mlx.core as mx
from gguf import GGMLQuantizationType as T

from vexel_core.quant.affine import AffineMatrix
from vexel_core.quant.bits import read_f16, unpack_bits
from vexel_core.quant.blocks import BlockFormat, Unpacked
from vexel_core.quant.weights import Term

# K-quant super-block scales cover 256 elements; MLX's largest group is 128.
_GROUP = 128


def _per_group(per_block: mx.array) -> mx.array:
    """A value per super-block ``[rows, n_blocks]`` -> one per group of 128 columns."""
    return mx.repeat(per_block, 256 // _GROUP, axis=-1)


def _super_block_scaled(
    codes: mx.array, d: mx.array, scale: float, bias: float, bits: int
) -> AffineMatrix:
    """Codes ``[rows, n_blocks, 256]`` with ``w = scale * d * code + bias * d`` (exact)."""
    rows = codes.shape[0]
    d = _per_group(d)
    return AffineMatrix.from_codes(
        codes.reshape(rows, -1), scale * d, bias * d, group_size=_GROUP, bits=bits
    )


def _scale_min_6bit(packed: mx.array) -> tuple[mx.array, mx.array]:
    """Q4_K/Q5_K's 12 bytes -> 8 six-bit scales and 8 six-bit mins (as gguf unpacks them).

    Bytes 0-3 hold scales 0-3 (low 6 bits) and the top 2 bits of scales 4-7; bytes 4-7 the
    same for mins; bytes 8-11 the low 4 bits of scale (low nibble) and min (high) 4-7.
    """
    d, m, md = packed[..., 0:4], packed[..., 4:8], packed[..., 8:12]
    scales = mx.concatenate([d & 63, (md & 0xF) | ((d >> 2) & 0x30)], axis=-1)
    mins = mx.concatenate([m & 63, (md >> 4) | ((m >> 2) & 0x30)], axis=-1)
    return scales.astype(mx.float32), mins.astype(mx.float32)


def _per_sub_block(codes: mx.array, per_sub: mx.array) -> mx.array:
    """Multiply codes ``[..., 256]`` by a value per 16-element sub-block ``[..., 16]``."""
    return (codes.reshape(*per_sub.shape, 16) * per_sub[..., None]).reshape(*codes.shape)


class Q2_K(BlockFormat):
    """scales[16] (low nibble sc, high nibble m), qs[64] (2-bit), d, dmin."""

    ggml_type, bits, sub_block = T.Q2_K, 2, 16
    float32_products = True  # the min term cancels part of the scaled one

    def _fields(self, blocks: mx.array) -> tuple[mx.array, ...]:
        sc, m = blocks[..., 0:16] & 0xF, blocks[..., 0:16] >> 4
        q = unpack_bits(blocks[..., 16:80], 2, run=32)
        return q, sc, m, read_f16(blocks, 80), read_f16(blocks, 82)

    def unpack(self, blocks: mx.array) -> Unpacked:
        q, sc, m, d, dmin = self._fields(blocks)
        scale = d[..., None] * sc.astype(mx.float32)
        return Unpacked(q, scale, -(dmin[..., None] * m.astype(mx.float32)))

    def terms(self, blocks: mx.array) -> list[Term]:
        q, sc, m, d, dmin = self._fields(blocks)
        rows = blocks.shape[0]
        scaled = _super_block_scaled(_per_sub_block(q, sc), d, 1.0, 0.0, bits=6)
        # m per 16 columns, stored once per 8 columns (each m twice): 32 per super-block.
        mins = mx.repeat(m, 2, axis=-1).reshape(rows, -1)
        min_matrix = AffineMatrix.from_codes(
            mins, -dmin, mx.zeros_like(dmin), group_size=32, bits=4
        )
        return [Term(scaled), Term(min_matrix, span=8)]


class Q3_K(BlockFormat):
    """hmask[32] (third bit), qs[64] (low 2 bits), scales[12] (16 six-bit), d."""

    ggml_type, bits, sub_block = T.Q3_K, 3, 16
    float32_products = True  # bias 128 * d may dwarf a weight d * v

    def _fields(self, blocks: mx.array) -> tuple[mx.array, ...]:
        low = unpack_bits(blocks[..., 32:96], 2, run=32)
        high = unpack_bits(blocks[..., 0:32], 1, run=32)
        code = low | (high << 2)  # q + 4, where gguf's q = low - 4 * (1 - high) in [-4, 3]
        packed = blocks[..., 96:108]
        sc = unpack_bits(packed[..., 0:8], 4, run=8) | (unpack_bits(packed[..., 8:12], 2, 4) << 4)
        return code, sc.astype(mx.float32) - 32, read_f16(blocks, 108)

    def unpack(self, blocks: mx.array) -> Unpacked:
        code, sc, d = self._fields(blocks)
        scale = d[..., None] * sc
        return Unpacked(code, scale, -4 * scale)

    def terms(self, blocks: mx.array) -> list[Term]:
        code, sc, d = self._fields(blocks)
        v = _per_sub_block(code.astype(mx.int32) - 4, sc.astype(mx.int32))
        return [Term(_super_block_scaled((128 - v).astype(mx.uint8), d, -1.0, 128.0, bits=8))]


class Q4_K(BlockFormat):
    """d, dmin, scales[12] (8 six-bit scales and mins), qs[128] (4-bit)."""

    ggml_type, bits, sub_block = T.Q4_K, 4, 32

    def unpack(self, blocks: mx.array) -> Unpacked:
        sc, m = _scale_min_6bit(blocks[..., 4:16])
        codes = unpack_bits(blocks[..., 16:144], 4, run=32)
        return _scaled_with_min(blocks, codes, sc, m)


class Q5_K(BlockFormat):
    """d, dmin, scales[12], qh[32] (fifth bit), qs[128] (low 4 bits)."""

    ggml_type, bits, sub_block = T.Q5_K, 5, 32

    def unpack(self, blocks: mx.array) -> Unpacked:
        sc, m = _scale_min_6bit(blocks[..., 4:16])
        codes = unpack_bits(blocks[..., 48:176], 4, run=32)
        codes = codes | (unpack_bits(blocks[..., 16:48], 1, run=32) << 4)
        return _scaled_with_min(blocks, codes, sc, m)


def _scaled_with_min(blocks: mx.array, codes: mx.array, sc: mx.array, m: mx.array) -> Unpacked:
    """Q4_K/Q5_K: ``w = (d * sc) * q - dmin * m`` per 32-element sub-block."""
    d, dmin = read_f16(blocks, 0)[..., None], read_f16(blocks, 2)[..., None]
    return Unpacked(codes, d * sc, -(dmin * m))


class Q6_K(BlockFormat):
    """ql[128] (low 4 bits), qh[64] (high 2 bits), scales[16] (int8), d."""

    ggml_type, bits, sub_block = T.Q6_K, 6, 16
    float32_products = True  # two terms near 4096 * |d| cancel

    def _fields(self, blocks: mx.array) -> tuple[mx.array, ...]:
        code = unpack_bits(blocks[..., 0:128], 4, run=64)
        code = code | (unpack_bits(blocks[..., 128:192], 2, run=32) << 4)  # q + 32
        sc = blocks[..., 192:208].view(mx.int8)
        return code, sc, read_f16(blocks, 208)

    def unpack(self, blocks: mx.array) -> Unpacked:
        code, sc, d = self._fields(blocks)
        scale = d[..., None] * sc.astype(mx.float32)
        return Unpacked(code, scale, -32 * scale)

    def terms(self, blocks: mx.array) -> list[Term]:
        code, sc, d = self._fields(blocks)
        v = _per_sub_block(code.astype(mx.int32) - 32, sc.astype(mx.int32))
        c = 4096 - v  # in [0, 8160]: 13 bits, split 8 + 5
        low = _super_block_scaled((c & 255).astype(mx.uint8), d, -1.0, 4096.0, bits=8)
        high = _super_block_scaled((c >> 8).astype(mx.uint8), d, -256.0, 0.0, bits=5)
        return [Term(low), Term(high)]
