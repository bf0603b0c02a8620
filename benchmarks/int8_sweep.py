"""``gemv_int8`` tilings for the Nsight Compute sweep (``benchmarks/kernel_ncu.py --int8-sweep``).
tests/test_quant_kernels.py runs every (format, warps, stages, sub-blocks a lane) used here in
the CPU emulation of the kernel.

Session 7 found the kernel latency-bound (DRAM 34-61%, SM 43-59%) with DRAM throughput rising
with the bytes of a staged chunk. Session 8's first sweep (call A, 14336x4096) timed bigger
chunks (4 sub-blocks a lane for Q4_0/Q4_K: 4,096 elements, one whole Llama row of 2,304 bytes;
2 for Q8_0/Q6_K), deeper pipelines and more CTAs per SM; its winners are now the defaults
(`library.INT8_TILINGS`, with the figures). This list is the second round: each format's
defaults at the row length swept (``--cols``: 4096 for the 14336x4096 gate/up projection,
14336 for the 4096x14336 down projection, where shared memory allows fewer tilings), then
what the first round did not reach.

What limits CTAs per SM (nvcc 13.0 for sm_90, offline, bf16 x, K = 4096: 54-60 registers a
thread, i.e. 56 or 64 allocated): CTAs of 8 warps fit 4 per SM by registers, so 8 warps with
more than 528 CTAs leave the rest to a second wave; CTAs of 4 warps fit 8-9 by registers and
as many as shared memory allows. And the rows: `Int8Tiling.grid` gives each warp the same
number of rows, so 14,336 rows run on 3,584 warps (4 rows each, 27 a SM) whether 528 CTAs of
8 or 1,056 of 4.
"""

from __future__ import annotations

from gguf import GGMLQuantizationType

from vexel_core.quant.kernels.library import (
    INT8_TILINGS,
    Int8Tiling,
)

Q = GGMLQuantizationType
SHAPES = {4096: (14336, 4096), 14336: (4096, 14336)}  # --cols -> (rows, cols) of W
SM_COUNT = 132  # H200
SMEM_PER_SM = 228 * 1024  # of which the driver reserves 1 KiB per CTA
RESERVED_PER_CTA = 1024
REGISTERS = 56  # per thread, as nvcc 13.0 allocates them for most tilings (see above)


def _t(warps: int, stages: int, per_lane: int, ctas: int, held: bool = False) -> Int8Tiling:
    return Int8Tiling(warps=warps, stages=stages, per_lane=per_lane, ctas=ctas,
                      x_in_registers=held)


# Round four (session 10). Round three (deeper pipelines of whole-row chunks, seven-warp CTAs,
# x in registers) won nothing, and Nsight Compute showed the SMs active for 77% of the
# kernel's cycles: `Int8Tiling.grid` gives every warp the same number of rows by shrinking
# the grid (448 CTAs of 528 at 14336x4096), so 52 SMs ran four CTAs and 80 three. Here every
# CTA count is a whole number of CTAs per SM at 4,096 columns. Call C also launched every CTA
# (a patched `grid`): within 3% at 4,096 columns, 30% slower at 14,336 (each CTA rounds all
# of x), so `grid` stayed. 4/2/4/792 won for Q4_0, Q4_K and Q6_K (notes/gpu-kernels.md).
# Untimed, for the first sweep of Q4_1, Q5_0 and Q5_1: Q4_0's list, with Q4_0's long-row
# default (8/2/4/512: two waves for them, whose chunks fit three an SM at 14,336 columns) and
# 4/2/4 in one wave there (five an SM)
_LEGACY32 = [_t(8, 2, 4, 512), _t(8, 2, 4, 528), _t(4, 2, 4, 1188), _t(6, 2, 4, 792),
             _t(4, 3, 4, 792), _t(8, 3, 4, 396), _t(4, 2, 4, 792, True), _t(4, 2, 4, 660)]
_MORE: dict[Q, list[Int8Tiling]] = {
    Q.Q4_0: [_t(8, 2, 4, 528), _t(4, 2, 4, 1188), _t(6, 2, 4, 792), _t(4, 3, 4, 792),
             _t(8, 3, 4, 396), _t(4, 2, 4, 792, True)],
    Q.Q4_K: [_t(8, 2, 4, 528), _t(4, 2, 4, 1188), _t(6, 2, 4, 792), _t(4, 3, 4, 792),
             _t(4, 2, 4, 792, True)],
    Q.Q4_1: _LEGACY32,
    Q.Q5_0: _LEGACY32,
    Q.Q5_1: _LEGACY32,
    Q.Q8_0: [_t(8, 3, 2, 528), _t(4, 4, 4, 660)],
    # untimed: Q4_K's list for Q5_K's first sweep, and the long rows' 8/2/4 and 4/2/4 in one
    # wave (its chunks are 22% larger than Q4_K's: three or five CTAs an SM at 14,336 columns)
    Q.Q5_K: [_t(8, 2, 4, 528), _t(4, 2, 4, 1188), _t(6, 2, 4, 792), _t(4, 3, 4, 792),
             _t(4, 2, 4, 792, True), _t(8, 2, 4, 396), _t(4, 2, 4, 660)],
    Q.Q6_K: [_t(4, 2, 4, 924), _t(4, 3, 4, 660), _t(8, 2, 4, 396), _t(6, 2, 4, 660),
             _t(4, 2, 4, 792, True)],
}
# Not yet run (added after session 10's last call): the winner with x in registers. Session 9's
# "+x" ran with eight-warp CTAs, where its ~76 registers a thread cost a CTA an SM (four to
# three); four-warp CTAs keep six an SM with it. Call B found shared memory (L1/TEX) the
# busiest unit at 71%, and x's reads are about half of that traffic.


def candidates(ggml_type: Q) -> list[Int8Tiling]:
    """The format's defaults in order (the first is the reference), then `_MORE`; those over
    the shared memory limit stay in, to be reported as skipped."""
    return list(dict.fromkeys([*(t for _, t in INT8_TILINGS[ggml_type]), *_MORE[ggml_type]]))


def ctas_per_sm(ggml_type: Q, t: Int8Tiling, cols: int) -> int:
    """CTAs one SM can hold: by threads (2,048), registers (`REGISTERS`, 256 a warp's
    allocation unit, four partitions of 16,384) and shared memory (allocated bytes)."""
    per_warp = -(-REGISTERS * 32 // 256) * 256
    by_registers = 4 * (16384 // per_warp) // t.warps
    by_smem = SMEM_PER_SM // (t.shared_bytes(ggml_type, cols) + RESERVED_PER_CTA)
    return min(2048 // (32 * t.warps), by_registers, by_smem, 32)


def templates() -> list[tuple[str, int, int, int, bool]]:
    """(format, warps, stages, sub-blocks a lane, x in registers) of every candidate that fits
    at some swept row length, once each."""
    return list(dict.fromkeys((t.name, c.warps, c.stages, c.per_lane, c.x_in_registers)
                              for t in INT8_TILINGS for c in candidates(t)
                              if any(c.fits(t, cols) for cols in SHAPES)))
