"""A few activation rows times a format's own blocks on the tensor cores (cuda/gemm_blocks.cuh)
and on Apple's simdgroup matrices (its Metal twin, metal/gemm.metal), for every format with
kernels, on fresh random blocks and rows every run, against float64
arithmetic on the weights as the kernel multiplies them: each one rounded once to x's dtype,
as the dequantizing kernel writes it (test_gemm_packed's `within_bound`).

Paths: ``emulated_cuda`` (the CUDA source compiled for the CPU, the mma's fragments gathered
across the emulated lanes, NaN-filled output), ``emulated_metal`` (the Metal source, which no
Apple compiler has seen, wrapped as ``mx.fast.metal_kernel`` wraps it and compiled for the
CPU: `emulation.metal_program`) and the H200 (marked ``gpu``: the library's
launch on a NaN-poisoned output, and `gguf_matmul`, which picks the kernel). Shapes are awkward
on purpose: 37 weight rows (a partial tile of 16), activation rows of 3 and 17 (partial tiles
of 8 and a second CTA row at 16), three chunks of 256 columns (not a multiple of four k-warps,
and with three k-warps one each).
"""

from __future__ import annotations

from pathlib import Path

import mlx.core as mx
import numpy as np
import pytest
from gguf import GGML_QUANT_SIZES as T_BLOCK
from gguf import GGMLQuantizationType as T
from gguf.quants import dequantize as gguf_dequantize

from tests import emulation
from tests.test_gemm_packed import HALF, NAN, as_float64, rows_of, within_bound
from tests.test_quant_kernels import (
    KERNELS,
    TYPES,
    Matrix,
    matrix,
    metal_kernel,
    within_int8_bound,
)
from vexel_core.quant.kernels import gguf_matmul, gpu_backend, library
from vexel_core.quant.kernels.library import (
    BLOCKS_CHUNK,
    BLOCKS_ROWS,
    BLOCKS_TWO_ROWS,
    BlocksTiling,
    _blocks_launch,
    _Launch,
    blocks_applies,
    default_blocks_tiling,
    gemm_applies,
    int8_rows,
)

COLS = 3 * BLOCKS_CHUNK


