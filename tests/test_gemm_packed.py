"""A few activation rows times repacked Q4_0 on the tensor cores (cuda/gemm_packed.cuh), on
fresh random blocks and rows every run, against float64 arithmetic on the weights as the kernel
multiplies them: each one rounded once to x's dtype, as the dequantizing kernel writes it.

Paths: ``emulated_cuda`` (the CUDA source compiled for the CPU, the mma's fragments gathered
across the emulated lanes, NaN-filled output) and the H200 (marked ``gpu``, the library's
launch on a NaN-poisoned output, and `gguf_matmul`, which picks the kernel). Shapes are awkward
on purpose: weight rows not a multiple of a warp's 8 or a CTA's 32; activation rows of 2, 3,
17 and 33 (partial tiles of 16) and 65 (a second CTA row of 64); rows of one super-block and
of three (a last round of weight words not a whole AHEAD).
"""

from __future__ import annotations

from pathlib import Path

import mlx.core as mx
import numpy as np
import pytest
from gguf import GGMLQuantizationType as T

from tests import emulation
from tests.test_quant_kernels import (
    GLU,
    KERNELS,
    Matrix,
    glu_bound,
    matrix,
    within_int8_bound,
)
from vexel_core.quant.kernels import gguf_matmul, gpu_backend, library
from vexel_core.quant.kernels.library import (
    GATED_ACTS,
    GEMM_ROWS,
    GemmTiling,
    _gemm_launch,
    default_gemm_tiling,
    gemm_applies,
    int8_rows,
)
from vexel_core.quant.kernels.packed import pack_q4_0

NAN = float("nan")
HALF = [mx.bfloat16, mx.float16]
# (row warps, k warps, row tiles, activation rows, rounds ahead): run_gemm.cpp's list
EMULATED_TILINGS = [(1, 4, 1, 8, 4), (1, 4, 1, 16, 4), (1, 4, 2, 16, 4), (1, 8, 2, 8, 4),
                    (1, 8, 2, 16, 4), (2, 4, 1, 16, 4), (4, 2, 2, 16, 3), (1, 1, 1, 32, 4),
                    (1, 3, 2, 16, 2)]


