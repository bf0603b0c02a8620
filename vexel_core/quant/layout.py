"""Checking that a tensor's bytes fit its type and shape before any format reads them."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vexel_core.errors import TensorDataError
from vexel_core.quant.base import QuantFormat


def matrix_bytes(fmt: QuantFormat, raw: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """*raw* viewed (not copied, when contiguous) as ``uint8[rows, row_bytes]``.

    *shape* is ``(rows, cols)`` in numpy order. Raises `TensorDataError` naming the type, the
    shape and what was expected when the shape is not 2-D, a row is not a whole number of
    blocks, or the byte count is wrong.
    """
    what = f"{fmt.name} matrix of shape {tuple(shape)}"
    if len(shape) != 2 or any(int(n) <= 0 for n in shape):
        raise TensorDataError(f"{what}: expected a 2-D shape (rows, cols) of positive sizes")
    rows, cols = (int(n) for n in shape)
    if cols % fmt.block_elems:
        raise TensorDataError(
            f"{what}: a row of {cols} elements is not a whole number of "
            f"{fmt.block_elems}-element {fmt.name} blocks"
        )
    data = np.asarray(raw).reshape(-1).view(np.uint8)
    row_bytes = fmt.row_bytes(cols)
    if data.size != rows * row_bytes:
        raise TensorDataError(
            f"{what}: expected {rows * row_bytes} bytes ({rows} rows of {row_bytes}), "
            f"got {data.size}"
        )
    return data.reshape(rows, row_bytes)
