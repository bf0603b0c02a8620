"""``gemv_int8`` tilings for the Nsight Compute sweep (``benchmarks/kernel_ncu.py --int8-sweep``)
and the shared memory each declares. tests/test_quant_kernels.py runs every (format, warps,
stages, sub-blocks a lane) used here in the CPU emulation of the kernel.

Session 7 found the kernel latency-bound (DRAM 34-61%, SM 43-59%) with DRAM throughput rising
with the bytes of a staged chunk, so the candidates raise the bytes in flight per SM: bigger
chunks (4 sub-blocks a lane for Q4_0/Q4_K: 4,096 elements, one whole Llama row of 2,304 bytes;
2 for Q8_0/Q6_K), deeper pipelines (3-4 stages) and more CTAs per SM (`Int8Tiling.ctas` 660,
792, 1,056: 5, 6, 8 per SM of the H200's 132).

What limits CTAs per SM (nvcc 13.0 for sm_90, offline, bf16 x, K = 4096: 54-60 registers a
thread, i.e. 56 or 64 allocated): CTAs of 8 warps fit 4 per SM by registers, so 8 warps with
more than 528 CTAs leave the rest to a second wave (one candidate checks that); CTAs of 4 warps
fit 8-9 by registers and as many as shared memory allows. And the rows: `Int8Tiling.grid` gives
each warp the same number of rows, so 14,336 rows run on 3,584 warps (4 rows each, 27 a SM)
whether 528 CTAs of 8 or 1,056 of 4; 3 rows a warp would need 36 warps a SM, one CTA of 4
warps more than 9 per SM hold (nothing here asks for it).
"""

from __future__ import annotations

from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

from vexel_core.quant.kernels.library import CHUNK_ELEMS, Int8Tiling

Q = GGMLQuantizationType
SHAPE = (14336, 4096)  # rows x columns of W: Llama-3-8B's gate/up projection
SM_COUNT = 132  # H200
STATIC_SMEM_MAX = 48 * 1024  # static shared memory of one CTA
SMEM_PER_SM = 228 * 1024  # of which the driver reserves 1 KiB per CTA
RESERVED_PER_CTA = 1024
REGISTERS = 56  # per thread, as nvcc 13.0 allocates them for most tilings (see above)
HAS_MIN = {Q.Q4_K}  # formats whose kernel reads xsum (without it the compiler drops the array)


def _t(warps: int, stages: int, per_lane: int, ctas: int) -> Int8Tiling:
    return Int8Tiling(warps=warps, stages=stages, per_lane=per_lane, ctas=ctas)


# Per format, in order of interest: the default first (the reference of the same run), then
# the tilings expected to keep the most bytes in flight per SM. Those over 48 KiB of shared
# memory are listed to be reported as skipped.
_Q4 = [_t(8, 3, 2, 528), _t(8, 4, 2, 528), _t(4, 4, 4, 660), _t(4, 3, 4, 792),
       _t(8, 2, 4, 528), _t(4, 4, 2, 1056), _t(4, 2, 4, 1056), _t(4, 3, 4, 660),
       _t(4, 4, 4, 528), _t(4, 3, 2, 1056), _t(4, 4, 2, 792)]
CANDIDATES: dict[str, list[Int8Tiling]] = {
    # 8 warps x 660 CTAs: more than the 4 CTAs of 8 warps the registers allow per SM
    "Q4_0": [*_Q4, _t(8, 3, 2, 660), _t(8, 3, 4, 528)],
    "Q4_K": [*_Q4, _t(8, 3, 4, 528)],
    "Q8_0": [_t(8, 3, 1, 528), _t(8, 4, 1, 528), _t(4, 3, 2, 1056), _t(4, 4, 2, 660),
             _t(4, 3, 2, 792), _t(8, 2, 2, 528), _t(4, 2, 2, 1056), _t(4, 4, 1, 1056),
             _t(4, 2, 4, 660), _t(4, 4, 2, 528), _t(4, 3, 2, 660), _t(4, 3, 1, 1056),
             _t(8, 3, 2, 528), _t(8, 2, 4, 528)],
    "Q6_K": [_t(8, 3, 1, 528), _t(8, 3, 2, 528), _t(4, 4, 2, 1056), _t(4, 3, 2, 1056),
             _t(4, 3, 4, 660), _t(8, 4, 1, 528), _t(4, 4, 2, 792), _t(4, 2, 4, 1056),
             _t(8, 2, 2, 528), _t(4, 3, 4, 528), _t(4, 4, 1, 1056), _t(4, 3, 1, 1056),
             _t(8, 2, 4, 528), _t(8, 4, 2, 528)],
}


def label(t: Int8Tiling) -> str:
    """warps/stages/sub-blocks a lane/CTAs, as benchmarks/kernels.py --sweep writes them."""
    return f"{t.warps}/{t.stages}/{t.per_lane}/{t.ctas}"


def chunk_bytes(ggml_type: GGMLQuantizationType, per_lane: int) -> int:
    elems, nbytes = GGML_QUANT_SIZES[ggml_type]
    return CHUNK_ELEMS * per_lane // elems * nbytes


def kcap(cols: int) -> int:
    """x's rounded copy in shared memory, as library._int8_launch sizes it."""
    return -(-cols // CHUNK_ELEMS) * CHUNK_ELEMS


def shared_bytes(ggml_type: GGMLQuantizationType, t: Int8Tiling, cols: int = SHAPE[1],
                 declared: bool = True) -> int:
    """Static shared memory of one CTA as cuda/gemv_int8.cuh declares it: the staging slots
    ``stage[WARPS][STAGES][SLOT / 4]`` words, ``xq[KCAP]`` bytes, ``xd[KCAP / 32]`` floats and
    ``xsum[KCAP / 32]`` ints. ``declared=False``: less xsum where the format never reads it
    (what the compiler allocates)."""
    slot = (chunk_bytes(ggml_type, t.per_lane) + 15 + 6 + 15) // 16 * 16
    k = kcap(cols)
    xsum = k // 32 * 4 if declared or ggml_type in HAS_MIN else 0
    return t.warps * t.stages * slot + k + k // 32 * 4 + xsum


def ctas_per_sm(ggml_type: GGMLQuantizationType, t: Int8Tiling, cols: int = SHAPE[1]) -> int:
    """CTAs one SM can hold: by threads (2,048), registers (`REGISTERS`, 256 a warp's
    allocation unit, four partitions of 16,384) and shared memory (allocated bytes)."""
    per_warp = -(-REGISTERS * 32 // 256) * 256
    by_registers = 4 * (16384 // per_warp) // t.warps
    by_smem = SMEM_PER_SM // (shared_bytes(ggml_type, t, cols, declared=False) + RESERVED_PER_CTA)
    return min(2048 // (32 * t.warps), by_registers, by_smem, 32)


def fits(ggml_type: GGMLQuantizationType, t: Int8Tiling, cols: int = SHAPE[1]) -> bool:
    return shared_bytes(ggml_type, t, cols) <= STATIC_SMEM_MAX


def templates(cols: int = SHAPE[1]) -> list[tuple[str, int, int, int]]:
    """(format, warps, stages, sub-blocks a lane) of every candidate that fits, once each."""
    seen: dict[tuple[str, int, int, int], None] = {}
    for name, tilings in CANDIDATES.items():
        for t in tilings:
            if fits(GGMLQuantizationType[name], t, cols):
                seen[(name, t.warps, t.stages, t.per_lane)] = None
    return list(seen)
