"""GGUF-native quantized matrix products on the GPU.

`gguf_matmul(x, raw, ggml_type)` computes ``x @ W.T`` straight from the file's blocks
(``raw``: uint8 ``[rows, row_bytes]``, as `BlockWeight.raw` holds them) for Q4_0, Q4_1, Q5_0,
Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K and Q6_K:

* few activation rows (decode): a matrix-vector kernel that reads the blocks once
  (`KernelLibrary.gemv`); on CUDA one to four rows of every format but Q2_K and Q3_K
  (`INT8_ROWS`, by format and weight size) are rounded to int8 and multiplied by ``dp4a``
  (``gemv_int8``, as llama.cpp's mmvq does), `gguf_gated`
  returns ``act(g) * u`` of a fused gate/up weight from the same kernel, `gguf_add_norm`
  the residual add and the RMS norm after the product (a pre-norm block's), and
  `gguf_feed_forward` a block's whole gated feed-forward part with that add and norm, in one
  launch (packed Q4_0);
* a few more rows on CUDA (a batch of decoding requests): the tensor cores, each weight read and
  decoded once (``gemm_packed`` for 3-16 rows of packed Q4_0, ``gemm_blocks`` for up to 16
  rows of the file's blocks of every format, from where the kernels above stop, rows of a
  multiple of 256 columns;
  ``gemm_blocks`` has a Metal twin, never compiled by Apple's compiler);
* many rows (prefill, from `PREFILL_ROWS`): the blocks dequantized into ``x``'s dtype by a
  kernel, a slice of rows at a time, then MLX's matmul.

Every function takes ``packed=True`` for Q4_0 whose ``raw`` is repacked into 1,024-element
super-blocks (`vexel_core.quant.kernels.packed`), which `BlockWeight` does on CUDA.

Backends: CUDA (``cuda/``) and Metal (``metal/``), same names and tiling. The CUDA kernels
passed their GPU tests on an H200 and are CUDA's default path (`vexel_core.quant.selection`);
the Metal ones have never been compiled by Apple's compiler (CI runs them on the CPU as C++,
tests/emulation.py), so Metal uses them only when forced (``engine.quant_path = "kernel"``).
"""

from __future__ import annotations

import mlx.core as mx
from gguf import GGMLQuantizationType

from vexel_core.quant.kernels.library import (
    ACTIVATION_DTYPES,
    ACTIVATION_TILES,
    KERNEL_TYPES,
    GatedAct,
    GemvTiling,
    KernelLibrary,
    blocks_applies,
    feed_forward_applies,
    gated_applies,
    gemm_applies,
    gpu_backend,
    int8_applies,
    library,
)

__all__ = [
    "ACTIVATION_TILES", "KERNEL_TYPES", "PREFILL_ROWS", "GatedAct", "GemvTiling",
    "KernelLibrary", "gguf_add_norm", "gguf_dequantize", "gguf_feed_forward", "gguf_gated",
    "gguf_matmul", "gpu_backend", "library",
]

# Activation rows from which dequantize-then-matmul takes over from the matrix-vector kernel.
# An estimate (at 16 rows the kernel needs two 8-row passes, each compute-bound); benchmarks/
# kernels.py measures both at 8 and 32 rows to set it.
PREFILL_ROWS = 16
# Largest dequantized slice of a weight held at once on the prefill path.
PREFILL_SLICE_BYTES = 256 << 20


def gguf_matmul(x: mx.array, raw: mx.array, ggml_type: GGMLQuantizationType, *,
                packed: bool = False) -> mx.array:
    """``x[..., K] @ W.T`` -> ``[..., N]`` in x's dtype, W being the blocks ``raw[N, row_bytes]``.

    Runs on MLX's default GPU backend; raises ValueError on the CPU (which keeps the
    reference path) or for a type without kernels.
    """
    backend = gpu_backend()
    if backend is None:
        raise ValueError("gguf_matmul needs MLX's default device to be a GPU")
    lib = library(backend)
    # (each operation skipped when it would change nothing: a token's host time adds up)
    x2 = x if x.ndim == 2 else x.reshape(-1, x.shape[-1])
    if x2.dtype not in (mx.float32, mx.float16, mx.bfloat16):
        x2 = x2.astype(mx.float32)
    if int8_applies(backend, ggml_type, x2.shape, raw.shape[0]):
        y = lib.gemv(x2, raw, ggml_type, packed=packed)
    elif gemm_applies(backend, ggml_type, packed, x2.shape, x2.dtype):
        y = lib.gemm_packed(x2, raw)
    elif blocks_applies(backend, ggml_type, packed, x2.shape, x2.dtype):
        y = lib.gemm_blocks(x2, raw, ggml_type)
    elif x2.shape[0] < PREFILL_ROWS:
        y = lib.gemv(x2, raw, ggml_type, packed=packed)
    else:
        y = _dequantize_matmul(lib, x2, raw, ggml_type, packed)
    if x.ndim != 2:
        y = y.reshape(*x.shape[:-1], raw.shape[0])
    return y if y.dtype == x.dtype else y.astype(x.dtype)