@pytest.fixture(scope="session")
def blocks_emulator(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/kernel_emulation/run_gemm_blocks.cpp built against the kernel sources."""
    return emulation.build(tmp_path_factory.mktemp("gemm_blocks"), "run_gemm_blocks.cpp",
                           [KERNELS / "cuda", KERNELS / "common"])


def emulated(binary: Path, x: mx.array, m: Matrix, tiling: BlocksTiling) -> np.ndarray:
    """The kernel in the emulation: y ``[M, N]`` as float64."""
    assert m.skip == 0
    args = [int(m.ggml_type), tiling.k_warps, tiling.rows, tiling.stages,
            int(x.dtype == mx.bfloat16), m.rows, m.buffer.shape[1], x.shape[0], x.shape[1]]
    out = emulation.run(binary, args, m.buffer.tobytes() + np.array(x.view(mx.uint16)).tobytes())
    return as_float64(mx.array(np.frombuffer(out, np.uint16)).view(x.dtype)
                      .reshape(x.shape[0], m.rows))


@pytest.mark.parametrize(("m_rows", "tiling"), [(3, BlocksTiling(rows=8)),
                                                (17, BlocksTiling(rows=16))],
                         ids=["3rows", "17rows"])
@pytest.mark.parametrize("ggml_type", TYPES, ids=lambda t: t.name)
def test_emulated_product_equals_reference(ggml_type: T, m_rows: int, tiling: BlocksTiling,
                                           rng: np.random.Generator,
                                           blocks_emulator: Path) -> None:
    # every element written (the output starts as NaN) and within the bound
    m = matrix(ggml_type, rng, cols=COLS, rows=37)
    x = rows_of(rng, m_rows, COLS, mx.bfloat16)
    y = emulated(blocks_emulator, x, m, tiling)
    assert np.isfinite(y).all()
    assert within_bound(y, x, m)


@pytest.mark.parametrize("tiling", [BlocksTiling(k_warps=4, stages=2, rows=8),
                                    BlocksTiling(k_warps=3, stages=2, rows=16),
                                    BlocksTiling(k_warps=1, rows=32, stages=3)],
                         ids=["4warps-2stages", "3warps", "1warp-32rows-3stages"])
@pytest.mark.parametrize("dtype", HALF, ids=["bf16", "f16"])
@pytest.mark.parametrize("ggml_type", [T.Q8_0, T.Q4_K, T.Q6_K], ids=lambda t: t.name)
def test_emulated_other_tilings_and_float16(ggml_type: T, dtype: mx.Dtype,
                                            tiling: BlocksTiling, rng: np.random.Generator,
                                            blocks_emulator: Path) -> None:
    m = matrix(ggml_type, rng, cols=COLS, rows=21)
    x = rows_of(rng, 5, COLS, dtype)
    y = emulated(blocks_emulator, x, m, tiling)
    assert np.isfinite(y).all()
    assert within_bound(y, x, m)


def test_emulated_product_notices_a_wrong_weight(rng: np.random.Generator,
                                                 blocks_emulator: Path) -> None:
    # the bound is tight enough to see one Q8_0 weight off by one step of its block's scale d:
    # in row 3's block of largest |d| (~0.1), element 5 set to q = 2 then 3, where x's value is
    # 16 and the others ~N(0, 1 / 16^2): an error of 16 |d| against a bound under 0.1 (768
    # terms: 2^-22 * 768 * sum |x w| ~0.05, plus bfloat16's rounding of sums of ~10, 2^-8)
    buffer = matrix(T.Q8_0, rng, cols=COLS, rows=16).buffer
    scales = np.ascontiguousarray(buffer[3].reshape(-1, 34)[:, :2]).view(np.float16)
    block = int(np.abs(scales.astype(np.float32)).argmax())
    xs = rng.normal(size=(2, COLS)).astype(np.float32) / 16
    xs[:, 32 * block + 5] = 16.0
    x = mx.array(xs).astype(mx.bfloat16)
    tiling = BlocksTiling(rows=8)
    ys = []
    for q in (2, 3):
        buffer[3, 34 * block + 2 + 5] = q
        m = Matrix(buffer.copy(), 0, T.Q8_0, gguf_dequantize(buffer, T.Q8_0).astype(np.float64))
        ys.append(emulated(blocks_emulator, x, m, tiling))
    assert within_bound(ys[1], x, m)
    assert not within_bound(ys[0], x, m)


# The Metal kernel's cases: (format, activation rows, dtype, tiling; None: the library's)
METAL_TILINGS = [BlocksTiling(k_warps=1, stages=2, rows=8),
                 BlocksTiling(k_warps=1, stages=1, rows=32)]
METAL_CASES = ([(t, 3, mx.bfloat16, None) for t in TYPES]
               + [(t, 17, mx.float16, None) for t in TYPES]
               + [(t, 5, mx.bfloat16, tiling) for t in (T.Q8_0, T.Q4_K, T.Q6_K)
                  for tiling in METAL_TILINGS])


def metal_blocks(ggml_type: T, rows: int, x_shape: tuple[int, int], dtype: mx.Dtype,
                 tiling: BlocksTiling | None) -> tuple[emulation.MetalKernel, _Launch]:
    """The Metal kernel and launch `KernelLibrary("metal").gemm_blocks` makes."""
    w_shape = (rows, COLS // T_BLOCK[ggml_type][0] * T_BLOCK[ggml_type][1])
    launch = _blocks_launch("metal", ggml_type, w_shape, mx.uint8, x_shape, dtype, tiling)
    return metal_kernel("gemm_blocks", launch, (mx.uint8, dtype)), launch


@pytest.fixture(scope="session")
def metal_blocks_emulator(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/kernel_emulation/run_metal.cpp with the Metal kernel of every `METAL_CASES`."""
    kernels = [metal_blocks(t, 37, (m_rows, COLS), dtype, tiling)[0]
               for t, m_rows, dtype, tiling in METAL_CASES]
    return emulation.build_metal(tmp_path_factory.mktemp("metal_blocks"), kernels)


@pytest.mark.parametrize(("ggml_type", "m_rows", "dtype", "tiling"), METAL_CASES,
                         ids=lambda v: v.name if isinstance(v, T) else str(v))
def test_emulated_metal_product_equals_reference(ggml_type: T, m_rows: int, dtype: mx.Dtype,
                                                 tiling: BlocksTiling | None,
                                                 rng: np.random.Generator,
                                                 metal_blocks_emulator: Path) -> None:
    # the output starts as NaN, the threadgroup arrays as NaN bytes; 37 weight rows (a
    # partial tile of 16), three chunks (the default two simdgroups: one takes two, the
    # other one)
    m = matrix(ggml_type, rng, cols=COLS, rows=37)
    x = rows_of(rng, m_rows, COLS, dtype)
    kernel, launch = metal_blocks(ggml_type, 37, (m_rows, COLS), dtype, tiling)
    got = emulation.run_metal(metal_blocks_emulator, kernel,
                              [(m.buffer, 0, tuple(m.raw.shape)),
                               (np.array(x.view(mx.uint8)), 0, tuple(x.shape))],
                              launch.grid, launch.threadgroup, launch.shape)
    assert got.dtype == dtype and got.shape == (m_rows, 37)
    y = as_float64(got)
    assert np.isfinite(y).all()
    assert within_bound(y, x, m)


def test_metal_source_keeps_address_spaces_apart(tmp_path: Path) -> None:
    # as test_quant_kernels' check of the other Metal kernels: a pointer that changes address
    # space compiles here but not on Metal
    kernels = [metal_blocks(t, 37, (m_rows, COLS), dtype, tiling)[0]
               for t, m_rows, dtype, tiling in METAL_CASES[:2]]
    errors = emulation.metal_address_space_errors(tmp_path, kernels)
    assert errors == {"threadgroup": "", "device": ""}, "\n".join(errors.values())


@pytest.mark.gpu
@pytest.mark.parametrize("m_rows", [2, 3, 8, 16])
@pytest.mark.parametrize("dtype", HALF, ids=["bf16", "f16"])
@pytest.mark.parametrize("ggml_type", TYPES, ids=lambda t: t.name)
def test_product_on_the_gpu(ggml_type: T, dtype: mx.Dtype, m_rows: int,
                            rng: np.random.Generator) -> None:
    backend = gpu_backend()  # CUDA's kernel, or Metal's twin on an Apple GPU
    assert backend is not None
    m = matrix(ggml_type, rng, cols=5 * BLOCKS_CHUNK, rows=301)
    x = rows_of(rng, m_rows, 5 * BLOCKS_CHUNK, dtype)
    got = library(backend).gemm_blocks(x, m.raw, ggml_type, init_value=NAN)
    assert got.dtype == dtype and got.shape == (m_rows, 301)
    y = as_float64(got)
    assert np.isfinite(y).all()
    assert within_bound(y, x, m)


@pytest.mark.gpu
@pytest.mark.parametrize("ggml_type", [T.Q8_0, T.Q4_K, T.Q6_K], ids=lambda t: t.name)
@pytest.mark.parametrize("m_rows", [2, 4, 9, 16])
@pytest.mark.parametrize("cols", [4096, 5120])
def test_gguf_matmul_on_the_gpu(cols: int, m_rows: int, ggml_type: T,
                                rng: np.random.Generator) -> None:
    # `gguf_matmul` sends these rows of the file's blocks to gemm_blocks (test_selection) at
    # its default tiling (8 k-warps, one stage: over 16 or 20 chunks here), up to INT8_ROWS
    # to gemv_int8 (x rounded to int8: test_quant_kernels' bound); an unaligned buffer too
    # (the blocks one row in: rows off 16-byte words)
    m = matrix(ggml_type, rng, cols=cols, rows=200, skip=1)
    x = rows_of(rng, m_rows, cols, mx.bfloat16)
    y = as_float64(gguf_matmul(x, m.raw, ggml_type))
    assert y.shape == (m_rows, 200) and np.isfinite(y).all()
    if m_rows > int8_rows(ggml_type, (200, cols)):
        assert within_bound(y, x, m)
    else:
        assert within_int8_bound(y, x, m)


def test_selection() -> None:
    # the file's blocks of every kernel format on CUDA, BLOCKS_ROWS rows of a half type, rows
    # of whole chunks; two rows only for BLOCKS_TWO_ROWS, one never (the float kernel or
    # gemv_int8 keep them); packed Q4_0 is gemm_packed's
    lo, hi = BLOCKS_ROWS
    assert lo == 3 and {T.Q2_K, T.Q4_K, T.Q5_K, T.Q6_K} == BLOCKS_TWO_ROWS
    for ggml_type in TYPES:
        assert blocks_applies("cuda", ggml_type, False, (lo, 4096), mx.bfloat16)
        two = blocks_applies("cuda", ggml_type, False, (2, 4096), mx.bfloat16)
        assert two == (ggml_type in BLOCKS_TWO_ROWS)
        assert not blocks_applies("cuda", ggml_type, False, (1, 4096), mx.bfloat16)
        assert blocks_applies("cuda", ggml_type, False, (hi, 4096), mx.float16)
    assert not blocks_applies("cuda", T.Q4_K, False, (hi + 1, 4096), mx.bfloat16)
    assert not blocks_applies("cuda", T.Q4_K, False, (8, 4096), mx.float32)
    assert not blocks_applies("cuda", T.Q8_0, False, (8, 32 * 97), mx.bfloat16)
    assert not blocks_applies("cuda", T.Q4_0, True, (8, 4096), mx.bfloat16)
    assert gemm_applies("cuda", T.Q4_0, True, (8, 4096), mx.bfloat16)
    assert blocks_applies("metal", T.Q4_K, False, (8, 4096), mx.bfloat16)
    assert blocks_applies("metal", T.Q4_0, False, (4, 4096), mx.float16)  # Metal keeps Q4_0
    assert not blocks_applies("cuda", T.F16, False, (8, 4096), mx.bfloat16)


def test_launch_refuses_what_it_cannot_compute() -> None:
    # errors name the parameter and what was expected (planned without a GPU)
    good = (T.Q4_K, (37, 144 * 3), mx.uint8, (3, 768), mx.bfloat16, None)
    launch = _blocks_launch("cuda", *good)
    assert launch.shape == (3, 37) and launch.grid == (3 * 256, 1, 1)  # 3 CTAs of 8 warps
    assert ("MT", 8) in launch.template and ("GGML_TYPE", int(T.Q4_K)) in launch.template
    assert _blocks_launch("cuda", *good[:3], (17, 768), mx.float16, None).grid == (6 * 256, 1, 1)
    metal = _blocks_launch("metal", *good)  # two simdgroups, one stage: 32 KiB
    assert metal.grid == (3 * 64, 1, 1) and ("WK", 2) in metal.template
    with pytest.raises(ValueError, match=r"on metal needs k_warps \* stages <= 2 and rows <= 32"):
        _blocks_launch("metal", *good[:5], BlocksTiling(k_warps=2, stages=2))
    with pytest.raises(ValueError, match="rows <= 32"):
        _blocks_launch("metal", *good[:5], BlocksTiling(k_warps=1, stages=1, rows=40))
    with pytest.raises(ValueError, match=r"raw must be uint8 \[rows, blocks \* 144\] for Q4_K"):
        _blocks_launch("cuda", T.Q4_K, (37, 150), *good[2:])
    with pytest.raises(ValueError, match=r"x must be \[M, 768\] bfloat16 or float16"):
        _blocks_launch("cuda", *good[:3], (3, 768), mx.float32, None)
    with pytest.raises(ValueError, match="multiple of 256 columns; got 160"):
        _blocks_launch("cuda", T.Q8_0, (4, 34 * 5), mx.uint8, (3, 160), mx.bfloat16, None)
    with pytest.raises(ValueError, match=r"k_warps \* stages <= 8"):
        _blocks_launch("cuda", *good[:5], BlocksTiling(k_warps=4, stages=3))


def test_default_tiling_follows_the_kernel_table() -> None:
    # session 44's table (default_blocks_tiling's docstring): 8 k-warps and one stage on CUDA,
    # two simdgroups on Metal; one x tile up to 8 rows, two above
    assert default_blocks_tiling(3) == BlocksTiling(k_warps=8, stages=1, rows=8)
    assert default_blocks_tiling(8) == BlocksTiling(k_warps=8, stages=1, rows=8)
    assert default_blocks_tiling(9) == BlocksTiling(k_warps=8, stages=1, rows=16)
    assert default_blocks_tiling(16, "metal") == BlocksTiling(k_warps=2, stages=1, rows=16)
    launch = _blocks_launch("cuda", T.Q8_0, (4096, 14336 // 32 * 34), mx.uint8, (8, 14336),
                            mx.bfloat16, None)
    assert launch.grid == (256 * 256, 1, 1) and launch.threadgroup == (256, 1, 1)
