"""GPU kernels of the attention backends, with the plain-MLX reference as their oracle.

`paged_decode` runs single-token (decode) attention reading keys and values through the block
table, without gathering them first (the ``paged`` backend's fast path). One CTA per
(sequence, KV head) walks the context in chunks of 32 tokens, one chunk per warp at a time.
A batch too small to fill the GPU gets more warps per CTA (`warp_count`: 4, 8 or 16), so that
the chain of memory round trips per chunk is paid in fewer rounds, and a long context is split
into spans over more CTAs (`split_count`), merged on CUDA by the last CTA of each (sequence,
KV head) to finish (``cuda/merge.cuh``), on Metal by a second kernel (``paged_decode_merge``);
`launch_shape` picks both. `paged_decode_writing` also writes the step's keys and values into
the pools first (a decode step's cache write in the same launch), and may rotate q and the new
keys as it reads them (its *rotation*: the step's rotary embedding in the same launch).

- CUDA (``cuda/paged_decode.cu``, its algorithm in ``cuda/*.cuh``): proven against
  `attend_by_hand` on the H200 (tests marked ``gpu``, with one and three spans and every warp
  count; notes/engine-gpu.md has the figures), and run on the CPU under the CUDA emulation
  in CI.
- Metal (``metal/paged_decode*.metal``): the same algorithm and tiling for Apple Silicon. It
  HAS NEVER BEEN COMPILED BY APPLE'S METAL COMPILER OR RUN ON A GPU (no Apple machine here),
  so it is used only when ``VEXEL_METAL_KERNELS=1`` asks for it; otherwise Apple GPUs take
  the reference path. CI runs it on the CPU as C++, as this module plans and hands it to
  ``mx.fast.metal_kernel`` (tests/emulation.py, MetalRecorder), reading and writing, against
  the same float64 reference as CUDA's; what that cannot check (Metal's compiler rules,
  real simdgroup scheduling, speed) stays unchecked.
"""

from __future__ import annotations

from functools import cache, lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import mlx.core as mx

from vexel_core import gpu
from vexel_core.attention.base import Rotation
from vexel_core.gpu import kernel_backend, source_kernel

_HERE = Path(__file__).parent
WARP_COUNTS = (4, 8, 16)  # warps per CTA that `warp_count` chooses among (template values)
# Launch shape (`launch_shape`), from the H200's 132 SMs. Session 5 split long contexts of
# small batches (benchmarks/decode_attention.py: one request at 8k tokens of context took 327
# us per layer in one span, 71 in 16, wall time); session 9 measured one request at 128-384
# tokens taking 34.5 us of GPU time per layer in 8 CTAs of 4 warps, a pure chain of latencies.
SPREAD_CTAS = 128  # CTAs (sequence x KV head x span) that a split spreads over: one per SM
MIN_SPAN = 256  # context tokens per CTA below which splitting does not pay (Metal)
SPLIT_ABOVE = 512  # contexts up to this stay in one span (a round of 16 warps): no merge launch
# CUDA merges the spans in the kernel (cuda/merge.cuh), so short contexts split too, into
# spans of this many tokens: session 19 timed one request's layer with the cache write at 256
# tokens 16.4 us in one span against 12.2-13.9 in two, and at 512 21.9 against 13.4-15.5 in
# four (4 warps each; the merge's own launch apart).
MERGED_MIN_SPAN = 128
# ... but not up to this many tokens: one span of 8 warps (a round of 32-token chunks) beat
# two or more there in session 25's grid (one request, the write, in-kernel merge, 256 MB
# pools; us a layer): 128 tokens 8x1 12.0 against 8x2 14.5, 256 tokens 8x1 14.2 against
# 16x2 14.6 and 8x2 15.0. Past it, spans in CTAs of 16 warps: 384 tokens 16x4 14.6 (16x1
# 17.0), 512 16x4 15.0 (16x1 20.0), 1024 16x8 16.3 (8x4 18.7 and a merge launch).
MERGED_SPLIT_ABOVE = 256
WARP_BUDGET = 2048  # warps (CTAs x warps per CTA) the GPU runs at once: about 16 per SM
# Static shared memory per CTA: CUDA's limit without opting in, Apple GPUs' threadgroup memory
_SHARED_LIMIT = {"cuda": 48 * 1024, "metal": 32 * 1024}
# `rope_freqs`: the rotation's inverse frequencies (`Rotation.inv_freq`; a placeholder without
# one); `after`: the pools' latest in-place write token (vexel_core/kvcache/pool.py), which
# orders the kernel after that write in MLX's CUDA graph; `k_new`, `v_new`, `new_slots`: the
# rows that a writing launch stores first (placeholders otherwise), and `done` its token.
# The CUDA kernel's headers (cuda/*.cuh), in the order it includes them.
HEADERS = ("paged_decode", "rope", "merge", "paged_decode_kernel")
# `counters`: the split merge's counts (`_counters`, CUDA; Metal merges by a second kernel).
_INPUTS = ["q", "k_pool", "v_pool", "tables", "ctx_lens", "fparams", "iparams", "rope_freqs",
           "counters", "after", "k_new", "v_new", "new_slots"]


