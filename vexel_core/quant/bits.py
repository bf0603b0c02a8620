"""Bit-level helpers shared by the block formats, in plain MLX (they run on every device).

Reading: GGUF packs small integers into bytes "run by run" (`unpack_bits`) and keeps float16
fields inside each block (`read_f16`). Writing: MLX's affine layout packs a row of codes as
one little-endian bit stream into uint32 words (`pack_codes`).
"""

from __future__ import annotations

import mlx.core as mx


def read_f16(blocks: mx.array, offset: int) -> mx.array:
    """The float16 field at byte *offset* of every block, as float32 ``[..., n_blocks]``."""
    return blocks[..., offset : offset + 2].view(mx.float16)[..., 0].astype(mx.float32)


def unpack_bits(data: mx.array, bits: int, run: int) -> mx.array:
    """Split bytes into *bits*-wide unsigned fields, in GGUF's order.

    GGUF fills a run of *run* consecutive bytes ``8 // bits`` times over: the lowest *bits*
    of the run's bytes hold the first *run* elements, the next *bits* the following *run*
    elements, and so on (Q4_0: run 16, so byte j holds elements j and j + 16).
    ``uint8[..., n]`` -> ``uint8[..., n * 8 // bits]``.
    """
    *lead, n = data.shape
    shifts = mx.arange(0, 8, bits, dtype=mx.uint8).reshape(-1, 1)
    fields = (data.reshape(*lead, n // run, 1, run) >> shifts) & ((1 << bits) - 1)
    return fields.reshape(*lead, n * 8 // bits)


def pack_codes(codes: mx.array, bits: int) -> mx.array:
    """Codes ``[rows, n]`` (each below ``2**bits``) -> MLX's ``uint32[rows, n * bits // 32]``.

    MLX reads a row as one little-endian bit stream: code i occupies bits
    ``[i * bits, (i + 1) * bits)`` (checked with `mx.dequantize` for 2, 3, 4, 5, 6 and 8 bits).
    The stream is built bit plane by bit plane, which costs ``4 * bits`` bytes per code in
    temporaries; callers convert large matrices a slice of rows at a time.
    """
    rows, n = codes.shape
    planes = (codes.astype(mx.uint32)[..., None] >> mx.arange(bits, dtype=mx.uint32)) & 1
    planes = planes.reshape(rows, n * bits // 32, 32)
    # The 32 bits of a word are disjoint, so their sum is their bitwise or.
    return (planes << mx.arange(32, dtype=mx.uint32)).sum(axis=-1)