@pytest.fixture(scope="session")
def gemm_emulator(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/kernel_emulation/run_gemm.cpp built against the kernel sources."""
    return emulation.build(tmp_path_factory.mktemp("gemm"), "run_gemm.cpp",
                           [KERNELS / "cuda", KERNELS / "common"])


def rows_of(rng: np.random.Generator, m: int, cols: int, dtype: mx.Dtype) -> mx.array:
    return mx.array(rng.normal(size=(m, cols)).astype(np.float32)).astype(dtype)


def as_float64(a: mx.array) -> np.ndarray:
    return np.array(a.astype(mx.float32)).astype(np.float64)


def within_bound(y: np.ndarray, x: mx.array, m: Matrix) -> bool:
    """Whether *y* is ``x @ W.T`` for W's values rounded once to x's dtype (as the kernel and
    `dequantize` round them), up to the float32 sums and y's own rounding to x's dtype. The
    tensor cores add in float32 but need not round each addition to nearest (truncation is
    allowed): four float32 ulps a term, K * 2^-22 * sum |x_j w_j|, where `float32_bound`
    allows one. y's rounding: half an ulp of bfloat16 (2^-8) or float16 (2^-11)."""
    xf = as_float64(x)
    w = as_float64(mx.array(m.values.astype(np.float32)).astype(x.dtype))
    exact = xf @ w.T
    sums = xf.shape[1] * 2.0**-22 * (np.abs(xf) @ np.abs(w).T)
    rounding = (2.0**-8 if x.dtype == mx.bfloat16 else 2.0**-11) * np.abs(exact)
    return bool((np.abs(y - exact) <= sums + rounding + 1e-30).all())


def emulated_gemm(binary: Path, x: mx.array, m: Matrix, tiling: tuple[int, ...],
                  act: str | None = None) -> np.ndarray:
    """The kernel in the emulation: y ``[M, N]`` (gated: ``[M, N / 2]``) as float64."""
    assert m.skip == 0
    bf16 = x.dtype == mx.bfloat16
    args = [*tiling, GATED_ACTS[act] if act else 0, int(bf16), m.rows,
            pack_q4_0(m.buffer).shape[1], x.shape[0]]
    out = emulation.run(binary, args, pack_q4_0(m.buffer).tobytes()
                        + np.array(x.view(mx.uint16)).tobytes())
    outs = m.rows // 2 if act else m.rows
    y = mx.array(np.frombuffer(out, np.uint16)).view(x.dtype).reshape(x.shape[0], outs)
    return as_float64(y)


def within_glu_bound(y: np.ndarray, x: mx.array, m: Matrix, act: str) -> bool:
    """Whether *y* is ``act(g) * u`` for ``[g, u] = x @ W.T`` (gate rows, then up rows) within
    `glu_bound`, g and u summed as `within_bound` allows (the weights rounded to x's dtype)."""
    xf = as_float64(x)
    w = as_float64(mx.array(m.values.astype(np.float32)).astype(x.dtype))
    half = w.shape[0] // 2
    wg, wu = w[:half], w[half:]
    g, u = xf @ wg.T, xf @ wu.T
    sums = [xf.shape[1] * 2.0**-22 * (np.abs(xf) @ np.abs(v).T) for v in (wg, wu)]
    bound = glu_bound(g, u, sums[0], sums[1], act, x.dtype)
    return bool((np.abs(y - GLU[act](g) * u) <= bound + 1e-30).all())


@pytest.mark.parametrize("tiling", EMULATED_TILINGS, ids=lambda t: "/".join(map(str, t)))
@pytest.mark.parametrize(("m_rows", "cols"), [(3, 3072), (17, 1024), (33, 1024)])
@pytest.mark.parametrize("dtype", HALF, ids=["bf16", "f16"])
def test_emulated_product_equals_reference(dtype: mx.Dtype, m_rows: int, cols: int,
                                           tiling: tuple[int, ...],
                                           rng: np.random.Generator,
                                           gemm_emulator: Path) -> None:
    # 37 weight rows: a partial tile of 8 and a partial CTA; every element written (the output
    # starts as NaN) and within the bound
    m = matrix(T.Q4_0, rng, cols=cols, rows=37)
    x = rows_of(rng, m_rows, cols, dtype)
    y = emulated_gemm(gemm_emulator, x, m, tiling)
    assert np.isfinite(y).all()
    assert within_bound(y, x, m)


@pytest.mark.parametrize("act", sorted(GATED_ACTS))
@pytest.mark.parametrize("tiling", [(1, 4, 1, 16, 4), (4, 2, 2, 16, 3)],
                         ids=lambda t: "/".join(map(str, t)))
def test_emulated_gated_product(act: str, tiling: tuple[int, ...], rng: np.random.Generator,
                                gemm_emulator: Path) -> None:
    # act(g) * u for 19 pairs (gate rows 0-18, up rows 19-37: a partial tile of 16, each
    # tile's up rows 19 further) on 5 rows, within glu_bound
    m = matrix(T.Q4_0, rng, cols=2048, rows=38)
    x = rows_of(rng, 5, 2048, mx.bfloat16)
    y = emulated_gemm(gemm_emulator, x, m, tiling, act)
    assert y.shape == (5, 19) and np.isfinite(y).all()
    assert within_glu_bound(y, x, m, act)


def test_emulated_product_notices_a_wrong_weight(rng: np.random.Generator,
                                                 gemm_emulator: Path) -> None:
    # the bound is tight enough to see one weight off by one step of its block's scale d, in
    # the row's block of largest |d| (~0.1 for these random scales) where x's value is 16: an
    # error of ~1.6 against a bound of ~0.1 (1,024 terms of ~0.13 times 2^-22 * 1,024, plus
    # bfloat16's rounding of sums of ~10)
    m = matrix(T.Q4_0, rng, cols=1024, rows=8)
    scales = np.ascontiguousarray(m.buffer[3].reshape(-1, 18)[:, :2]).view(np.float16)
    block = int(np.abs(scales.astype(np.float32)).argmax())
    xs = rng.normal(size=(2, 1024)).astype(np.float32)
    xs[:, 32 * block + 5] = 16.0
    x = mx.array(xs).astype(mx.bfloat16)
    y = emulated_gemm(gemm_emulator, x, m, (1, 4, 1, 16, 4))
    buffer = m.buffer.copy()
    buffer[3, 18 * block + 2 + 5] ^= 0x01  # that block's element 5: one step of d
    wrong = Matrix(buffer, 0, T.Q4_0, m.values)
    assert not within_bound(emulated_gemm(gemm_emulator, x, wrong, (1, 4, 1, 16, 4)), x, m)
    assert within_bound(y, x, m)


@pytest.mark.gpu
@pytest.mark.parametrize("tiling", [None, GemmTiling(row_warps=1, k_warps=3, row_tiles=2,
                                                    rows=32, ahead=3)],
                         ids=["default", "1x3warps-2tiles-32-3"])
@pytest.mark.parametrize("cols", [1024, 5120])
@pytest.mark.parametrize("m_rows", [2, 3, 8, 16, 17, 33, 64, 65])
@pytest.mark.parametrize("dtype", HALF, ids=["bf16", "f16"])
def test_product_on_the_gpu(dtype: mx.Dtype, m_rows: int, cols: int, tiling: GemmTiling | None,
                            rng: np.random.Generator) -> None:
    if gpu_backend() != "cuda":
        pytest.skip("gemm_packed is a CUDA kernel")
    m = matrix(T.Q4_0, rng, cols=cols, rows=301)
    x = rows_of(rng, m_rows, cols, dtype)
    got = library("cuda").gemm_packed(x, mx.array(pack_q4_0(m.buffer)), tiling=tiling,
                                      init_value=NAN)
    assert got.dtype == dtype and got.shape == (m_rows, 301)
    y = as_float64(got)
    assert np.isfinite(y).all()
    assert within_bound(y, x, m)


@pytest.mark.gpu
@pytest.mark.parametrize("act", sorted(GATED_ACTS))
@pytest.mark.parametrize("m_rows", [2, 3, 16, 33])
@pytest.mark.parametrize("dtype", HALF, ids=["bf16", "f16"])
def test_gated_product_on_the_gpu(dtype: mx.Dtype, m_rows: int, act: str,
                                  rng: np.random.Generator) -> None:
    if gpu_backend() != "cuda":
        pytest.skip("gemm_packed is a CUDA kernel")
    m = matrix(T.Q4_0, rng, cols=3072, rows=2 * 101)
    x = rows_of(rng, m_rows, 3072, dtype)
    got = library("cuda").gemm_packed(x, mx.array(pack_q4_0(m.buffer)), act=act,
                                      init_value=NAN)
    assert got.dtype == dtype and got.shape == (m_rows, 101)
    y = as_float64(got)
    assert np.isfinite(y).all()
    assert within_glu_bound(y, x, m, act)


@pytest.mark.gpu
@pytest.mark.parametrize("m_rows", [1, 2, 3, 16, 17, 65])
def test_gguf_matmul_on_the_gpu(m_rows: int, rng: np.random.Generator) -> None:
    # whichever kernel `gguf_matmul` picks for these rows (gemv_int8 up to INT8_ROWS, then
    # gemm_packed for GEMM_ROWS), the product of packed Q4_0 is the reference's within its
    # bound: gemv_int8's on x rounded to int8 (test_quant_kernels' bound: float32 sums on x as
    # rounded, then bf16's rounding); from 17 the weights are dequantized to x's dtype, as
    # gemm_packed rounds them, for MLX's matmul (float32 sums: within_bound, as gemm_packed's)
    if gpu_backend() != "cuda":
        pytest.skip("the packed layout is CUDA's")
    m = matrix(T.Q4_0, rng, cols=2048, rows=200)
    x = rows_of(rng, m_rows, 2048, mx.bfloat16)
    y = as_float64(gguf_matmul(x, mx.array(pack_q4_0(m.buffer)), T.Q4_0, packed=True))
    assert y.shape == (m_rows, 200) and np.isfinite(y).all()
    if m_rows > int8_rows(T.Q4_0, (200, 2048)):  # gemm_packed, or the weights dequantized
        assert within_bound(y, x, m)
    else:  # gemv_int8
        assert within_int8_bound(y, x, m)


def test_selection() -> None:
    # packed Q4_0 on CUDA, GEMM_ROWS rows of a half type; nothing else
    lo, hi = GEMM_ROWS
    assert gemm_applies("cuda", T.Q4_0, True, (lo, 4096), mx.bfloat16)
    assert gemm_applies("cuda", T.Q4_0, True, (hi, 4096), mx.float16)
    assert not gemm_applies("cuda", T.Q4_0, True, (lo - 1, 4096), mx.bfloat16)
    assert not gemm_applies("cuda", T.Q4_0, True, (hi + 1, 4096), mx.bfloat16)
    assert not gemm_applies("cuda", T.Q4_0, True, (8, 4096), mx.float32)
    assert not gemm_applies("cuda", T.Q4_0, False, (8, 4096), mx.bfloat16)
    assert not gemm_applies("cuda", T.Q8_0, True, (8, 4096), mx.bfloat16)
    assert not gemm_applies("metal", T.Q4_0, True, (8, 4096), mx.bfloat16)


def test_default_tiling_follows_the_kernel_table() -> None:
    # session 40's table (default_gemm_tiling's docstring): 8 k-warps and two row tiles past
    # 4096 columns; two row tiles above 8 rows where outs / 32 CTAs fill the GPU; one x tile up
    # to 8 rows; the gated mode one row tile
    assert default_gemm_tiling(4096, 14336, 8) == GemmTiling(k_warps=8, row_tiles=2, rows=8)
    assert default_gemm_tiling(4096, 14336, 16) == GemmTiling(k_warps=8, row_tiles=2, rows=16)
    assert default_gemm_tiling(28672, 4096, 8) == GemmTiling(rows=8)
    assert default_gemm_tiling(28672, 4096, 9) == GemmTiling(row_tiles=2, rows=16)
    assert default_gemm_tiling(6144, 4096, 16) == GemmTiling(row_tiles=2, rows=16)
    assert default_gemm_tiling(4096, 4096, 16) == GemmTiling(rows=16)
    assert default_gemm_tiling(14336, 4096, 16, gated=True) == GemmTiling(rows=16)
    launch = _gemm_launch("cuda", (6144, 576 * 4), mx.uint8, (12, 4096), mx.bfloat16, None)
    assert launch.grid == (6144 // 32 * 128, 1, 1)  # 192 CTAs of 1 x 4 warps, two row tiles


def test_launch_refuses_what_it_cannot_compute() -> None:
    # errors name the parameter and what was expected (planned without a GPU)
    good = ((8, 576), mx.uint8, (4, 1024), mx.bfloat16, None)
    launch = _gemm_launch("cuda", *good)
    assert launch.shape == (4, 8) and launch.grid == (128, 1, 1)  # one CTA of 1 x 4 warps
    with pytest.raises(ValueError, match="CUDA kernel"):
        _gemm_launch("metal", *good)
    with pytest.raises(ValueError, match=r"packed must be uint8 \[rows, super-blocks \* 576\]"):
        _gemm_launch("cuda", (8, 576 + 18), *good[1:])
    with pytest.raises(ValueError, match=r"x must be \[M, 1024\] bfloat16 or float16"):
        _gemm_launch("cuda", (8, 576), mx.uint8, (4, 2048), mx.bfloat16, None)
    with pytest.raises(ValueError, match=r"x must be \[M, 1024\] bfloat16 or float16"):
        _gemm_launch("cuda", (8, 576), mx.uint8, (4, 1024), mx.float32, None)
    with pytest.raises(ValueError, match="even number of rows"):
        _gemm_launch("cuda", (7, 576), mx.uint8, (4, 1024), mx.bfloat16, None, "silu")
    assert _gemm_launch("cuda", (16, 576), mx.uint8, (4, 1024), mx.bfloat16, None,
                        "silu").shape == (4, 8)