# The launch planning below is pure and asked again by every layer of a step with the same
# arguments: cached, it costs a dict lookup (benchmarks/attention_host.py, session 14).
@lru_cache(maxsize=256)
def supports(head_dim: int, rep: int, dtype: mx.Dtype, warps: int = WARP_COUNTS[0],
             backend: str = "cuda") -> bool:
    """Whether the kernel takes these heads in CTAs of *warps* warps: rows of whole 16-byte
    words (so every row of a pool, a whole allocation, is 16-byte aligned), shared memory
    within the backend's static limit. (Registers: 16 warps need at most 128 a thread; every
    head shape that fits 16 warps' shared memory fits, with nvcc 13 for sm_90 (119 for D = 128
    in bfloat16, REP 4, since session 28's prologue), checked by
    tests/test_attention_kernels.py where nvcc exists.)"""
    return head_dim * dtype.size % 16 == 0 and shared_bytes(head_dim, rep, warps, backend) <= \
        _SHARED_LIMIT[backend]


def shared_bytes(head_dim: int, rep: int, warps: int, backend: str = "cuda") -> int:
    """Static shared memory of a CTA (paged_decode.cu): s_q and s_acc; s_p and s_row; s_m and
    s_l; on CUDA also s_freq (the rotation's frequencies), all 4-byte elements."""
    freqs = head_dim // 2 if backend == "cuda" else 0
    return 4 * (rep * head_dim * (warps + 1) + warps * (rep + 1) * 32 + 2 * warps * rep + freqs)


@cache
def _kernel(backend: str, folder: Path = _HERE) -> Any:
    # Inputs are read through their strides: a copy of a view (the new values are a slice of
    # the fused q/k/v product) would cost a launch. *folder*: where the sources lie (an older
    # copy for benchmarks/ab.py's --old-attention)
    return source_kernel(backend, folder, "paged_decode", _INPUTS, ["out", "part", "done"],
                         headers=HEADERS,
                         ensure_row_contiguous=False)


@cache
def _placeholders(dtype: mx.Dtype) -> tuple[mx.array, ...]:
    """``rope_freqs`` for a launch that does not rotate, ``after``, ``k_new``, ``v_new`` and
    ``new_slots`` for one that does not write, made (and evaluated) once. Each at least
    `gpu.TOKEN_SHAPE`, out of MLX's small pool (`gpu.TOKEN_SHAPE` says why); a kernel reads
    element 0 of each, or none."""
    token = gpu.TOKEN_SHAPE[0]
    arrays = (mx.zeros((token,), dtype=mx.float32), mx.zeros((token,), dtype=mx.int32),
              mx.zeros((1, 1, token), dtype=dtype), mx.zeros((1, 1, token), dtype=dtype),
              mx.zeros((token,), dtype=mx.int32))
    mx.eval(arrays)
    return arrays


