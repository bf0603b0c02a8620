"""Building and launching the GGUF kernels through MLX's custom-kernel API.

The kernel sources live beside this file: ``common/*.h`` (the block formats and their exact
decoding, shared by both backends), ``cuda/*`` for `mx.fast.cuda_kernel` and ``metal/*`` for
`mx.fast.metal_kernel`. A backend's prelude, the common headers, its memory helpers and its
kernels make the kernel's ``header`` (on CUDA included by path, `vexel_core.gpu.cuda_header`);
the ``.cu``/``.metal`` file of an operation is its body (MLX generates the signature). The
format and the tiling arrive as template arguments, so each (operation, format, activation
dtype, tile) compiles once per process (NVRTC: about 1-2 s each).

On CUDA one activation row of Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K or Q6_K goes to a third
kernel, ``gemv_int8`` (cuda/gemv_int8.cuh): x rounded to 8-bit integers per 32 values, as
llama.cpp's mmvq does, and products by ``__dp4a``. It has no Metal twin: Apple GPUs have no 8-bit
dot instruction. x may also be rounded once beforehand (``round_x``) and handed to it rounded
(``gemv(..., x_rounded=...)``), where each of its CTAs would otherwise round it again. Its gated
mode (``gemv(..., act=...)``) multiplies a fused gate/up weight and returns ``act(g) * u`` in the
same launch: its GPU tests pass on the H200, and one request decodes faster with it than with the
product, a split and MLX's ``act(g) * u`` (session 12, three alternated rounds;
notes/gpu-kernels.md).

Q4_0 may also come repacked (``packed=True``; the layout: `vexel_core.quant.kernels.packed`):
every kernel reads it, as the format ``Q4_0x1024`` (template number `PACKED_Q4_0`), with Q4_0's
tilings; `BlockWeight` keeps Q4_0 so on CUDA. One row of it on x rounded beforehand has a
kernel of its own, ``gemv_packed`` (cuda/gemv_packed.cuh: no staging, each pass's loads in
flight together): 12.2-12.4 us at 14336x4096 on the H200, 70-71% of the copy bandwidth,
against ``gemv_int8``'s 12.5 on the same layout rounding x itself (session 17). Their GPU tests
(the packed layout, round_x, x rounded beforehand, gemv_packed) pass on the H200 (session 17).

A few activation rows of packed Q4_0 (`GEMM_ROWS`: a batch of decoding requests) go to
``gemm_packed`` (cuda/gemm_packed.cuh): the tensor cores' ``mma.sync``, each weight read once
and turned into an operand in registers. CUDA only (Metal keeps Q4_0 as the file has it).
Its GPU tests pass on the H200 (session 40, the weights as the A operand).
A few rows of the file's blocks of every other layout (`BLOCKS_ROWS`: Q8_0, the K formats,
...) go to ``gemm_blocks`` (cuda/gemm_blocks.cuh): the same product, each lane's operands
decoded from chunks staged in shared memory as the float kernel stages them. Its GPU tests
pass on the H200 (session 41). Its Metal twin (metal/gemm.metal, every format Q4_0 included)
multiplies on simdgroup matrices; Metal documents no layout of their elements in the lanes,
so each simdgroup decodes a span of its rows into threadgroup memory and loads it from there.

What is verified (notes/gpu-kernels.md): on an H200, the CUDA kernels equal the reference for
their formats (tests/test_quant_kernels.py, marked ``gpu``; ``gemv_int8`` with x rounded as it
rounds it); off the GPU, the format decoding equals `gguf.quants.dequantize` bit for bit, and
the kernels run on the CPU under an emulation of CUDA threads in CI. The Metal sources keep
the same names and tiling; they have never been compiled by a Metal compiler or run on a GPU
(no Apple machine here). In CI they are compiled as C++ and run on the CPU, each body wrapped
as `mx.fast.metal_kernel` wraps it and launched as planned here (tests/emulation.py,
metal_program), against the same reference as CUDA's. Some of Metal's compiler rules are
checked there too (no pointer leaves threadgroup or device memory, vector loads are aligned,
a threadgroup holds at most 32 KiB); Apple's compiler itself is not.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any, Literal

import mlx.core as mx
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

from vexel_core.gpu import cuda_header, float_constant, on_cuda
from vexel_core.quant.kernels.packed import PACKED_Q4_0, SUPER_BYTES, SUPER_ELEMS

Backend = Literal["cuda", "metal"]
Op = Literal["gemv", "gemv_int8", "gemv_int8_norm", "gemv_packed", "gemm_packed", "gemm_blocks",
             "dequant", "round_x", "feed_forward"]
GatedAct = Literal["silu", "gelu_tanh"]
# gemv_int8's ACT template argument per activation of its gated mode (0: the plain product)
GATED_ACTS: dict[str, int] = {"silu": 1, "gelu_tanh": 2}
# Where gemv_int8 reads x rounded beforehand (round_x's buffer): copied into each CTA's shared
# memory, or read from global memory through L1. gemv_int8's XPRE template argument (0: x as
# it is, rounded by each CTA).
XRounded = Literal["shared", "global"]
X_ROUNDED: dict[str, int] = {"shared": 1, "global": 2}
ROUND_X_THREADS = 64  # round_x's CTAs: a thread a 32-value block (tests/kernel_emulation too)

Q = GGMLQuantizationType
KERNEL_TYPES: frozenset[GGMLQuantizationType] = frozenset(
    {Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1, Q.Q8_0, Q.Q2_K, Q.Q3_K, Q.Q4_K, Q.Q5_K, Q.Q6_K}
)
ACTIVATION_DTYPES = (mx.float32, mx.float16, mx.bfloat16)

CHUNK_ELEMS = 1024  # elements of a row one warp stages at a time (kernels.cuh: CHUNK_ELEMS)
BLOCKS_CHUNK = 256  # the same for gemm_blocks (cuda/gemm_blocks.cuh: GEMM_CHUNK)
ACTIVATION_TILES = (1, 2, 4, 8)  # compiled activation-row counts of the matrix-vector kernel
DEQUANT_WARPS = 4

_HERE = Path(__file__).parent
_HEADERS = {
    "cuda": ("cuda/prelude.cuh", "common/decode.h", "common/formats.h", "cuda/memory.cuh",
             "cuda/kernels.cuh", "cuda/gemv_int8.cuh", "cuda/gemv_packed.cuh",
             "cuda/feed_forward.cuh", "cuda/gemm_packed.cuh", "cuda/gemm_blocks.cuh"),
    "metal": ("metal/prelude.metal", "common/decode.h", "common/formats.h", "metal/memory.metal",
              "metal/kernels.metal", "metal/gemm.metal"),
}
_BODIES = {
    "cuda": {"gemv": "cuda/gemv.cu", "gemv_int8": "cuda/gemv_int8.cu",
             "gemv_int8_norm": "cuda/gemv_int8_norm.cu", "gemv_packed": "cuda/gemv_packed.cu",
             "gemm_packed": "cuda/gemm_packed.cu", "gemm_blocks": "cuda/gemm_blocks.cu",
             "dequant": "cuda/dequant.cu", "round_x": "cuda/round_x.cu",
             "feed_forward": "cuda/feed_forward.cu"},
    "metal": {"gemv": "metal/gemv.metal", "dequant": "metal/dequant.metal",
              "gemm_blocks": "metal/gemm_blocks.metal"},
}
_INPUTS = {"gemv": ["w", "x"], "gemv_int8": ["w", "x"], "gemv_packed": ["w", "xr"],
           "gemm_packed": ["w", "x"], "gemm_blocks": ["w", "x"],
           "dequant": ["w"], "round_x": ["x"],
           "gemv_int8_norm": ["w", "x", "residual", "nw", "eps", "scratch"],
           "feed_forward": ["wgu", "wd", "x", "residual", "nw", "eps", "scratch"]}
# every other operation: ["y"]
_OUTPUTS = {"gemv_int8_norm": ["h", "normed"], "feed_forward": ["h", "normed"]}
# gemv_int8_norm's scratch: a count and one sum per CTA (Int8Tiling.ctas is at most 924)
NORM_SCRATCH_CTAS = 1024
# feed_forward's CTAs (cuda/feed_forward.cuh: FF_SLICE intermediate values each, FF_WARPS * 32
# threads) and its limit on K and F: x's and the intermediate's int8 copies in static shared
# memory
FEED_FORWARD_SLICE, FEED_FORWARD_THREADS = 64, 256
FEED_FORWARD_MAX_KF = 32768


@dataclass(frozen=True)
class GemvTiling:
    """How the matrix-vector kernel splits the work (kernels.cuh explains the terms)."""

    rows: int = 4  # weight rows per CTA
    warps: int = 4  # warps per CTA, splitting the row's chunks
    stages: int = 2  # chunks in flight per warp


INT8_TYPES: frozenset[GGMLQuantizationType] = frozenset(
    {Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1, Q.Q8_0, Q.Q4_K, Q.Q5_K, Q.Q6_K})
INT8_MAX_COLS = 16384  # longest rows taken (tested at this length; timed at 4,096 and 14,336)
# Activation rows one gemv_int8 launch takes (XROWS: x's rounded copy and an accumulator a row)
INT8_MAX_ROWS = 4
SM_COUNT = 132  # the H200's, for which the tilings below were timed
SM_SHARED = 228 * 1024  # shared memory of one SM, of which each CTA's takes 1 KiB more
SHARED_MAX = 227 * 1024  # static and dynamic together, per CTA (sm_90's opt-in limit)


@dataclass(frozen=True, kw_only=True)
class Int8Tiling:
    """How ``gemv_int8`` splits one row's product (cuda/gemv_int8.cuh): CTAs of *warps* warps,
    each lane taking *per_lane* 32-element sub-blocks of every staged chunk, *stages* chunks in
    flight per warp, at most *ctas* CTAs (each rounds x once, so few and long-lived: 528 is four
    per SM of an H200)."""

    warps: int = 8
    stages: int = 3
    per_lane: int = 1
    ctas: int = 528
    # a lane's share of x's first chunk in registers (the kernel's XREG): off, since with
    # eight-warp CTAs it timed 15.4 against 15.0 us (session 10; four-warp CTAs unmeasured)
    x_in_registers: bool = False

    def grid(self, rows: int) -> int:
        """CTAs for *rows* weight rows (gated: row pairs, each warp streaming both rows of
        its pairs): `even_grid`."""
        return even_grid(rows, self.ctas, self.warps)

    def shared_bytes(self, ggml_type: GGMLQuantizationType, cols: int,
                     x_rounded: XRounded | None = None, x_rows: int = 1) -> int:
        """Shared memory of one CTA, all of it dynamic: the staging slots
        ``[WARPS][STAGES][SLOT]`` (a slot being a chunk's bytes rounded as the kernel's SLOT
        is), then x's rounded copy ``xq[KCAP]`` with its scales ``xd`` and sums ``xsum``
        (``KCAP / 32`` each), one a row of *x_rows*, which x rounded beforehand and read from
        global memory does without. Packed Q4_0 stages as many bytes a chunk as Q4_0, so
        Q4_0's figure holds for it."""
        elems, nbytes = block_shape(ggml_type)
        slot = (CHUNK_ELEMS * self.per_lane // elems * nbytes + 15 + 6 + 15) // 16 * 16
        kcap = int8_kcap(cols, x_rounded)
        return self.warps * self.stages * slot + x_rows * (kcap + 2 * 4 * (kcap // 32))

    def fits(self, ggml_type: GGMLQuantizationType, cols: int,
             x_rounded: XRounded | None = None, x_rows: int = 1) -> bool:
        """Whether a CTA's shared memory for rows of *cols* stays within sm_90's 227 KiB."""
        return self.shared_bytes(ggml_type, cols, x_rounded, x_rows) <= SHARED_MAX


def even_grid(rows: int, ctas: int, warps: int) -> int:
    """CTAs of *warps* warps, at most *ctas*, for *rows* rows a warp each in turn: as few warps
    as give each the same number of rows as the most loaded one would get from all of them (a
    warp with one row more than the others is the kernel's tail)."""
    per_warp = -(-rows // (ctas * warps))
    busy = -(-rows // per_warp)
    return -(-busy // warps)


@dataclass(frozen=True, kw_only=True)
class PackedTiling:
    """How ``gemv_packed`` splits one row's product (cuda/gemv_packed.cuh): CTAs of *warps*
    warps, at most *ctas* of them, a warp's row read *per_pass* super-blocks (1,024 columns) a
    pass, each pass's loads in flight together."""

    warps: int = 4
    per_pass: int = 4
    ctas: int = 1056

    def grid(self, rows: int) -> int:
        """CTAs for *rows* outputs (gated: row pairs): `even_grid`."""
        return even_grid(rows, self.ctas, self.warps)


# Nsight Compute on the H200, one bf16 row rounded beforehand (session 17, call B; all outputs
# equal to gemv_int8's): at 14336x4096 4/4/1056 took 12.2 us (71% of the copy bandwidth;
# 8/4/1056 12.9, 8/4/528 13.8, 8/2/1056 14.0, 8/7/528 15.4; gemv_int8 13.7), gated 2 x 14336 x
# 4096 20.6 (84%; gemv_int8 22.0); at 4096x14336 8/4/1056 14.1 (4/4/1056 14.4; gemv_int8 15.9).
PACKED_TILINGS: tuple[tuple[int, PackedTiling], ...] = (
    (4096, PackedTiling(warps=4, per_pass=4, ctas=1056)),
    (INT8_MAX_COLS, PackedTiling(warps=8, per_pass=4, ctas=1056)),
)


@dataclass(frozen=True, kw_only=True)
class GemmTiling:
    """How ``gemm_packed`` splits a few-row product (cuda/gemm_packed.cuh): CTAs of
    *row_warps* x *k_warps* warps, each warp *row_tiles* tiles of 16 weight rows and every
    *k_warps*-th round of 128 columns, each CTA *rows* activation rows (tiles of 8), *ahead*
    rounds of weight words in flight a lane."""

    row_warps: int = 1
    k_warps: int = 4
    row_tiles: int = 1
    rows: int = 16
    ahead: int = 4

    @property
    def warps(self) -> int:
        return self.row_warps * self.k_warps

    def grid(self, n: int, m: int) -> int:
        """CTAs for *n* outputs (weight rows, or gated row pairs) and *m* activation rows."""
        return -(-n // (16 * self.row_tiles * self.row_warps)) * -(-m // self.rows)


@dataclass(frozen=True, kw_only=True)
class BlocksTiling:
    """How ``gemm_blocks`` splits a few-row product (cuda/gemm_blocks.cuh): CTAs of *k_warps*
    warps over one tile of 16 weight rows, each warp every *k_warps*-th chunk of 256 columns
    with *stages* chunks in flight, each CTA *rows* activation rows (tiles of 8). The staged
    chunks (16 rows of up to 288 bytes) are static shared memory: k_warps * stages <= 8 on
    CUDA; on Metal, whose threadgroups have 32 KiB and also hold each simdgroup's decoded
    span (metal/gemm.metal), k_warps * stages <= 2 and rows <= 32."""

    k_warps: int = 8
    stages: int = 1
    rows: int = 16

    def grid(self, n: int, m: int) -> int:
        """CTAs for *n* weight rows and *m* activation rows."""
        return -(-n // 16) * -(-m // self.rows)


def default_blocks_tiling(m: int, backend: Backend = "cuda") -> BlocksTiling:
    """``gemm_blocks``'s tiling for *m* activation rows (`gemm_cta_rows` a CTA). Metal: two
    simdgroups, one stage (what its threadgroup memory holds; never timed). CUDA: 8 k-warps
    and one stage, from session 44's kernel table (notes/bench/s44/d, the chunk staged as one
    list of words): per Llama-3-8B layer (4096x4096, 6144x4096, 28672x4096, 4096x14336) at 8
    rows, Q4_K 121.4 us against 4 x 2's 121.5, Q6_K 145.3 against 153.1, Q8_0 142.6 against
    166.9; at 16, Q4_K 145.9 against 152.5. (4 x 1 was 2-3 us faster on Q4_K's and Q6_K's
    28672x4096 at 3-8 rows, and 10-35 us slower on 4096x14336.)"""
    rows = gemm_cta_rows(m)
    if backend == "metal":
        return BlocksTiling(k_warps=2, stages=1, rows=rows)
    return BlocksTiling(rows=rows)


def gemm_cta_rows(m: int) -> int:
    """Activation rows a ``gemm_packed`` or ``gemm_blocks`` CTA takes for a product of *m*
    rows: one tile of 8 up to 8 (a second would multiply clamped copies), two above."""
    return 8 if m <= 8 else 16


# x's dtypes that ``gemm_packed`` and ``gemm_blocks`` take: the tensor cores' operand types
MMA_DTYPES = (mx.bfloat16, mx.float16)
# Activation rows that `gguf_matmul` sends to `gemm_packed` where ``gemv_int8`` does not take
# them first (`INT8_ROWS`: two rows of any weight); above, the matrix dequantized for MLX's
# matmul (session 39's first version of this kernel lost to it at 64 rows; the swapped one is
# not timed there). Session 40, call C
# (benchmarks/gemm_packed.py, CUPTI, the H200, median of three passes, default tiling against
# the path before) at 4096x4096, 6144x4096, 28672x4096 and 4096x14336: 2 rows 8.3 / 10.8 /
# 42.2 / 24.2 us against the float kernel's 10.6 / 14.6 / 56.1 / 29.2; 8 rows 9.2 / 11.2 /
# 42.2 / 25.4 against 22.2 / 31.9 / 134.2 / 73.9 (and MLX's bf16 matmul of the same shapes,
# 3.6x the bytes: 12.8 / 15.0 / 55.8 / 32.4); 16 rows 10.9 / 19.0 / 60.3 / 29.6 against the
# dequantized path's 21.4 / 30.3 / 140.0 / 74.8. Not the best tiling everywhere: 1 x 8 warps
# with two row tiles took 20.7-21.3 us at 2-8 rows of 4096x14336, 1 x 4 with two row tiles
# 15.5 / 53.0 at 12 rows of 6144x4096 / 28672x4096 (notes/bench/s40/c).
GEMM_ROWS = (2, 16)
# Activation rows that `gguf_matmul` sends to ``gemm_blocks`` where ``gemv_int8`` does not take
# them first (`INT8_ROWS`: two rows of a small weight, four of a large one). Session
# 44 (notes/bench/s44/d, the H200, CUPTI, median of three passes; benchmarks/gemm_blocks.py,
# default tiling): at 3 rows of Q4_K / Q6_K / Q8_0, 11.3-12.9 / 15.2-17.3 / 60.3-66.6 /
# 33.0-43.7 us at 4096x4096, 6144x4096, 28672x4096 and 4096x14336, against the float kernel's
# 14.8-16.1 / 20.9-22.5 / 78.7-94.5 / 43.6-51.4; at 16 rows 14.8-18.0 / 17.6-22.2 / 70.6-95.0 /
# 42.9-65.5 against the dequantized matrix's 21.3-25.2 / 30.3-36.2 / 140.7-163.8 / 74.8-87.0.
# (Before session 44 staged a chunk as one list of words, the kernel lost at 3 rows and Q8_0 at
# 4.) In the engine (random Q4_K Llama-3-8B, 16 requests of 512 + 128): 2,048.8 and 2,051.3
# tok/s against 1,663.9 with session 43's staging (session 44, call C).
BLOCKS_ROWS = (3, 16)
# Formats that gemm_blocks takes at two rows as well: there it beat the float kernel (one
# tile of 2) at all three shapes timed, 4096x4096, 28672x4096 and 4096x14336 (session 45,
# benchmarks/gemv_float.py, notes/bench/s45/f): Q2_K 10.5 / 57.7 / 30.8 us against 11.7 /
# 68.3 / 33.4, Q4_K 11.2 / 60.4 / 33.4 against 12.3 / 69.4 / 34.3, Q5_K 12.4 / 66.4 / 36.9
# against 13.7 / 76.6 / 41.4, Q6_K 12.7 / 66.5 / 37.9 against 13.8 / 76.3 / 42.0. Q8_0 was
# level (1.00-1.07x); Q3_K, Q4_1, Q5_0 and Q5_1 lost at one shape or more (0.91-0.98x), as did
# Q4_0 of the file's layout. One row keeps the float kernel or gemv_int8: gemm_blocks took
# 1.07-1.41x the float kernel's time there for every format.
BLOCKS_TWO_ROWS = frozenset({Q.Q2_K, Q.Q4_K, Q.Q5_K, Q.Q6_K})


def default_gemm_tiling(outs: int, cols: int, m: int, *, gated: bool = False) -> GemmTiling:
    """``gemm_packed``'s tiling for *outs* outputs of *cols* columns and *m* activation rows,
    from session 40's kernel table (call C, notes/bench/s40/c/kern.txt, us at 2 / 8 / 16 rows).
    Activation rows a CTA: `gemm_cta_rows`. Rows of more than 4096 columns: 8 k-warps and two
    row tiles (4096x14336: 20.7 / 21.3 / 26.8 against 1 x 4's 24.2 / 25.4 / 29.6). Above 8
    rows, two row tiles where a CTA for every 32 outputs still fills the GPU (6144x4096: 15.7
    against 19.0 at 16 rows; 28672x4096: 54.1 against 60.3; at 4096x4096, 128 CTAs, 14.3
    against 10.9). The gated mode keeps one: its warps already hold a gate and an up tile.
    In the engine (session 41, two alternated rounds): 8 requests of 512 + 128 at 1,717 and
    1,631 tok/s against one tiling's 1,453 and 1,645; 16 requests ITL p50 4.8 ms against 5.1."""
    rows = gemm_cta_rows(m)
    if gated:
        return GemmTiling(rows=rows)
    if cols > 4096:
        return GemmTiling(k_warps=8, row_tiles=2, rows=rows)
    if m > 8 and outs >= 6144:
        return GemmTiling(row_tiles=2, rows=rows)
    return GemmTiling(rows=rows)


def default_packed_tiling(cols: int) -> PackedTiling:
    """The `PACKED_TILINGS` entry for rows of *cols* (at most INT8_MAX_COLS)."""
    return next(t for longest, t in PACKED_TILINGS if cols <= longest)


def int8_kcap(cols: int, x_rounded: XRounded | None = None) -> int:
    """Elements of x's rounded copy in shared memory: *cols* rounded up to whole chunks (none
    where the product reads round_x's buffer in global memory)."""
    return 0 if x_rounded == "global" else -(-cols // CHUNK_ELEMS) * CHUNK_ELEMS


def rounded_x_bytes(cols: int) -> int:
    """Bytes of ``round_x``'s buffer for *cols* values: xq (one a value), then xd and xsum (four
    a 32-value block each)."""
    return cols + 8 * (cols // 32)


# Per format, the tilings Nsight Compute timed fastest on the H200 (one bf16 row; sweeps at
# 14336x4096 and 4096x14336, notes/gpu-kernels.md), each with the longest row it serves.
# Bigger chunks won: four sub-blocks a lane (4,096 elements, a whole Llama row) for Q4_0, Q4_K
# and Q6_K, two for Q8_0. Four warps and two stages won at both shapes for those three in
# session 10; deeper pipelines, x in registers and grids filling every SM evenly did not. At
# 4,096 columns, 924 CTAs (seven an SM, as many as Q6_K's shared memory allows) won in session
# 14 over 792 (six), for the plain and the gated product, once Q4_K and Q6_K read shared memory
# in wider loads; `grid` makes both 924 and 1,188 into 896 CTAs at 14,336 rows. At 14,336
# columns x's rounded copy leaves room for six an SM, and more CTAs than fit at once run a
# second wave (1,056 of four warps lost 20-30% there). There Q4_0 and Q4_K take eight-warp
# CTAs (8/2/4/512): 16.0-16.1 and 15.5 us against 4/2/4/792's 16.4-16.8 and 16.2-16.5 in both
# orders of session 17's A/B (occupancy 42-44% against 23%).
_FOUR_BY_TWO = Int8Tiling(warps=4, stages=2, per_lane=4, ctas=792)
_EIGHT_BY_TWO = Int8Tiling(warps=8, stages=2, per_lane=4, ctas=512)
_SEVEN_AN_SM = Int8Tiling(warps=4, stages=2, per_lane=4, ctas=924)
_THREE_AN_SM = Int8Tiling(warps=8, stages=2, per_lane=4, ctas=396)  # 8/2/4 in one wave
INT8_TILINGS: dict[GGMLQuantizationType, tuple[tuple[int, Int8Tiling], ...]] = {
    # 14336x4096: 13.8 us (session 14's decode: 14.3-14.4; 792: 14.8-14.9; session 7's 8/3/2:
    # 17.5); gated 2x14336x4096: 21.9 (23.5); 4096x14336: 16.0-16.1 (4/2/4/792: 16.4-16.8)
    Q.Q4_0: ((4096, _SEVEN_AN_SM), (INT8_MAX_COLS, _EIGHT_BY_TWO)),
    # 13.1-13.3 us (session 14's reads: 14.8-14.9; 792: 15.6-15.7; session 13, byte-wise reads:
    # 18.3); gated 21.4-22.2 (24.8-25.2); 15.5 (4/2/4/792: 16.2-16.5; session 13: 18.4)
    Q.Q4_K: ((4096, _SEVEN_AN_SM), (INT8_MAX_COLS, _EIGHT_BY_TWO)),
    # Q4_K's (the same decode but for the fifth bit), but one wave at long rows. Its 61-64
    # registers a thread (Q4_K 56; nvcc 13, sm_90a) cost no CTAs an SM; its 22% larger chunks
    # do: at 14,336 columns 8/2/4 fits three an SM, not four, so 396 CTAs instead of 512 (a
    # second wave cost Q4_K 20-30% before). Not swept (int8_sweep.py has the candidates);
    # session 45's kernels.py: 21.4 us at 14336x4096 and 23.0 at 4096x14336, against the
    # float kernel's 40.7 and 38.6 in the same run
    Q.Q5_K: ((4096, _SEVEN_AN_SM), (INT8_MAX_COLS, _THREE_AN_SM)),
    # Q4_1, Q5_0, Q5_1: untimed. Q4_0's (a block is one sub-block there too), but one wave at
    # long rows, as Q5_K's: their chunks are 11%, 22% (Q5_0: Q5_K's bytes) and 33% larger than
    # Q4_0's. At 4,096 columns 4/2/4 still fits seven an SM (Q5_1 just: 29.3 KiB a CTA); at
    # 14,336, 8/2/4 fits three, not four, so 396 CTAs. Registers cost no CTAs an SM: 58, 58
    # and 60 a thread (Q4_0 64; nvcc 13, sm_90a)
    Q.Q4_1: ((4096, _SEVEN_AN_SM), (INT8_MAX_COLS, _THREE_AN_SM)),
    Q.Q5_0: ((4096, _SEVEN_AN_SM), (INT8_MAX_COLS, _THREE_AN_SM)),
    Q.Q5_1: ((4096, _SEVEN_AN_SM), (INT8_MAX_COLS, _THREE_AN_SM)),
    # 20.5 us (22.2); 23.9 (the same tiling); the switch where session 8's 48 KiB of static
    # shared memory ran out (rows between are unmeasured)
    Q.Q8_0: ((10240, Int8Tiling(warps=4, stages=4, per_lane=2, ctas=660)),
             (INT8_MAX_COLS, Int8Tiling(warps=8, stages=3, per_lane=1, ctas=528))),
    # 20.1-20.4 us (792: 20.9-21.0); gated 36.6 (38.8-39.0); 23.7 (session 13: 24.0)
    Q.Q6_K: ((4096, _SEVEN_AN_SM), (INT8_MAX_COLS, _FOUR_BY_TWO)),
}


# Activation rows per format that `gguf_matmul` and `gguf_gated` send to gemv_int8 (a few
# decoding requests; more rows take gemm_packed or gemm_blocks): (on a weight of at most
# `INT8_SMALL_WEIGHT` elements, on a larger one). Several rows cap gemv_int8's CTAs to one wave
# (`default_int8_tiling`), which a small weight does not fill. Session 46 (benchmarks/
# gemv_rows.py, the H200, CUPTI; notes/bench/s46/2) at 6144x4096 / 28672x4096 / 4096x14336, us,
# gemv_int8 against the path before: Q4_K at 2 rows 11.9 / 30.8 / 19.9 against 15.7 / 60.1 /
# 33.5, at 4 rows 17.4 / 50.0 / 31.7 against 15.8 / 60.5 / 32.7; Q8_0, Q5_K and Q6_K likewise
# faster in sum up to 4. Packed Q4_0 against gemm_packed: 11.6 / 30.3 / 18.8 against 11.0 /
# 41.4 / 20.7 at 2 rows, slower from 3 (42.4 against 41.5 at 28672x4096). Session 47
# (notes/bench/s47/2) at the small weights, 4096x4096 / 6144x4096: 2 rows faster for every
# format but Q4_0 (Q4_K 9.2 / 11.7 against 11.3 / 15.8; Q4_0 9.0 / 11.7 against 8.8 / 10.7),
# 4 rows slower for all (Q4_K 14.4 / 17.5 against 11.4 / 15.9; Q8_0 21.7 / 20.5 against 12.8 /
# 15.7); Q4_1, Q5_0 and Q5_1 (call 1) at 4096x4096 / 28672x4096 / 4096x14336: 2 rows 9.1-9.8 /
# 31.7-37.6 / 19.5-22.0 against the float kernel's 11.8-13.0 / 64.1-72.7 / 33.7-39.0, 4 rows
# 14.3-15.2 / 51.1-55.6 / 32.2-33.9 against 11.9-13.6 / 59.5-68.7 / 37.6-44.2. Q4_0 keeps two
# rows of a small weight: gemm_packed's ~1 us less there did not show in the engine (two
# requests 600.1 tok/s against 625.1; one routing's two runs differ by 23). In the engine
# (session 48, call 1; random Llama-3-8B, 512 + 128 tokens a request) four Q4_K_M requests took
# 737.6 and 725.6 tok/s against 723.5 and 725.6 with every weight large: within the noise.
INT8_ROWS: dict[GGMLQuantizationType, tuple[int, int]] = {
    Q.Q4_0: (2, 2), Q.Q4_1: (2, 4), Q.Q5_0: (2, 4), Q.Q5_1: (2, 4), Q.Q8_0: (2, 4),
    Q.Q4_K: (2, 4), Q.Q5_K: (2, 4), Q.Q6_K: (2, 4)}
# Elements of the largest weight that `INT8_ROWS` calls small: between Llama-3-8B's fused
# q/k/v (6144x4096, 25.2 M) and its down projection (4096x14336, 58.7 M)
INT8_SMALL_WEIGHT = 1 << 25


def int8_rows(ggml_type: GGMLQuantizationType, weight_shape: tuple[int, int]) -> int:
    """How many activation rows of a product with a ``[rows, cols]`` weight gemv_int8 takes
    by default (`INT8_ROWS`; one of a format without an entry)."""
    small, large = INT8_ROWS.get(ggml_type, (1, 1))
    return small if weight_shape[0] * weight_shape[1] <= INT8_SMALL_WEIGHT else large


def default_int8_tiling(ggml_type: GGMLQuantizationType, cols: int,
                        x_rows: int = 1) -> Int8Tiling:
    """The format's `INT8_TILINGS` entry for rows of *cols* (at most INT8_MAX_COLS). For
    several activation rows, its CTAs capped to one wave: each row's copy of x takes shared
    memory, so fewer CTAs fit an SM, and a second wave cost one row 20-30% (session 17)."""
    tiling = next(t for longest, t in INT8_TILINGS[ggml_type] if cols <= longest)
    if x_rows == 1:
        return tiling
    per_sm = SM_SHARED // (tiling.shared_bytes(ggml_type, cols, None, x_rows) + 1024)
    return replace(tiling, ctas=min(tiling.ctas, max(per_sm, 1) * SM_COUNT))


def default_tiling(backend: Backend, tile: int) -> GemvTiling:
    """The tiling for *tile* activation rows per pass.

    CUDA, one row: two warps per CTA, measured on the H200 (benchmarks/kernels.py --sweep,
    notes/gpu-kernels.md): Q4_0 14336x4096 37.4 us against 41.0 us with four warps, Q8_0 44.7
    against 70.6 us (a smaller CTA stages less shared memory, so more of them fit on an SM).
    More rows keep four warps, which the sweep found as good or better there. Metal has no
    asynchronous copies: one stage (a second would only cost threadgroup memory, of which
    Apple GPUs have 32 KiB).
    """
    if backend == "metal":
        return GemvTiling(stages=1)
    return GemvTiling(warps=2) if tile == 1 else GemvTiling()


def kernel_source(backend: Backend, op: Op) -> tuple[str, str]:
    """(header, body) of one operation, as handed to MLX. CUDA's header includes the files
    by path (`cuda_header`); Metal compiles one string, so its header is their text."""
    files = [_HERE / name for name in _HEADERS[backend]]
    header = (cuda_header(files) if backend == "cuda"
              else "\n".join(f.read_text() for f in files))
    return header, (_HERE / _BODIES[backend][op]).read_text()


def activation_tile(rows: int) -> int:
    """The compiled tile for *rows* activation rows: the smallest that holds them, else 8."""
    return next((t for t in ACTIVATION_TILES if t >= rows), ACTIVATION_TILES[-1])


def gpu_backend() -> Backend | None:
    """The GPU backend MLX computes on by default, or None when that is the CPU."""
    if mx.default_device().type != mx.DeviceType.gpu:
        return None
    return "cuda" if on_cuda() else "metal"


def block_shape(ggml_type: GGMLQuantizationType) -> tuple[int, int]:
    """(elements, bytes) of one block."""
    if ggml_type not in KERNEL_TYPES:
        names = ", ".join(sorted(t.name for t in KERNEL_TYPES))
        raise ValueError(f"ggml_type {ggml_type!r} has no GPU kernel; kernels exist for {names}")
    return GGML_QUANT_SIZES[ggml_type]


class KernelLibrary:
    """The kernels of one backend, built on first use and kept for the process."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self._kernels: dict[tuple[str, int], Any] = {}

    def _kernel(self, op: Op, shared: int) -> Any:
        """The kernel of *op* with *shared* bytes of dynamic shared memory (CUDA; MLX fixes
        the size when a kernel is made)."""
        if (op, shared) not in self._kernels:
            header, body = kernel_source(self.backend, op)
            name, inputs, outputs = f"vx_{op}", _INPUTS[op], _OUTPUTS.get(op, ["y"])
            self._kernels[op, shared] = (
                mx.fast.cuda_kernel(name, inputs, outputs, body, header, shared_memory=shared)
                if self.backend == "cuda"
                else mx.fast.metal_kernel(name, inputs, outputs, body, header))
        return self._kernels[op, shared]

    def gemv(
        self,
        x: mx.array,
        raw: mx.array,
        ggml_type: GGMLQuantizationType,
        *,
        tile: int | None = None,
        tiling: GemvTiling | Int8Tiling | None = None,
        init_value: float | None = None,
        act: GatedAct | None = None,
        x_rounded: XRounded | None = None,
        dtype: mx.Dtype | None = None,
        packed: bool = False,
    ) -> mx.array:
        """``x[M, K] @ W.T`` -> ``[M, N]`` in x's dtype, W being the blocks ``raw[N, row_bytes]``.

        *tile* activation rows are computed per pass (default: `activation_tile(M)`); more rows
        repeat the pass. One to `INT8_ROWS` rows of an `INT8_TYPES` format on CUDA run
        ``gemv_int8`` unless a `GemvTiling` asks for the float kernel. *init_value* fills the
        output before the kernel runs (tests poison it with NaN to catch elements the kernel
        never writes).

        *act* (``"silu"``, ``"gelu_tanh"``): ``gemv_int8``'s gated mode, for up to
        `INT8_MAX_ROWS` rows on CUDA: W holds gate rows then up rows, and the result is
        ``act(g) * u`` ``[M, N / 2]``
        for ``[g, u]`` the product's two halves, rounded as MLX's ``act(g) * u`` on them
        would round it (cuda/gemv_int8.cuh, glu).

        *x_rounded* (``"shared"``, ``"global"``): *x* is `round_x`'s buffer for one row, and
        ``gemv_int8`` (plain or gated) reads it instead of rounding x in each CTA: copied into
        the CTA's shared memory, or from global memory through L1. The same values, so the
        same products. The output is of *dtype* (required: the buffer has no float dtype).

        *packed*: ``raw`` holds Q4_0 in the packed layout (`vexel_core.quant.kernels.packed`).
        """
        op, launch = _gemv_plan(self.backend, ggml_type, raw.shape, raw.dtype, x.shape,
                                x.dtype, tile, tiling, act, x_rounded, dtype, packed)
        return self._launch(op, [raw, x], launch, init_value)

    def gemv_add_norm(
        self,
        x: mx.array,
        raw: mx.array,
        ggml_type: GGMLQuantizationType,
        residual: mx.array,
        weight: mx.array,
        eps: float,
        scratch: mx.array,
        *,
        tiling: Int8Tiling | None = None,
        init_value: float | None = None,
        packed: bool = False,
    ) -> tuple[mx.array, mx.array]:
        """``(h, rms_norm(h) * weight)`` for ``h = residual + x @ W.T``: a pre-norm block's
        product, residual add and next RMS norm in one ``gemv_int8`` launch (its AddNorm
        epilogue, cuda/gemv_int8.cuh), for one row ``x[1, K]`` on CUDA. *residual* ``[1, N]``
        has x's dtype and *weight* ``[N]``; h is rounded as the product then the add would
        round it, and the norm as ``add_rms_norm`` rounds it.

        *scratch* (`add_norm_scratch`) holds the launch's count of finished CTAs, which each
        launch leaves at zero. MLX may run launches that do not depend on each other's outputs
        at the same time (its CUDA graphs follow the data): two that share a scratch must be
        ordered by their data, as a model's layers are, or evaluated apart. `BlockWeight` keeps
        one per matrix."""
        rows = raw.shape[0] if raw.ndim == 2 else -1
        if residual.shape != (1, rows) or residual.dtype != x.dtype:
            raise ValueError(f"gemv_add_norm: residual must be [1, {rows}] {x.dtype}; got "
                             f"{residual.shape} {residual.dtype}")
        if weight.shape != (rows,):
            raise ValueError(f"gemv_add_norm: weight must be [{rows}]; got {weight.shape}")
        if scratch.shape != (1 + NORM_SCRATCH_CTAS,) or scratch.dtype != mx.uint32:
            raise ValueError("gemv_add_norm: scratch must be add_norm_scratch()'s uint32 "
                             f"[{1 + NORM_SCRATCH_CTAS}]; got {scratch.shape} {scratch.dtype}")
        launch = _add_norm_launch(self.backend, ggml_type, raw.shape, raw.dtype, x.shape,
                                  x.dtype, tiling, packed)
        extra = {} if init_value is None else {"init_value": init_value}
        h, normed = self._kernel("gemv_int8_norm", launch.shared)(
            inputs=[raw, x, residual, weight if weight.dtype == x.dtype else weight.astype(x.dtype),
                    float_constant(eps), scratch],
            template=launch.template, grid=launch.grid, threadgroup=launch.threadgroup,
            output_shapes=[launch.shape, launch.shape], output_dtypes=[x.dtype, x.dtype],
            **extra)
        return h, normed

    def feed_forward(
        self,
        x: mx.array,
        gate_up: mx.array,
        down: mx.array,
        act: GatedAct,
        residual: mx.array,
        weight: mx.array,
        eps: float,
        scratch: mx.array,
        *,
        init_value: float | None = None,
    ) -> tuple[mx.array, mx.array]:
        """``(h, rms_norm(h) * weight)`` for ``h = residual + down(act(g) * u)``, ``[g, u] =
        x @ gate_up.T``: a pre-norm block's whole gated feed-forward part for one row ``x[1,
        K]`` in one launch (cuda/feed_forward.cuh; CUDA). *gate_up* ``[2F, K / 1024 * 576]``
        (gate rows, then up rows) and *down* ``[N, F / 1024 * 576]`` hold Q4_0 in the packed
        layout; *residual* ``[1, N]`` has x's dtype, *weight* is ``[N]``. The intermediate
        values are computed as `gemv`'s gated mode computes them, h and the norm rounded as
        `gemv_add_norm` rounds them; each down row's sum is one warp's, once every slice of
        the intermediate values is done, so every launch gives the same bits
        (`feed_forward_applies` says which shapes it takes).

        *scratch* (`feed_forward_scratch(F)`) holds the rounded intermediate values and the
        counts and flags that each launch leaves at zero: two launches that share one must be
        ordered by their data, as a model's layers are (`gemv_add_norm`)."""
        if not feed_forward_applies(self.backend, x.shape, x.dtype, gate_up.shape, down.shape):
            raise ValueError(
                "feed_forward: expected x [1, K] (float32, float16 or bfloat16) on CUDA, "
                "gate_up [2F, K / 1024 * 576] and down [N, F / 1024 * 576] (K and F multiples "
                f"of 1024, at most {FEED_FORWARD_MAX_KF}); got x {x.shape} {x.dtype}, gate_up "
                f"{gate_up.shape}, down {down.shape} on {self.backend}")
        for name, a in (("gate_up", gate_up), ("down", down)):
            if a.dtype != mx.uint8:
                raise ValueError(f"feed_forward: {name} must be uint8 packed Q4_0; got {a.dtype}")
        if act not in GATED_ACTS:
            raise ValueError(f"feed_forward: act must be one of {sorted(GATED_ACTS)}; got {act!r}")
        n = down.shape[0]
        if residual.shape != (1, n) or residual.dtype != x.dtype:
            raise ValueError(f"feed_forward: residual must be [1, {n}] {x.dtype}; got "
                             f"{residual.shape} {residual.dtype}")
        if weight.shape != (n,):
            raise ValueError(f"feed_forward: weight must be [{n}]; got {weight.shape}")
        f = gate_up.shape[0] // 2
        words = feed_forward_scratch_words(f)
        if scratch.shape != (words,) or scratch.dtype != mx.uint32:
            raise ValueError(f"feed_forward: scratch must be feed_forward_scratch({f})'s uint32 "
                             f"[{words}]; got {scratch.shape} {scratch.dtype}")
        launch = _feed_forward_launch(x.shape[1], f, n, x.dtype, act)
        extra = {} if init_value is None else {"init_value": init_value}
        h, normed = self._kernel("feed_forward", 0)(
            inputs=[gate_up, down, x, residual,
                    weight if weight.dtype == x.dtype else weight.astype(x.dtype),
                    float_constant(eps), scratch],
            template=launch.template, grid=launch.grid, threadgroup=launch.threadgroup,
            output_shapes=[launch.shape, launch.shape], output_dtypes=[x.dtype, x.dtype],
            **extra)
        return h, normed

    def gemv_packed(
        self,
        xr: mx.array,
        packed: mx.array,
        dtype: mx.Dtype,
        *,
        tiling: PackedTiling | None = None,
        init_value: float | None = None,
        act: GatedAct | None = None,
    ) -> mx.array:
        """``x @ W.T`` -> ``[1, N]`` in *dtype* for one row x rounded beforehand (*xr*: its
        int8 copy as round_x writes it, ``uint8[K * 5 / 4]``) and W of Q4_0 repacked in
        1,024-element super-blocks (*packed*: ``uint8[N, K / 1024 * 576]``; CUDA only).
        *act*: the gated mode, as `gemv`'s."""
        return self._launch("gemv_packed", [packed, xr],
                            _packed_launch(self.backend, packed.shape, packed.dtype, xr.shape,
                                           xr.dtype, dtype, tiling, act), init_value)

    def gemm_packed(self, x: mx.array, packed: mx.array, *, tiling: GemmTiling | None = None,
                    act: GatedAct | None = None, init_value: float | None = None) -> mx.array:
        """``x[M, K] @ W.T`` -> ``[M, N]`` in x's dtype (bfloat16 or float16) on the tensor
        cores, W being Q4_0 repacked in 1,024-element super-blocks (*packed*: ``uint8[N, K /
        1024 * 576]``; CUDA only): each weight turned into x's dtype as `dequantize` writes it,
        the products summed in float32 (cuda/gemm_packed.cuh). *act*: the gated mode, as
        `gemv`'s (gate rows then up rows; ``[M, N / 2]``)."""
        return self._launch("gemm_packed", [packed, x],
                            _gemm_launch(self.backend, packed.shape, packed.dtype, x.shape,
                                         x.dtype, tiling, act), init_value)

    def gemm_blocks(self, x: mx.array, raw: mx.array, ggml_type: GGMLQuantizationType, *,
                    tiling: BlocksTiling | None = None,
                    init_value: float | None = None) -> mx.array:
        """``x[M, K] @ W.T`` -> ``[M, N]`` in x's dtype (bfloat16 or float16) on the tensor
        cores (Apple's simdgroup matrices on Metal), W being the file's blocks ``raw[N,
        row_bytes]`` of any `KERNEL_TYPES` format with K a multiple of `BLOCKS_CHUNK`: each
        weight turned into x's dtype as `dequantize` writes it, the products summed in float32
        (cuda/gemm_blocks.cuh, metal/gemm.metal)."""
        return self._launch("gemm_blocks", [raw, x],
                            _blocks_launch(self.backend, ggml_type, raw.shape, raw.dtype,
                                           x.shape, x.dtype, tiling), init_value)

    def round_x(self, x: mx.array, *, init_value: float | None = None) -> mx.array:
        """One activation row ``x[1, K]`` (K a multiple of 32) rounded to 8-bit integers per 32
        values once, exactly as ``gemv_int8`` rounds it in each CTA: the uint8 buffer ``[1,
        rounded_x_bytes(K)]`` (xq, then xd, then xsum) that ``gemv(..., x_rounded=...)`` and
        `gemv_packed` read, for any number of products on the same x."""
        return self._launch("round_x", [x], _round_x_launch(self.backend, x.shape, x.dtype),
                            init_value)

    def dequantize(
        self,
        raw: mx.array,
        ggml_type: GGMLQuantizationType,
        dtype: mx.Dtype = mx.bfloat16,
        *,
        init_value: float | None = None,
        packed: bool = False,
    ) -> mx.array:
        """The blocks ``raw[N, row_bytes]`` as a ``[N, K]`` matrix of *dtype* (*packed*: as
        in `gemv`)."""
        return self._launch("dequant", [raw], _dequant_launch(ggml_type, raw.shape, raw.dtype,
                                                              dtype, packed), init_value)

    def _launch(self, op: Op, inputs: list[mx.array], launch: _Launch,
                init_value: float | None) -> mx.array:
        extra = {} if init_value is None else {"init_value": init_value}
        out = self._kernel(op, launch.shared)(
            inputs=inputs, template=launch.template, grid=launch.grid,
            threadgroup=launch.threadgroup, output_shapes=[launch.shape],
            output_dtypes=[launch.dtype], **extra,
        )
        return out[0]


@dataclass(frozen=True)
class _Launch:
    """A kernel call's arguments besides its inputs (built once per shape, since decoding
    launches four products per layer per token and every microsecond of host time shows)."""

    template: list[tuple[str, Any]]
    grid: tuple[int, int, int]
    threadgroup: tuple[int, int, int]
    shape: tuple[int, int]
    dtype: mx.Dtype
    shared: int = 0  # bytes of dynamic shared memory


@cache
def _gemv_plan(
    backend: Backend, ggml_type: GGMLQuantizationType, raw_shape: tuple[int, ...],
    raw_dtype: mx.Dtype, x_shape: tuple[int, ...], x_dtype: mx.Dtype, tile: int | None,
    tiling: GemvTiling | Int8Tiling | None, act: GatedAct | None = None,
    x_rounded: XRounded | None = None, dtype: mx.Dtype | None = None, packed: bool = False,
) -> tuple[Op, _Launch]:
    """Which matrix-vector kernel computes this product, and its launch (one lookup per
    product: decoding launches four per layer per token)."""
    if dtype is not None and x_rounded is None:
        raise ValueError(f"dtype={dtype} is the output's for x_rounded alone (else x's dtype)")
    if isinstance(tiling, Int8Tiling) or act is not None or x_rounded is not None:
        if tile is not None or isinstance(tiling, GemvTiling):
            raise ValueError(f"act={act!r}, x_rounded={x_rounded!r}: gemv_int8's modes take "
                             "no tile or GemvTiling")
        return "gemv_int8", _int8_launch(backend, ggml_type, raw_shape, raw_dtype, x_shape,
                                         x_dtype, tiling, act, x_rounded, dtype, packed)
    if (tile is None and tiling is None
            and int8_applies(backend, ggml_type, x_shape, raw_shape[0])):
        return "gemv_int8", _int8_launch(backend, ggml_type, raw_shape, raw_dtype, x_shape,
                                         x_dtype, None, None, None, None, packed)
    return "gemv", _gemv_launch(backend, ggml_type, raw_shape, raw_dtype, x_shape, x_dtype,
                                tile, tiling, packed)


def _gemv_launch(
    backend: Backend, ggml_type: GGMLQuantizationType, raw_shape: tuple[int, ...],
    raw_dtype: mx.Dtype, x_shape: tuple[int, ...], x_dtype: mx.Dtype, tile: int | None,
    tiling: GemvTiling | None, packed: bool,
) -> _Launch:
    rows, cols = _check(raw_shape, raw_dtype, ggml_type, packed)
    if len(x_shape) != 2 or x_shape[1] != cols or x_dtype not in ACTIVATION_DTYPES:
        raise ValueError(
            f"x must be [M, {cols}] float32, float16 or bfloat16; got {x_shape} {x_dtype}"
        )
    mt = tile or activation_tile(x_shape[0])
    tiling = tiling or default_tiling(backend, mt)
    ctas = -(-rows // tiling.rows) * -(-x_shape[0] // mt)
    threads = tiling.warps * 32
    template = [
        ("GGML_TYPE", _template_type(ggml_type, packed)), ("T", x_dtype), ("MT", mt),
        ("ROWS", tiling.rows), ("WARPS", tiling.warps), ("STAGES", tiling.stages),
    ]
    return _Launch(template, (ctas * threads, 1, 1), (threads, 1, 1), (x_shape[0], rows),
                   x_dtype)


def int8_applies(backend: Backend, ggml_type: GGMLQuantizationType,
                 x_shape: tuple[int, ...], weight_rows: int) -> bool:
    """Whether ``gemv`` sends this product (*weight_rows* rows of x's columns) to
    ``gemv_int8`` by default."""
    return (backend == "cuda" and ggml_type in INT8_TYPES and len(x_shape) == 2
            and 1 <= x_shape[0] <= int8_rows(ggml_type, (weight_rows, x_shape[1]))
            and x_shape[1] <= INT8_MAX_COLS)


def gemm_applies(backend: Backend, ggml_type: GGMLQuantizationType, packed: bool,
                 x_shape: tuple[int, ...], x_dtype: mx.Dtype) -> bool:
    """Whether `gguf_matmul` sends this product to ``gemm_packed``: packed Q4_0 on CUDA,
    `GEMM_ROWS` activation rows of bfloat16 or float16."""
    return (backend == "cuda" and packed and ggml_type == Q.Q4_0 and len(x_shape) == 2
            and GEMM_ROWS[0] <= x_shape[0] <= GEMM_ROWS[1]
            and x_dtype in MMA_DTYPES)


def blocks_applies(backend: Backend, ggml_type: GGMLQuantizationType, packed: bool,
                   x_shape: tuple[int, ...], x_dtype: mx.Dtype) -> bool:
    """Whether `gguf_matmul` sends this product to ``gemm_blocks``: the file's blocks of a
    `KERNEL_TYPES` format (on either GPU backend), rows of a multiple of `BLOCKS_CHUNK`
    columns, `BLOCKS_ROWS` activation rows of bfloat16 or float16, from two for
    `BLOCKS_TWO_ROWS` (packed Q4_0 has ``gemm_packed``). Metal's rows are CUDA's, untimed
    there."""
    first = 2 if ggml_type in BLOCKS_TWO_ROWS else BLOCKS_ROWS[0]
    return (not packed and ggml_type in KERNEL_TYPES
            and len(x_shape) == 2 and x_shape[1] % BLOCKS_CHUNK == 0
            and first <= x_shape[0] <= BLOCKS_ROWS[1] and x_dtype in MMA_DTYPES)


def gated_applies(backend: Backend, ggml_type: GGMLQuantizationType,
                  x_shape: tuple[int, ...], x_dtype: mx.Dtype, rows: int) -> bool:
    """Whether ``gemv(..., act=...)`` computes this product: where ``gemv_int8`` applies
    (up to `INT8_ROWS` rows on CUDA, `int8_applies`), on rows of gate then up."""
    return (int8_applies(backend, ggml_type, x_shape, rows) and x_dtype in ACTIVATION_DTYPES
            and rows % 2 == 0)


def _int8_launch(
    backend: Backend, ggml_type: GGMLQuantizationType, raw_shape: tuple[int, ...],
    raw_dtype: mx.Dtype, x_shape: tuple[int, ...], x_dtype: mx.Dtype,
    tiling: Int8Tiling | None, act: GatedAct | None = None, x_rounded: XRounded | None = None,
    dtype: mx.Dtype | None = None, packed: bool = False,
) -> _Launch:
    rows, cols = _check(raw_shape, raw_dtype, ggml_type, packed)
    _check_gated("gemv_int8", act, rows)
    if backend != "cuda" or ggml_type not in INT8_TYPES:
        names = ", ".join(sorted(t.name for t in INT8_TYPES))
        raise ValueError(f"gemv_int8 is a CUDA kernel for {names}; got {backend} "
                         f"{ggml_type.name}")
    if x_rounded is None and (len(x_shape) != 2 or x_shape[1] != cols
                              or not 1 <= x_shape[0] <= INT8_MAX_ROWS or cols > INT8_MAX_COLS
                              or x_dtype not in ACTIVATION_DTYPES):
        raise ValueError(f"gemv_int8: x must be [M, {cols}] float32, float16 or bfloat16, M from "
                         f"1 to {INT8_MAX_ROWS}, with at most {INT8_MAX_COLS} columns; got "
                         f"{x_shape} {x_dtype}")
    if x_rounded is not None:
        if x_rounded not in X_ROUNDED:
            raise ValueError(f"gemv_int8: x_rounded must be one of {sorted(X_ROUNDED)}; got "
                             f"{x_rounded!r}")
        expected = (1, rounded_x_bytes(cols))
        if x_shape != expected or x_dtype != mx.uint8 or cols > INT8_MAX_COLS:
            raise ValueError(f"gemv_int8: with x_rounded, x must be round_x's buffer for rows of "
                             f"{cols} (at most {INT8_MAX_COLS}): uint8 {list(expected)}; got "
                             f"{x_shape} {x_dtype}")
        if dtype is None or dtype not in ACTIVATION_DTYPES:
            raise ValueError("gemv_int8: x_rounded needs dtype, the output's: float32, float16 "
                             f"or bfloat16; got {dtype}")
    out_dtype = x_dtype if dtype is None else dtype
    m = x_shape[0] if x_rounded is None else 1
    tiling = tiling or default_int8_tiling(ggml_type, cols, m)
    if m > 1 and tiling.x_in_registers:
        raise ValueError(f"gemv_int8: {tiling} holds x in registers, which takes one "
                         f"activation row; got {m}")
    if not tiling.fits(ggml_type, cols, x_rounded, m):
        raise ValueError(f"gemv_int8: {tiling} needs "
                         f"{tiling.shared_bytes(ggml_type, cols, x_rounded, m)} bytes of shared "
                         f"memory for {m} row(s) of {cols}; at most {SHARED_MAX}")
    threads = tiling.warps * 32
    outs = rows if act is None else rows // 2  # gated: one output per (gate, up) row pair
    template = [("GGML_TYPE", _template_type(ggml_type, packed)), ("T", out_dtype),
                ("WARPS", tiling.warps),
                ("STAGES", tiling.stages), ("PER_LANE", tiling.per_lane),
                ("KCAP", int8_kcap(cols, x_rounded)), ("XREG", tiling.x_in_registers),
                ("ACT", GATED_ACTS[act] if act else 0),
                ("XPRE", X_ROUNDED[x_rounded] if x_rounded else 0), ("XROWS", m)]
    # the gated mode keeps its gate sums in registers: the same shared memory as the product
    return _Launch(template, (tiling.grid(outs) * threads, 1, 1), (threads, 1, 1), (m, outs),
                   out_dtype, tiling.shared_bytes(ggml_type, cols, x_rounded, m))


def add_norm_scratch() -> mx.array:
    """A scratch for `KernelLibrary.gemv_add_norm`: a count of finished CTAs and one sum a
    CTA, zero (each launch leaves it so)."""
    scratch = mx.zeros((1 + NORM_SCRATCH_CTAS,), dtype=mx.uint32)
    mx.eval(scratch)
    return scratch


@cache
def _add_norm_launch(
    backend: Backend, ggml_type: GGMLQuantizationType, raw_shape: tuple[int, ...],
    raw_dtype: mx.Dtype, x_shape: tuple[int, ...], x_dtype: mx.Dtype,
    tiling: Int8Tiling | None, packed: bool,
) -> _Launch:
    """gemv_int8_norm's launch: gemv_int8's plain product's for one row, within the scratch's
    CTAs."""
    if len(x_shape) != 2 or x_shape[0] != 1:
        raise ValueError(f"gemv_add_norm: x must be one row [1, K]; got {x_shape}")
    launch = _int8_launch(backend, ggml_type, raw_shape, raw_dtype, x_shape, x_dtype, tiling,
                          packed=packed)
    if launch.grid[0] // launch.threadgroup[0] > NORM_SCRATCH_CTAS:
        raise ValueError(f"gemv_add_norm: {launch.grid[0] // launch.threadgroup[0]} CTAs; the "
                         f"scratch holds {NORM_SCRATCH_CTAS}")
    return launch


def feed_forward_scratch_words(f: int) -> int:
    """The uint32 words of `KernelLibrary.feed_forward`'s scratch for *f* intermediate values
    (cuda/feed_forward.cuh, FeedForwardScratch): the AddNorm epilogue's count and a sum a CTA,
    two counts and a flag a slice, then (16-byte aligned) *f* int8 values, *f* / 32 scales and
    *f* / 32 sums."""
    slices = f // FEED_FORWARD_SLICE
    return (3 + 2 * slices + 3) // 4 * 4 + f // 4 + f // 16


def feed_forward_counts(scratch: mx.array, f: int) -> mx.array:
    """The words of `feed_forward_scratch(f)` that each launch leaves zero: the AddNorm
    epilogue's count, then (after the CTAs' sums) the counts of done and claimed slices and a
    flag a slice."""
    slices = f // FEED_FORWARD_SLICE
    return mx.concatenate([scratch[:1], scratch[1 + slices:3 + 2 * slices]])


def feed_forward_scratch(f: int) -> mx.array:
    """A scratch for `KernelLibrary.feed_forward` of *f* intermediate values, zero (each
    launch leaves its counts and flags so)."""
    scratch = mx.zeros((feed_forward_scratch_words(f),), dtype=mx.uint32)
    mx.eval(scratch)
    return scratch


def feed_forward_applies(backend: Backend | None, x_shape: tuple[int, ...], x_dtype: mx.Dtype,
                         gate_up_shape: tuple[int, ...], down_shape: tuple[int, ...]) -> bool:
    """Whether `KernelLibrary.feed_forward` takes this block: one row of x on CUDA, packed
    Q4_0 gate/up ``[2F, K / 1024 * 576]`` and down ``[N, F / 1024 * 576]`` with K and F whole
    super-blocks within the kernel's limit (every Llama shape)."""
    if (backend != "cuda" or len(x_shape) != 2 or x_shape[0] != 1
            or x_dtype not in ACTIVATION_DTYPES or len(gate_up_shape) != 2
            or len(down_shape) != 2):
        return False
    k, (two_f, gu_bytes), (n, down_bytes) = x_shape[1], gate_up_shape, down_shape
    f = two_f // 2
    return (k % SUPER_ELEMS == 0 and k <= FEED_FORWARD_MAX_KF
            and gu_bytes == k // SUPER_ELEMS * SUPER_BYTES
            and two_f % 2 == 0 and f % SUPER_ELEMS == 0 and f <= FEED_FORWARD_MAX_KF
            and down_bytes == f // SUPER_ELEMS * SUPER_BYTES and n > 0)


@cache
def _feed_forward_launch(k: int, f: int, n: int, dtype: mx.Dtype, act: GatedAct) -> _Launch:
    template = [("T", dtype), ("ACT", GATED_ACTS[act]), ("K", k), ("F", f)]
    threads = FEED_FORWARD_THREADS
    return _Launch(template, (f // FEED_FORWARD_SLICE * threads, 1, 1), (threads, 1, 1),
                   (1, n), dtype)


@cache
def _round_x_launch(backend: Backend, x_shape: tuple[int, ...], x_dtype: mx.Dtype) -> _Launch:
    if backend != "cuda":
        raise ValueError(f"round_x is a CUDA kernel (gemv_int8's input); got {backend}")
    if (len(x_shape) != 2 or x_shape[0] != 1 or x_shape[1] <= 0 or x_shape[1] % 32
            or x_dtype not in ACTIVATION_DTYPES):
        raise ValueError("round_x: x must be [1, K] float32, float16 or bfloat16 with K a "
                         f"multiple of 32; got {x_shape} {x_dtype}")
    ctas = -(-x_shape[1] // 32 // ROUND_X_THREADS)
    return _Launch([("T", x_dtype), ("THREADS", ROUND_X_THREADS)],
                   (ctas * ROUND_X_THREADS, 1, 1), (ROUND_X_THREADS, 1, 1),
                   (1, rounded_x_bytes(x_shape[1])), mx.uint8)


def _packed_shape(shape: tuple[int, ...], dtype: mx.Dtype) -> tuple[int, int]:
    """(rows, columns) of Q4_0 repacked in super-blocks, held in an array of *shape* and
    *dtype* (`gemv_packed`'s and `gemm_packed`'s *packed*)."""
    if len(shape) != 2 or dtype != mx.uint8 or shape[1] % SUPER_BYTES or not shape[1]:
        raise ValueError(f"packed must be uint8 [rows, super-blocks * {SUPER_BYTES}] (Q4_0 "
                         f"repacked); got {shape} {dtype}")
    return shape[0], shape[1] // SUPER_BYTES * SUPER_ELEMS


@cache
def _packed_launch(
    backend: Backend, shape: tuple[int, ...], w_dtype: mx.Dtype, xr_shape: tuple[int, ...],
    xr_dtype: mx.Dtype, dtype: mx.Dtype, tiling: PackedTiling | None, act: GatedAct | None,
) -> _Launch:
    if backend != "cuda":
        raise ValueError(f"gemv_packed is a CUDA kernel; got {backend}")
    rows, cols = _packed_shape(shape, w_dtype)
    xr_bytes = rounded_x_bytes(cols)
    if xr_dtype != mx.uint8 or xr_shape not in ((xr_bytes,), (1, xr_bytes)):
        raise ValueError(f"xr must be uint8 [{xr_bytes}], x's rounded copy for "
                         f"{cols} columns; got {xr_shape} {xr_dtype}")
    if dtype not in ACTIVATION_DTYPES:
        raise ValueError(f"dtype must be float32, float16 or bfloat16; got {dtype}")
    _check_gated("gemv_packed", act, rows)
    if cols > INT8_MAX_COLS:
        raise ValueError(f"gemv_packed takes rows of at most {INT8_MAX_COLS} columns; got {cols}")
    tiling = tiling or default_packed_tiling(cols)
    threads = tiling.warps * 32
    outs = rows if act is None else rows // 2
    template = [("T", dtype), ("WARPS", tiling.warps), ("PASS", tiling.per_pass),
                ("ACT", GATED_ACTS[act] if act else 0)]
    return _Launch(template, (tiling.grid(outs) * threads, 1, 1), (threads, 1, 1), (1, outs),
                   dtype)


@cache
def _gemm_launch(
    backend: Backend, shape: tuple[int, ...], w_dtype: mx.Dtype, x_shape: tuple[int, ...],
    x_dtype: mx.Dtype, tiling: GemmTiling | None, act: GatedAct | None = None,
) -> _Launch:
    if backend != "cuda":
        raise ValueError(f"gemm_packed is a CUDA kernel; got {backend}")
    rows, cols = _packed_shape(shape, w_dtype)
    _check_mma_x(x_shape, x_dtype, cols)
    _check_gated("gemm_packed", act, rows)
    outs = rows // 2 if act else rows
    tiling = tiling or default_gemm_tiling(outs, cols, x_shape[0], gated=act is not None)
    threads = tiling.warps * 32
    template = [("T", x_dtype), ("WN", tiling.row_warps), ("WK", tiling.k_warps),
                ("NT", tiling.row_tiles), ("MT", tiling.rows), ("AHEAD", tiling.ahead),
                ("ACT", GATED_ACTS[act] if act else 0)]
    return _Launch(template, (tiling.grid(outs, x_shape[0]) * threads, 1, 1), (threads, 1, 1),
                   (x_shape[0], outs), x_dtype)


@cache
def _blocks_launch(
    backend: Backend, ggml_type: GGMLQuantizationType, raw_shape: tuple[int, ...],
    raw_dtype: mx.Dtype, x_shape: tuple[int, ...], x_dtype: mx.Dtype,
    tiling: BlocksTiling | None,
) -> _Launch:
    rows, cols = _check(raw_shape, raw_dtype, ggml_type)
    _check_mma_x(x_shape, x_dtype, cols)
    if cols % BLOCKS_CHUNK:
        raise ValueError(f"gemm_blocks takes rows of a multiple of {BLOCKS_CHUNK} columns; "
                         f"got {cols}")
    tiling = tiling or default_blocks_tiling(x_shape[0], backend)
    # staged chunks and activation rows a CTA's static shared memory holds (BlocksTiling)
    slots, most_rows = (8, None) if backend == "cuda" else (2, 32)
    if (tiling.k_warps * tiling.stages > slots or tiling.rows % 8
            or (most_rows is not None and tiling.rows > most_rows)):
        limit = f"k_warps * stages <= {slots}" + (f" and rows <= {most_rows}" if most_rows else "")
        raise ValueError(f"BlocksTiling on {backend} needs {limit} (static shared memory) and "
                         f"rows a multiple of 8; got {tiling}")
    threads = tiling.k_warps * 32
    template = [("GGML_TYPE", int(ggml_type)), ("T", x_dtype), ("WK", tiling.k_warps),
                ("MT", tiling.rows), ("STAGES", tiling.stages)]
    return _Launch(template, (tiling.grid(rows, x_shape[0]) * threads, 1, 1), (threads, 1, 1),
                   (x_shape[0], rows), x_dtype)


@cache
def _dequant_launch(ggml_type: GGMLQuantizationType, raw_shape: tuple[int, ...],
                    raw_dtype: mx.Dtype, dtype: mx.Dtype, packed: bool = False) -> _Launch:
    rows, cols = _check(raw_shape, raw_dtype, ggml_type, packed)
    if dtype not in ACTIVATION_DTYPES:
        raise ValueError(f"dtype must be float32, float16 or bfloat16; got {dtype}")
    jobs = rows * -(-cols // CHUNK_ELEMS)
    threads = DEQUANT_WARPS * 32
    template = [("GGML_TYPE", _template_type(ggml_type, packed)), ("T", dtype),
                ("WARPS", DEQUANT_WARPS)]
    return _Launch(template, (-(-jobs // DEQUANT_WARPS) * threads, 1, 1), (threads, 1, 1),
                   (rows, cols), dtype)


def _check(shape: tuple[int, ...], dtype: mx.Dtype, ggml_type: GGMLQuantizationType,
           packed: bool = False) -> tuple[int, int]:
    """(rows, columns) of the matrix whose blocks (*packed*: in the packed layout) are an
    array of *shape* and *dtype*."""
    elems, nbytes = block_shape(ggml_type)
    if packed:
        if ggml_type != Q.Q4_0:
            raise ValueError(f"packed=True is a layout of Q4_0 alone; got ggml_type "
                             f"{ggml_type.name}")
        if len(shape) != 2 or dtype != mx.uint8 or shape[1] % SUPER_BYTES:
            raise ValueError(
                f"packed=True: raw must be uint8 [rows, super-blocks * {SUPER_BYTES}] (Q4_0 "
                f"rows of a multiple of {SUPER_ELEMS} columns); got {shape} {dtype}")
        return shape[0], shape[1] // SUPER_BYTES * SUPER_ELEMS
    if len(shape) != 2 or dtype != mx.uint8 or shape[1] % nbytes:
        raise ValueError(
            f"raw must be uint8 [rows, blocks * {nbytes}] for {ggml_type.name}; "
            f"got {shape} {dtype}"
        )
    return shape[0], shape[1] // nbytes * elems


def _check_mma_x(x_shape: tuple[int, ...], x_dtype: mx.Dtype, cols: int) -> None:
    """A ValueError unless x is ``[M, cols]`` (M > 0) of a tensor-core operand type
    (`gemm_packed`'s and `gemm_blocks`' x)."""
    if (len(x_shape) != 2 or x_shape[1] != cols or not x_shape[0]
            or x_dtype not in MMA_DTYPES):
        raise ValueError(f"x must be [M, {cols}] bfloat16 or float16 (the tensor cores' "
                         f"operands); got {x_shape} {x_dtype}")


def _check_gated(kernel: str, act: GatedAct | None, rows: int) -> None:
    """A ValueError unless *act* is None or a gated mode's activation with *rows* even (gate
    rows, then up rows)."""
    if act is not None and (act not in GATED_ACTS or rows % 2):
        raise ValueError(f"{kernel}'s gated mode takes act in {sorted(GATED_ACTS)} and an even "
                         f"number of rows (gate, then up); got {act!r}, {rows} rows")


def _template_type(ggml_type: GGMLQuantizationType, packed: bool) -> int:
    """The kernels' GGML_TYPE: the format's number, or `PACKED_Q4_0` for the packed layout
    (which `_check` has accepted)."""
    return PACKED_Q4_0 if packed else int(ggml_type)


@cache
def library(backend: Backend) -> KernelLibrary:
    """The process-wide library of *backend*."""
    return KernelLibrary(backend)
