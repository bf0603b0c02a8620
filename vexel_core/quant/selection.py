"""Which implementation computes a quantized matrix product ``x @ W.T``.

Three paths exist for a GGUF block-format weight (`BlockWeight`):

* ``gguf_kernel``: the GGUF-native GPU kernels of `vexel_core.quant.kernels`, reading the
  file's blocks;
* ``mlx_affine``: MLX's ``quantized_matmul`` on the weight's exact affine terms (one term
  for Q4_0 ... Q5_K, a few for Q2_K, Q3_K and Q6_K);
* ``reference``: dequantize to float32, then MLX's matmul (correct everywhere, slow).

`TABLE` picks one per (device kind, format, activation-row bucket). The setting
``engine.quant_path`` overrides it: ``affine`` forces MLX's path and ``kernel`` the GGUF
kernels wherever a GPU backend has them, so the two can be compared in one run
(``VEXEL_ENGINE__QUANT_PATH=kernel``; benchmarks/kernels.py times both side by side). On
CUDA, ``affine`` cannot be had for the formats in `CUDA_AFFINE_FAILS`: they keep the kernels.

What the table rests on (notes/gpu-kernels.md): on the H200 every format's kernels passed
their GPU tests (products at 1, 3, 8 and 33 activation rows on poisoned outputs, dequantization
bit for bit), and in the same run MLX's affine path failed to launch for Q2_K, Q3_K and Q6_K
(``cuGraphAddKernelNode ... invalid argument``), so CUDA sends every format and row count to
the kernels. Timed there at 14336x4096 with bf16 activations (the README's kernel paragraph
has the figures): one row of Q4_0 takes 12.5 us in ``gemv_int8`` (Nsight Compute) where MLX's
affine ``quantized_matmul`` takes several times that, and 512 rows of every format take 1.04-1.34x
MLX's bf16 matmul where the affine path takes 6-26x it (benchmarks/kernels.py, session 39).
Metal keeps the affine path: its kernels were never compiled.
"""

from __future__ import annotations

from bisect import bisect_left
from enum import Enum
from functools import cache
from typing import Literal

import mlx.core as mx
from gguf import GGMLQuantizationType

from vexel_core.config import get_settings
from vexel_core.quant.kernels import KERNEL_TYPES, gpu_backend

DeviceKind = Literal["cuda", "metal", "cpu"]
QuantMode = Literal["auto", "kernel", "affine"]


class QuantPath(str, Enum):
    GGUF_KERNEL = "gguf_kernel"
    MLX_AFFINE = "mlx_affine"
    REFERENCE = "reference"


# Activation-row buckets: decode (1-8 rows), small batches (9-64), prefill (65+).
ROW_BUCKETS = (8, 64)

A = QuantPath.MLX_AFFINE
K = QuantPath.GGUF_KERNEL
# Per format: the path for each row bucket (decode, small batch, prefill).
TABLE: dict[DeviceKind, dict[GGMLQuantizationType, tuple[QuantPath, QuantPath, QuantPath]]] = {
    "cuda": {t: (K, K, K) for t in KERNEL_TYPES},
    "metal": {t: (A, A, A) for t in KERNEL_TYPES},  # Metal kernels never compiled
    "cpu": {t: (A, A, A) for t in KERNEL_TYPES},  # no CPU kernels
}
del A, K

# MLX 0.32's CUDA affine product fails to launch ("cuGraphAddKernelNode ... invalid argument")
# for these formats, whose affine terms are the only ones with groups of 128 columns (seen in
# sessions 2, 3 and 6 on the H200): a forced ``affine`` would fail at the first product.
CUDA_AFFINE_FAILS = frozenset({GGMLQuantizationType.Q2_K, GGMLQuantizationType.Q3_K,
                               GGMLQuantizationType.Q6_K})


def row_bucket(rows: int) -> int:
    """Index into a `TABLE` entry for *rows* activation rows."""
    return bisect_left(ROW_BUCKETS, rows)


@cache
def select(
    ggml_type: GGMLQuantizationType, device: DeviceKind, bucket: int, mode: QuantMode = "auto"
) -> QuantPath:
    """The path for *ggml_type* on *device* for activation-row *bucket* (`row_bucket`)."""
    has_kernel = device != "cpu" and ggml_type in KERNEL_TYPES
    if mode == "affine" and not (device == "cuda" and ggml_type in CUDA_AFFINE_FAILS):
        return QuantPath.MLX_AFFINE
    if mode == "kernel" and has_kernel:
        return QuantPath.GGUF_KERNEL
    entry = TABLE[device].get(ggml_type)
    return entry[bucket] if entry is not None else QuantPath.REFERENCE


def device_kind() -> DeviceKind:
    """Where MLX computes by default: ``cuda``, ``metal`` or ``cpu``."""
    return gpu_backend() or "cpu"


def paths_on_this_device(ggml_type: GGMLQuantizationType) -> set[QuantPath]:
    """Every path a product with *ggml_type* can take here, over all row buckets."""
    mode = get_settings().engine.quant_path
    return {select(ggml_type, device_kind(), b, mode) for b in range(len(ROW_BUCKETS) + 1)}


def select_for(ggml_type: GGMLQuantizationType, x: mx.array) -> QuantPath:
    """The path for ``x @ W.T`` now: device, rows of *x* and the ``engine.quant_path`` setting
    (read at every product: a process may change it between two)."""
    rows = x.size // x.shape[-1] if x.ndim else 1
    return select(ggml_type, device_kind(), row_bucket(rows), get_settings().engine.quant_path)