@cache
def _counters(n: int) -> mx.array:
    """The split merge's counts for *n* (sequence, KV head) pairs: zero, and left so by every
    launch (its last CTA of each pair resets its count). Shared by every launch of that many
    pairs, so those launches must be ordered: MLX runs launches that do not depend on each
    other's outputs at the same time (its CUDA graphs follow the data). A model's layers are
    ordered by their data; `compile_variants` evaluates its launches one at a time.
    Evaluated: a kernel reads plain data. At least `gpu.TOKEN_SHAPE`: two pairs' counts (8
    bytes) would come from MLX's small pool of managed memory, where each atomic add crosses
    the bus (session 30: a launch whose 110 CTAs added to an 8-byte count there took 153 us,
    18 with the count in device memory)."""
    counters = mx.zeros((max(n, gpu.TOKEN_SHAPE[0]),), dtype=mx.uint32)
    mx.eval(counters)
    return counters


@lru_cache(maxsize=256)
def _parameters(scale: float, softcap: float, window: int, splits: int,
                rope: tuple[int, bool, float, float], new_heads: tuple[int, int],
                write: bool) -> tuple[mx.array, ...]:
    """The kernel's ``fparams`` and ``iparams``, made once per value: arrays made on the host
    cost their first GPU reader a page fault on CUDA (benchmarks/host_arrays.py), and these
    were made anew for every layer of every step. Evaluated at once, so that they hold plain
    data any thread's graph may read (an unevaluated array belongs to its thread's stream)."""
    dims, interleaved, rope_scale, attn_factor = rope
    params = (mx.array([scale, softcap, rope_scale, attn_factor], dtype=mx.float32),
              mx.array([window, splits, dims, int(interleaved), *new_heads, int(write)],
                       dtype=mx.int32))
    mx.eval(params)
    return params


