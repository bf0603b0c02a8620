"""GPU kernels of the model's layers: `add_rms_norm`, a residual add and the RMS norm of the
sum in one launch (``RMSNorm.add``'s fast path).

- CUDA (``cuda/add_rms_norm.cu``): proven against ``x + delta`` then ``mx.fast.rms_norm`` on
  the H200 (tests/test_norm_kernels.py, marked ``gpu``), and run on the CPU under the CUDA
  emulation in CI.
- Metal (``metal/add_rms_norm.metal``): the same algorithm. NEVER COMPILED BY APPLE'S METAL
  COMPILER OR RUN ON A GPU (no Apple machine here); used only where
  `vexel_core.gpu.kernel_backend` says "metal". CI runs it on the CPU as C++, as this module
  hands it to ``mx.fast.metal_kernel`` (tests/emulation.py, MetalRecorder), in float32
  against the same float64 reference as CUDA's.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import mlx.core as mx

from vexel_core.gpu import float_constant, source_kernel

_HERE = Path(__file__).parent
_INPUTS = ["x", "delta", "w", "eps"]


def launch_shape(hidden: int, dtype: mx.Dtype) -> tuple[int, int]:
    """(threads a CTA, 16-byte words a thread) for rows of *hidden* elements of *dtype*: one
    word a thread up to 1,024 threads, then more words (a power of two, so that few widths
    compile)."""
    words = hidden * dtype.size // 16
    threads = min(1024, -(-words // 32) * 32)
    return threads, 1 << (-(-words // threads) - 1).bit_length()


def fits(hidden: int, dtype: mx.Dtype) -> bool:
    """Whether rows of *hidden* elements are whole 16-byte words (the kernel's loads)."""
    return hidden * dtype.size % 16 == 0


@cache
def _kernel(backend: str) -> Any:
    return source_kernel(backend, _HERE, "add_rms_norm", _INPUTS, ["residual", "normed"])


def add_rms_norm(x: mx.array, delta: mx.array, weight: mx.array, eps: float, *,
                 backend: str, init_value: float | None = None) -> tuple[mx.array, mx.array]:
    """``(x + delta, rms_norm(x + delta) * weight)`` for ``x``/``delta`` ``[rows, H]`` of one
    dtype, *weight* ``[H]`` cast to it. *init_value* poisons the outputs before the run
    (tests)."""
    if x.ndim != 2 or delta.shape != x.shape or delta.dtype != x.dtype:
        raise ValueError(f"add_rms_norm: x and delta must be [rows, H] of one dtype; got "
                         f"{x.shape} {x.dtype} and {delta.shape} {delta.dtype}")
    if weight.shape != (x.shape[1],):
        raise ValueError(f"add_rms_norm: weight must be [{x.shape[1]}]; got {weight.shape}")
    if not fits(x.shape[1], x.dtype):
        raise ValueError(f"add_rms_norm: rows of {x.shape[1]} x {x.dtype} are not whole "
                         "16-byte words")
    extra = {} if init_value is None else {"init_value": init_value}
    threads, per = launch_shape(x.shape[1], x.dtype)
    residual, normed = _kernel(backend)(
        inputs=[x, delta, weight.astype(x.dtype), float_constant(eps)],
        template=[("T", x.dtype), ("PER", per)],
        grid=(x.shape[0] * threads, 1, 1), threadgroup=(threads, 1, 1),
        output_shapes=[x.shape, x.shape], output_dtypes=[x.dtype, x.dtype], **extra)
    return residual, normed
