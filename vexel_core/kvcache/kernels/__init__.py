"""The in-place cache write on the GPU (`cache_write`); the CPU scatters (`KVPool.write`).

- CUDA (``cuda/cache_write.cu``): proven against the scatter on the H200
  (tests/test_kv_pool.py, marked ``gpu``), and run on the CPU under the CUDA emulation in CI.
  One request decodes ~8% faster with it than with the scatter (two launches per layer;
  notes/engine-gpu.md, session 5).
- Metal (``metal/cache_write.metal``): the same indexing. NEVER COMPILED BY APPLE'S METAL
  COMPILER OR RUN ON A GPU (no Apple machine here); used only where
  `vexel_core.gpu.kernel_backend` says "metal". CI runs it on the CPU as C++, as this module
  hands it to ``mx.fast.metal_kernel`` (tests/emulation.py, MetalRecorder), on strided rows
  as CUDA's.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import mlx.core as mx

from vexel_core import gpu
from vexel_core.gpu import source_kernel

_HERE = Path(__file__).parent
_INPUTS = ["k", "v", "slots", "k_pool", "v_pool", "after"]
_THREADS = 256


@cache
def _kernel(backend: str) -> Any:
    return source_kernel(backend, _HERE, "cache_write", _INPUTS, ["done"],
                         ensure_row_contiguous=False)


def cache_write(
    k: mx.array, v: mx.array, slots: mx.array, k_pool: mx.array, v_pool: mx.array,
    after: mx.array, *, backend: str,
) -> mx.array:
    """Write ``k``/``v`` ``[T, Hkv, D]`` into rows ``slots[T]`` of the pools, in place.

    Returns the write's token (int32 `gpu.TOKEN_SHAPE`, element 0 set): pass it to every
    kernel that reads the pools afterwards, and as *after* to the next write (the previous
    token, or any int32 array).
    """
    n = 2 * k.size
    (done,) = _kernel(backend)(
        inputs=[k.astype(k_pool.dtype), v.astype(v_pool.dtype), slots.astype(mx.int32),
                k_pool, v_pool, after],
        template=[("T", k_pool.dtype)],
        grid=(max(1, -(-n // _THREADS)) * _THREADS, 1, 1), threadgroup=(_THREADS, 1, 1),
        output_shapes=[gpu.TOKEN_SHAPE], output_dtypes=[mx.int32])
    return done