def split_count(batch: int, n_kv_heads: int, max_context: int, backend: str = "cuda") -> int:
    """Spans to split each sequence's context into: 1 once the batch alone gives
    `SPREAD_CTAS` CTAs; else enough spans to reach that many CTAs, on CUDA (the kernel merges
    them) above `MERGED_SPLIT_ABOVE` tokens and never under `MERGED_MIN_SPAN` tokens each, on
    Metal above `SPLIT_ABOVE` tokens and never under `MIN_SPAN` (the merge is a launch
    there)."""
    above, min_span = ((MERGED_SPLIT_ABOVE, MERGED_MIN_SPAN) if backend == "cuda"
                       else (SPLIT_ABOVE, MIN_SPAN))
    if max_context <= above:
        return 1
    return max(1, min(SPREAD_CTAS // (batch * n_kv_heads), max_context // min_span))


def warp_count(ctas: int, span: int, head_dim: int, rep: int, dtype: mx.Dtype,
               backend: str = "cuda", spans: int = 1) -> int:
    """Warps per CTA for a grid of *ctas* CTAs of up to *span* context tokens each (*spans* a
    sequence), within `WARP_BUDGET` warps (a full batch keeps 4) and what shared memory allows
    (`supports`). On CUDA 8 for a sequence in one span of at most `MERGED_SPLIT_ABOVE`
    tokens, else 16: a chain of memory latencies wants warps, even idle ones' share of the
    CTA's other work (session 25's grid, at `MERGED_SPLIT_ABOVE`). On Metal (never measured)
    4, doubled while the span has more chunks of 32 tokens than warps."""
    if backend == "cuda":
        wanted = 8 if spans == 1 and span <= MERGED_SPLIT_ABOVE else 16
    else:
        wanted = WARP_COUNTS[0]
        while wanted < WARP_COUNTS[-1] and span > wanted * 32:
            wanted *= 2
    warps = WARP_COUNTS[0]
    for more in WARP_COUNTS[1:]:
        if (more > wanted or ctas * more > WARP_BUDGET
                or not supports(head_dim, rep, dtype, more, backend)):
            break
        warps = more
    return warps


@lru_cache(maxsize=1024)
def launch_shape(batch: int, n_kv_heads: int, max_context: int, head_dim: int, rep: int,
                 dtype: mx.Dtype, backend: str = "cuda",
                 splits: int | None = None) -> tuple[int, int]:
    """(warps per CTA, spans per sequence) for a decode of *batch* sequences of at most
    *max_context* tokens: `split_count` (unless *splits* is given), then `warp_count` for the
    spans."""
    splits = splits or split_count(batch, n_kv_heads, max_context, backend)
    span = -(-max_context // splits)
    return (warp_count(batch * n_kv_heads * splits, span, head_dim, rep, dtype, backend, splits),
            splits)


@cache
def compile_variants(head_dim: int, rep: int, dtype: mx.Dtype, block_size: int,
                     backend: str) -> None:
    """Compile now every warp count `launch_shape` may choose for these heads, one span or
    several (and on Metal the merge); a writing launch and a reading one share their kernel
    (writing is a runtime value).
    NVRTC takes a second or two a variant on the H200, and a variant first met while serving
    stalls every request in flight: in session 9, 64 requests of 512 tokens waited 4.0 s for
    their first token (1.0 s before the warp count varied), batches of 16-32 being the first to
    take 8- and 16-warp CTAs.
    One launch an evaluation: launches of one evaluation that share no data run at the same
    time in MLX's CUDA graph, and these share the split merge's counts of one (sequence, KV
    head) pair (`_counters`). Evaluated together, their interleaved counting left a 1 there
    (session 34, H200: a test process whose engines had two KV heads, so that no other launch
    used those counts), from which every later split launch of one pair (one request to a
    model of one KV head) would have merged a span short."""
    q = mx.zeros((1, rep, head_dim), dtype=dtype)
    pool = mx.zeros((block_size, 1, head_dim), dtype=dtype)
    tables, lens = mx.zeros((1, 1), dtype=mx.int32), mx.ones((1,), dtype=mx.int32)
    for w in WARP_COUNTS:
        if supports(head_dim, rep, dtype, w, backend):
            for s in (1, 2):
                mx.eval(paged_decode(q, pool, pool, tables, lens, block_size=block_size,
                                     scale=1.0, backend=backend, warps=w, splits=s))


@cache
def _merge_kernel(backend: str) -> Any:
    return source_kernel(backend, _HERE, "paged_decode_merge", ["part"], ["out"],
                         headers=("paged_decode",))


def _int32(a: mx.array) -> mx.array:
    """*a* as int32: itself when it is (the step's tables, lengths and slots always are)."""
    return a if a.dtype == mx.int32 else a.astype(mx.int32)


def merge_splits(part: mx.array, dtype: mx.Dtype, backend: str) -> mx.array:
    """``part[B, Hq, S, 2 + D]`` (max, sum, accumulator per span) -> ``[B, Hq, D]``, in one
    launch (``metal/paged_decode_merge.metal``; on CUDA the decode kernel merges)."""
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
    max_context: int = 0, splits: int | None = None, warps: int | None = None,
    prefetch: bool = True, after: mx.array | None = None,
) -> mx.array:
    """Attention of one query token per sequence over its cached keys.

    ``q[B, Hq, D]``; pools ``[slots, Hkv, D]`` (whole arrays, as `KVPool` makes them);
    ``tables[B, nb]`` int32 block ids; ``ctx_lens[B]`` tokens each query sees (the newest
    ones, within *window*). *max_context* (the longest of ``ctx_lens``, known on the host)
    lets a small batch take more warps per CTA and split long contexts over more CTAs
    (`launch_shape`), whose spans a second kernel merges; *splits* and *warps* force either
    (tests, benchmarks), as does *prefetch* = False the kernel without its prefetch
    (benchmarks). *after*: the token of the pools' latest in-place write
    (`KVPool.read_token`), which orders this kernel after it. Returns ``[B, Hq, D]`` in q's
    dtype. *init_value* poisons the outputs before the run (tests). Raises ValueError when no
    kernel runs on this device or `supports` says no.
    """
    out, _ = _launch(q, k_pool, v_pool, tables, ctx_lens, None, block_size=block_size,
                     scale=scale, softcap=softcap, window=window, backend=backend,
                     init_value=init_value, max_context=max_context, splits=splits,
                     warps=warps, prefetch=prefetch, after=after)
    return out


def paged_decode_writing(
    q: mx.array, k_new: mx.array | None, v_new: mx.array | None, new_slots: mx.array,
    k_pool: mx.array, v_pool: mx.array, tables: mx.array, ctx_lens: mx.array, *,
    block_size: int, scale: float, softcap: float | None = None, window: int | None = None,
    backend: str | None = None, init_value: float | None = None, max_context: int = 0,
    splits: int | None = None, warps: int | None = None, after: mx.array | None = None,
    rotation: Rotation | None = None, packed: bool = False,
) -> tuple[mx.array, mx.array]:
    """`paged_decode` of a decode step that also stores the step's keys and values: rows
    ``k_new``/``v_new`` ``[B, Hkv, D]`` (pool dtype; views are read as they are) go into the
    pools at ``new_slots[B]``, in place, before the attention reads them. Each must be the
    slot of its sequence's newest token, the last of its ``ctx_lens`` tokens. One launch
    where `KVPool.write` and `paged_decode` take two. With *rotation*, q and ``k_new`` come
    unrotated and are rotated at each sequence's newest position (``ctx_lens - 1``), each
    element rounded to the pool's dtype, as the rotation's own launch would leave them.
    *packed*: q is a fused projection's heads ``[B, Hq + 2 Hkv, D]``, q's, then the new
    keys', then the new values' (k_new and v_new None), read where they lie: slices of it
    would each be one more array for MLX to handle in every step (`Unrotated.heads`).
    Returns (out, token): the token orders the pools' next readers after this write
    (`KVPool.wrote`)."""
    B, Hkv, D = q.shape[0], k_pool.shape[1], q.shape[2]
    new_heads = (0, 0)
    if packed:
        if k_new is not None or v_new is not None:
            raise ValueError("packed: the new rows are q's last heads; k_new, v_new: expected "
                             "None")
        Hq = q.shape[1] - 2 * Hkv
        if Hq <= 0:
            raise ValueError(f"packed q {q.shape}: expected [B, Hq + {2 * Hkv}, D], the query "
                             f"heads then the pool's {Hkv} KV heads for keys and for values")
        k_new = v_new = q
        new_heads = (Hq, Hq + Hkv)
    elif k_new is None or v_new is None:
        raise ValueError("k_new, v_new: expected the new rows [B, Hkv, D] (or packed=True)")
    else:
        for name, a in (("k_new", k_new), ("v_new", v_new)):
            if a.shape != (B, Hkv, D):
                raise ValueError(f"{name} {a.shape}: expected {(B, Hkv, D)}, one row per "
                                 f"sequence and KV head")
    if k_new.dtype != k_pool.dtype or v_new.dtype != k_pool.dtype:
        raise ValueError(f"new rows {k_new.dtype}/{v_new.dtype}: expected the pool's "
                         f"{k_pool.dtype}")
    if new_slots.shape != (B,):
        raise ValueError(f"new_slots {new_slots.shape}: expected ({B},), a slot per sequence")
    return _launch(q, k_pool, v_pool, tables, ctx_lens, (k_new, v_new, new_slots),
                   block_size=block_size, scale=scale, softcap=softcap, window=window,
                   backend=backend, init_value=init_value, max_context=max_context,
                   splits=splits, warps=warps, prefetch=True, after=after, rotation=rotation,
                   new_heads=new_heads)


class _Plan(NamedTuple):
    """What a launch of a shape needs besides its arrays (`_plan`)."""

    template: list[tuple[str, Any]]
    grid: tuple[int, int, int]
    threadgroup: tuple[int, int, int]
    output_shapes: list[tuple[int, ...]]
    output_dtypes: list[mx.Dtype]
    params: tuple[mx.array, ...]


@lru_cache(maxsize=256)
def _plan(B: int, Hq: int, Hkv: int, D: int, dtype: mx.Dtype, block_size: int, warps: int,
          splits: int, write: bool, prefetch: bool, scale: float, softcap: float, window: int,
          rope: tuple[int, bool, float, float], new_heads: tuple[int, int],
          backend: str) -> _Plan:
    """The launch of a shape, made once: every layer of a step asks for the same one."""
    if Hq % Hkv:
        raise ValueError(f"q's {Hq} heads do not share the pool's {Hkv} KV heads evenly")
    rep = Hq // Hkv
    if warps not in WARP_COUNTS or not supports(D, rep, dtype, warps, backend):
        raise ValueError(f"paged_decode does not take heads of {D} x {dtype} with {rep} "
                         f"query heads per KV head in CTAs of {warps} warps")
    threads = warps * 32
    return _Plan(
        template=[("T", dtype), ("D", D), ("REP", rep), ("BS", block_size), ("WARPS", warps),
                  ("PREFETCH", prefetch)],
        grid=(B * Hkv * splits * threads, 1, 1), threadgroup=(threads, 1, 1),
        # out (on Metal with spans, the merge kernel's), part (the spans'), and done; the
        # unused ones tiny (`gpu.TOKEN_SHAPE`)
        output_shapes=[(B, Hq, D) if splits == 1 or backend == "cuda" else gpu.TOKEN_SHAPE,
                       gpu.TOKEN_SHAPE if splits == 1 else (B, Hq, splits, 2 + D),
                       gpu.TOKEN_SHAPE],
        output_dtypes=[dtype, mx.float32, mx.int32],
        params=_parameters(scale, softcap, window, splits, rope, new_heads, write))


def _launch(
    q: mx.array, k_pool: mx.array, v_pool: mx.array, tables: mx.array, ctx_lens: mx.array,
    new: tuple[mx.array, mx.array, mx.array] | None, *, block_size: int, scale: float,
    softcap: float | None, window: int | None, backend: str | None, init_value: float | None,
    max_context: int, splits: int | None, warps: int | None, prefetch: bool,
    after: mx.array | None, rotation: Rotation | None = None,
    new_heads: tuple[int, int] = (0, 0),
) -> tuple[mx.array, mx.array]:
    """The kernel's launch. *new_heads*: the first heads of the new keys and of the new values
    in their arrays (nonzero where q, k_new and v_new are one packed array, whose first
    ``new_heads[0]`` heads are q's)."""
    backend = backend or kernel_backend()
    if backend is None:
        raise ValueError("paged_decode needs a GPU kernel backend")
    B, _, D = q.shape
    Hq = new_heads[0] or q.shape[1]
    Hkv, dtype = k_pool.shape[1], q.dtype
    if k_pool.dtype != dtype:
        raise ValueError(f"q {q.shape} {dtype} does not fit the pool {k_pool.shape} "
                         f"{k_pool.dtype}")
    W, S = launch_shape(B, Hkv, max_context, D, Hq // Hkv, dtype, backend, splits)
    rope = (0, False, 0.0, 1.0) if rotation is None else rotation[:4]
    p = _plan(B, Hq, Hkv, D, dtype, block_size, warps or W, S, new is not None, prefetch, scale,
              softcap or 0.0, window or 0, rope, new_heads, backend)
    extra = {} if init_value is None else {"init_value": init_value}
    placeholder_freqs, placeholder_after, *placeholder_new = _placeholders(dtype)
    k_new, v_new, new_slots = new if new is not None else placeholder_new
    out, part, done = _kernel(backend)(
        inputs=[q, k_pool, v_pool, _int32(tables), _int32(ctx_lens), *p.params,
                placeholder_freqs if rotation is None else rotation.inv_freq, _counters(B * Hkv),
                placeholder_after if after is None else after, k_new, v_new, _int32(new_slots)],
        template=p.template, grid=p.grid, threadgroup=p.threadgroup,
        output_shapes=p.output_shapes, output_dtypes=p.output_dtypes, **extra)
    return (out if S == 1 or backend == "cuda" else merge_splits(part, dtype, backend)), done
