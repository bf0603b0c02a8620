"""GPU kernels of the attention backends, with the plain-MLX reference as their oracle.

`paged_decode` runs single-token (decode) attention reading keys and values through the block
table, without gathering them first (the ``paged`` backend's fast path). A batch too small to
fill the GPU splits long contexts into spans over more CTAs (`split_count`), merged by a
second kernel (``paged_decode_merge``).

- CUDA (``cuda/paged_decode.cu``, ``cuda/paged_decode_merge.cu``): proven against
  `attend_by_hand` on the H200 (tests marked ``gpu``, with one and three spans;
  notes/engine-gpu.md has the figures), and run on the CPU under the CUDA emulation in CI.
- Metal (``metal/paged_decode*.metal``): the same algorithm and tiling for Apple Silicon. It
  HAS NEVER BEEN COMPILED OR RUN (no Apple machine here), so it is used only when
  ``VEXEL_METAL_KERNELS=1`` asks for it; otherwise Apple GPUs take the reference path.
"""

from __future__ import annotations

from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import mlx.core as mx

from vexel_core.gpu import cuda_header, kernel_backend

_HERE = Path(__file__).parent
WARPS = 4
# Split-context thresholds, from benchmarks/decode_attention.py on the H200 (notes/engine-gpu.md,
# session 5): one request at 8k tokens of context took 327 us per layer in one span, 71 in 16.
TARGET_CTAS = 256  # CTAs (sequence x KV head x span) worth filling the GPU with
MIN_SPAN = 512  # context tokens per CTA below which splitting did not pay
# `after`: the pools' latest in-place write token (vexel_core/kvcache/pool.py); unused by the
# body, it orders the kernel after the write in MLX's CUDA graph
_INPUTS = ["q", "k_pool", "v_pool", "tables", "ctx_lens", "fparams", "iparams", "after"]


def supports(head_dim: int, rep: int, dtype: mx.Dtype) -> bool:
    """Whether the kernel takes these heads: rows of whole 16-byte words (so every row of a
    pool, a whole allocation, is 16-byte aligned), shared memory within 48 KiB."""
    # s_q and s_acc; s_p and s_row; s_m and s_l (paged_decode.cu), all 4-byte elements
    smem = 4 * (rep * head_dim * (WARPS + 1) + WARPS * (rep + 1) * 32 + 2 * WARPS * rep)
    return head_dim * dtype.size % 16 == 0 and smem <= 48 * 1024


@cache
def _kernel(backend: str) -> Any:
    if backend == "cuda":
        return mx.fast.cuda_kernel(
            name="vx_paged_decode", input_names=_INPUTS, output_names=["out", "part"],
            source=(_HERE / "cuda" / "paged_decode.cu").read_text(),
            header=cuda_header([_HERE / "cuda" / "paged_decode.cuh"]))
    return mx.fast.metal_kernel(
        name="vx_paged_decode", input_names=_INPUTS, output_names=["out", "part"],
        source=(_HERE / "metal" / "paged_decode.metal").read_text())


@lru_cache(maxsize=256)
def _parameters(scale: float, softcap: float, window: int, splits: int) -> tuple[mx.array, ...]:
    """The kernel's ``fparams`` and ``iparams``, made once per value: arrays made on the host
    cost their first GPU reader a page fault on CUDA (benchmarks/host_arrays.py), and these
    were made anew for every layer of every step. Evaluated at once, so that they hold plain
    data any thread's graph may read (an unevaluated array belongs to its thread's stream)."""
    params = (mx.array([scale, softcap], dtype=mx.float32),
              mx.array([window, splits], dtype=mx.int32))
    mx.eval(params)
    return params


