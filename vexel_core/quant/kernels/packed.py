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

from typing import Any, overload

import mlx.core as mx
import numpy as np

SUPER_ELEMS = 1024  # elements of a super-block: 32 Q4_0 blocks
SUPER_BYTES = 576  # 32 * 18
_BLOCKS = 32
_QUANTS = 16 * _BLOCKS  # bytes of a super-block's quants, then its 32 scales
# The kernels' template number for the layout: above GGML's type numbers, so never a file's
# (common/formats.h, FormatOf)
PACKED_Q4_0 = 1002


def _check(blocks: np.ndarray | mx.array, name: str) -> None:
    """A ValueError naming *name* unless *blocks* is uint8 ``[rows, row_bytes]`` of whole
    super-blocks."""
    uint8 = blocks.dtype == (mx.uint8 if isinstance(blocks, mx.array) else np.uint8)
    if blocks.ndim != 2 or not uint8 or blocks.shape[1] % SUPER_BYTES:
        raise ValueError(
            f"{name} must be uint8 [rows, row_bytes] with row_bytes a multiple of "
            f"{SUPER_BYTES} (Q4_0 rows of a multiple of {SUPER_ELEMS} columns); got "
            f"{tuple(blocks.shape)} {blocks.dtype}")


def _super_blocks(blocks: np.ndarray, name: str) -> np.ndarray:
    """*blocks* uint8 ``[rows, row_bytes]`` as ``[rows, row_bytes / 576, 576]``, or a
    ValueError naming *name* and what it must be."""
    _check(blocks, name)
    return blocks.reshape(blocks.shape[0], -1, SUPER_BYTES)


@overload
def pack_q4_0(blocks: np.ndarray) -> np.ndarray: ...
@overload
def pack_q4_0(blocks: mx.array) -> mx.array: ...
def pack_q4_0(blocks: np.ndarray | mx.array) -> np.ndarray | mx.array:
    """The file's Q4_0 blocks ``uint8[rows, row_bytes]`` in the packed layout (same shape), as
    a numpy array or, from an MLX array, an MLX one: on a GPU the repack is a copy there, where
    numpy takes ~1.3 ms of host time a MB (42-45 ms for 14336x4096)."""
    _check(blocks, "blocks")
    rows = blocks.shape[0]
    xp: Any = mx if isinstance(blocks, mx.array) else np
    src = blocks.reshape(rows, -1, _BLOCKS, 18)
    out = xp.concatenate([src[..., 2:].reshape(rows, -1, _QUANTS),
                          src[..., :2].reshape(rows, -1, 2 * _BLOCKS)], axis=2)
    return out.reshape(blocks.shape)


def unpack_q4_0(packed: np.ndarray) -> np.ndarray:
    """`pack_q4_0`'s inverse: the packed layout back to the file's blocks."""
    src = _super_blocks(packed, "packed")
    out = np.empty(src.shape[:2] + (_BLOCKS, 18), np.uint8)
    out[..., 2:] = src[..., :_QUANTS].reshape(*src.shape[:2], _BLOCKS, 16)
    out[..., :2] = src[..., _QUANTS:].reshape(*src.shape[:2], _BLOCKS, 2)
    return out.reshape(packed.shape)