def gguf_gated(x: mx.array, raw: mx.array, ggml_type: GGMLQuantizationType,
               act: GatedAct, *, packed: bool = False) -> mx.array | None:
    """``act(g) * u`` for ``[g, u] = x @ W.T`` split in halves (W: the blocks ``raw``, gate
    rows then up rows) in one kernel, where one exists: the few activation rows ``x[m, K]`` of
    every format but Q2_K and Q3_K that ``gemv_int8`` takes on CUDA (`INT8_ROWS`; its gated
    mode), or the few rows of packed Q4_0 that ``gemm_packed`` takes (its
    gated mode). None elsewhere: the caller multiplies, then applies *act*."""
    backend = gpu_backend()
    if backend is None:
        return None
    if gated_applies(backend, ggml_type, x.shape, x.dtype, raw.shape[0]):
        return library(backend).gemv(x, raw, ggml_type, act=act, packed=packed)
    if gemm_applies(backend, ggml_type, packed, x.shape, x.dtype) and raw.shape[0] % 2 == 0:
        return library(backend).gemm_packed(x, raw, act=act)
    return None


def gguf_add_norm(x: mx.array, raw: mx.array, ggml_type: GGMLQuantizationType,
                  residual: mx.array, weight: mx.array, eps: float, scratch: mx.array, *,
                  packed: bool = False) -> tuple[mx.array, mx.array] | None:
    """``(h, rms_norm(h) * weight)`` for ``h = residual + x @ W.T`` (W: the blocks ``raw``) in
    one kernel, where one exists: one activation row ``x[1, K]`` of every format but Q2_K and
    Q3_K on CUDA, *residual* ``[1, N]`` of x's dtype (``gemv_int8``'s AddNorm epilogue;
    *scratch*: `KernelLibrary.gemv_add_norm`'s). None elsewhere: the caller multiplies, adds and
    normalises."""
    backend = gpu_backend()
    if (backend is None or x.dtype not in ACTIVATION_DTYPES or x.shape[0] != 1
            or not int8_applies(backend, ggml_type, x.shape, raw.shape[0])
            or residual.shape != (1, raw.shape[0]) or residual.dtype != x.dtype
            or weight.shape != (raw.shape[0],)):
        return None
    return library(backend).gemv_add_norm(x, raw, ggml_type, residual, weight, eps, scratch,
                                          packed=packed)


def gguf_feed_forward(x: mx.array, gate_up: mx.array, down: mx.array, act: GatedAct,
                      residual: mx.array, weight: mx.array, eps: float, scratch: mx.array
                      ) -> tuple[mx.array, mx.array] | None:
    """``(h, rms_norm(h) * weight)`` for ``h = residual + down(act(g) * u)``, ``[g, u] = x @
    gate_up.T``, in one kernel where it applies (`feed_forward_applies`: one row on CUDA, both
    weights packed Q4_0 of Llama-like shapes; *scratch*: `KernelLibrary.feed_forward`'s). None
    elsewhere: the caller takes the gated product, then the down product's add and norm."""
    backend = gpu_backend()
    if (not feed_forward_applies(backend, x.shape, x.dtype, gate_up.shape, down.shape)
            or residual.shape != (1, down.shape[0]) or residual.dtype != x.dtype
            or weight.shape != (down.shape[0],)):
        return None
    return library("cuda").feed_forward(x, gate_up, down, act, residual, weight, eps, scratch)


def gguf_dequantize(raw: mx.array, ggml_type: GGMLQuantizationType, dtype: mx.Dtype, *,
                    packed: bool = False) -> mx.array:
    """The blocks ``raw[N, row_bytes]`` as an ``[N, K]`` matrix of *dtype*, on the GPU."""
    backend = gpu_backend()
    if backend is None:
        raise ValueError("gguf_dequantize needs MLX's default device to be a GPU")
    return library(backend).dequantize(raw, ggml_type, dtype, packed=packed)


def _dequantize_matmul(
    lib: KernelLibrary, x: mx.array, raw: mx.array, ggml_type: GGMLQuantizationType,
    packed: bool,
) -> mx.array:
    rows = raw.shape[0]
    step = max(1, PREFILL_SLICE_BYTES // (x.shape[1] * x.dtype.size))
    parts = [
        x @ lib.dequantize(raw[start : start + step], ggml_type, x.dtype, packed=packed).T
        for start in range(0, rows, step)
    ]
    return parts[0] if len(parts) == 1 else mx.concatenate(parts, axis=-1)