def split_count(batch: int, n_kv_heads: int, max_context: int) -> int:
    """Spans to split each sequence's context into: enough CTAs to fill the GPU when the batch
    alone does not, never spans under `MIN_SPAN` tokens. 1 for most batched decoding."""
    by_gpu = TARGET_CTAS // (batch * n_kv_heads)
    return max(1, min(by_gpu, max_context // MIN_SPAN))


@cache
def _merge_kernel(backend: str) -> Any:
    if backend == "cuda":
        return mx.fast.cuda_kernel(
            name="vx_paged_decode_merge", input_names=["part"], output_names=["out"],
            source=(_HERE / "cuda" / "paged_decode_merge.cu").read_text(),
            header=cuda_header([_HERE / "cuda" / "paged_decode.cuh"]))
    return mx.fast.metal_kernel(
        name="vx_paged_decode_merge", input_names=["part"], output_names=["out"],
        source=(_HERE / "metal" / "paged_decode_merge.metal").read_text())


def merge_splits(part: mx.array, dtype: mx.Dtype, backend: str) -> mx.array:
    """``part[B, Hq, S, 2 + D]`` (max, sum, accumulator per span) -> ``[B, Hq, D]``, in one
    launch (`paged_decode_merge.cu`)."""
    B, Hq, _, width = part.shape
    D = width - 2
    (out,) = _merge_kernel(backend)(
        inputs=[part], template=[("T", dtype), ("D", D)],
        grid=(B * Hq * D, 1, 1), threadgroup=(256, 1, 1),
        output_shapes=[(B, Hq, D)], output_dtypes=[dtype])
    return out


def paged_decode(
    q: mx.array, k_pool: mx.array, v_pool: mx.array, tables: mx.array, ctx_lens: mx.array,
    *, block_size: int, scale: float, softcap: float | None = None, window: int | None = None,
    backend: str | None = None, init_value: float | None = None,
    max_context: int = 0, splits: int | None = None, after: mx.array | None = None,
) -> mx.array:
    """Attention of one query token per sequence over its cached keys.

    ``q[B, Hq, D]``; pools ``[slots, Hkv, D]``; ``tables[B, nb]`` int32 block ids;
    ``ctx_lens[B]`` tokens each query sees (the newest ones, within *window*).
    *max_context* (the longest of ``ctx_lens``, known on the host) lets a small batch split
    its contexts over more CTAs (`split_count`), whose spans a second kernel merges;
    *splits* forces a count (tests). *after*: the token of the pools' latest in-place write
    (`KVPool.read_token`), which orders this kernel after it.
    Returns ``[B, Hq, D]`` in q's dtype. *init_value* poisons the outputs before the run
    (tests). Raises ValueError when no kernel runs on this device or `supports` says no.
    """
    backend = backend or kernel_backend()
    if backend is None:
        raise ValueError("paged_decode needs a GPU kernel backend")
    B, Hq, D = q.shape
    Hkv = k_pool.shape[1]
    if Hq % Hkv or k_pool.dtype != q.dtype:
        raise ValueError(f"q {q.shape} {q.dtype} does not fit the pool {k_pool.shape} "
                         f"{k_pool.dtype}")
    if not supports(D, Hq // Hkv, q.dtype):
        raise ValueError(f"paged_decode does not take heads of {D} x {q.dtype} with "
                         f"{Hq // Hkv} query heads per KV head")
    S = splits or split_count(B, Hkv, max_context)
    threads = WARPS * 32
    extra = {} if init_value is None else {"init_value": init_value}
    out, part = _kernel(backend)(
        inputs=[q, k_pool, v_pool, tables.astype(mx.int32), ctx_lens.astype(mx.int32),
                *_parameters(scale, softcap or 0.0, window or 0, S),
                mx.zeros((1,), dtype=mx.int32) if after is None else after],
        template=[("T", q.dtype), ("D", D), ("REP", Hq // Hkv), ("BS", block_size),
                  ("WARPS", WARPS)],
        grid=(B * Hkv * S * threads, 1, 1), threadgroup=(threads, 1, 1),
        output_shapes=[(B, Hq, D), (1,)] if S == 1 else [(1,), (B, Hq, S, 2 + D)],
        output_dtypes=[q.dtype, mx.float32], **extra,
    )
    return out if S == 1 else merge_splits(part, q.dtype, backend)
