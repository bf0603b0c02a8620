"""Q4_0 repacked into 1,024-element super-blocks, the layout the kernels read as ``packed``.

A row of the file's Q4_0 blocks (18 bytes each: ``d`` as float16, then ``qs[16]``) becomes
``K / 1024`` super-blocks of 576 bytes, each holding 32 consecutive blocks: first their
quants (block k's ``qs`` at bytes ``16k .. 16k + 15``), then their scales (block k's ``d`` at
byte ``512 + 2k``). The same bytes, regrouped: a row is still ``18 * K / 32`` bytes, now a
multiple of 16, so in a 16-byte aligned buffer (every one MLX allocates) each block's quants
are one aligned 16-byte word, where the file's 18-byte blocks put them on every alignment.
One-row products read such words with single loads, consecutive lanes consecutive words,
which a probe measured 1.5 us faster at 14336x4096 (notes/gpu-kernels.md, session 13).

The kernels know the layout as the format ``Q4_0x1024`` (common/formats.h), template number
`PACKED_Q4_0`.
"""

from __future__ import annotations

import numpy as np

SUPER_ELEMS = 1024  # elements of a super-block: 32 Q4_0 blocks
SUPER_BYTES = 576  # 32 * 18
_BLOCKS = 32
_QUANTS = 16 * _BLOCKS  # bytes of a super-block's quants, then its 32 scales
# The kernels' template number for the layout: above GGML's type numbers, so never a file's
# (common/formats.h, FormatOf)
PACKED_Q4_0 = 1002


def _super_blocks(blocks: np.ndarray, name: str) -> np.ndarray:
    """*blocks* uint8 ``[rows, row_bytes]`` as ``[rows, row_bytes / 576, 576]``, or a
    ValueError naming *name* and what it must be."""
    if blocks.ndim != 2 or blocks.dtype != np.uint8 or blocks.shape[1] % SUPER_BYTES:
        raise ValueError(
            f"{name} must be uint8 [rows, row_bytes] with row_bytes a multiple of "
            f"{SUPER_BYTES} (Q4_0 rows of a multiple of {SUPER_ELEMS} columns); got "
            f"{blocks.shape} {blocks.dtype}")
    return blocks.reshape(blocks.shape[0], -1, SUPER_BYTES)


def pack_q4_0(blocks: np.ndarray) -> np.ndarray:
    """The file's Q4_0 blocks ``uint8[rows, row_bytes]`` in the packed layout (same shape)."""
    src = _super_blocks(blocks, "blocks").reshape(blocks.shape[0], -1, _BLOCKS, 18)
    out = np.empty(src.shape[:2] + (SUPER_BYTES,), np.uint8)
    out[..., :_QUANTS] = src[..., 2:].reshape(*src.shape[:2], _QUANTS)
    out[..., _QUANTS:] = src[..., :2].reshape(*src.shape[:2], 2 * _BLOCKS)
    return out.reshape(blocks.shape)


def unpack_q4_0(packed: np.ndarray) -> np.ndarray:
    """`pack_q4_0`'s inverse: the packed layout back to the file's blocks."""
    src = _super_blocks(packed, "packed")
    out = np.empty(src.shape[:2] + (_BLOCKS, 18), np.uint8)
    out[..., 2:] = src[..., :_QUANTS].reshape(*src.shape[:2], _BLOCKS, 16)
    out[..., :2] = src[..., _QUANTS:].reshape(*src.shape[:2], _BLOCKS, 2)
    return out.reshape(packed.shape)
